import type { Dimension } from '../../shared/domain/arms';
import { buildRationale, type Evidence, type ValueEvidence } from '../../shared/domain/rationale';

const NONE: Evidence = { n: 0, started: 0, rewardSum: 0 };
const NO_POPULATION = { n: 0, meanReward: 0.5, total: 0 };
const VALUES: Record<Dimension, string> = { framing: 'curiosity', style: 'warm', complexityHandling: 'chunked', encouragement: 'moderate' };

function buildEvidence(overrides: Partial<Record<Dimension, Partial<ValueEvidence>>> = {}): ValueEvidence[] {
  return (Object.keys(VALUES) as Dimension[]).map((dimension) => ({
    dimension,
    value: VALUES[dimension],
    taskType: null,
    inContext: NONE,
    overall: NONE,
    population: NO_POPULATION,
    pinned: false,
    explored: false,
    ...overrides[dimension],
  }));
}

const evidence = (n: number, started: number, rewardSum: number): Evidence => ({ n, started, rewardSum });

describe('buildRationale: the evidence sentence', () => {
  it('quotes the task type’s evidence first', () => {
    const text = buildRationale(
      buildEvidence({
        framing: { taskType: { name: 'email', evidence: evidence(4, 3, 2.8) }, inContext: evidence(6, 2, 3), overall: evidence(9, 4, 5) },
      }),
      'high',
      9,
    );
    expect(text).toBe(
      'For "email" tasks, tasks framed as curiosity were started in 3 of this user\'s 4 recent cases (average reward 0.70).',
    );
  });

  it('quotes the evidence at this complexity when the task type has too little', () => {
    const text = buildRationale(
      buildEvidence({
        framing: {
          taskType: { name: 'email', evidence: evidence(0.4, 0.4, 0.3) },
          inContext: evidence(4, 3, 2.8),
          overall: evidence(9, 5, 6),
        },
      }),
      'high',
      9,
    );
    expect(text).toBe(
      "Tasks framed as curiosity at high complexity were started in 3 of this user's 4 recent cases (average reward 0.70).",
    );
  });

  it('rounds decayed counts and rates', () => {
    const text = buildRationale(
      buildEvidence({ framing: { inContext: evidence(6.62, 4.1, 3.9), overall: evidence(6.62, 4.1, 3.9) } }),
      'medium',
      12,
    );
    expect(text).toContain("were started in 4 of this user's 7 recent cases (average reward 0.59)");
  });

  it('falls back to other complexities when this one has no recent evidence', () => {
    const text = buildRationale(buildEvidence({ framing: { inContext: evidence(0.3, 0.3, 0.2), overall: evidence(3, 2, 1.5) } }), 'low', 3);
    expect(text).toBe(
      "No recent low-complexity outcomes for tasks framed as curiosity; at other complexities they were started in 2 of this user's 3 recent cases (average reward 0.50).",
    );
  });

  it('at cold start follows the population and quotes its mean reward and outcome count', () => {
    const text = buildRationale(buildEvidence({ framing: { population: { n: 412.6, meanReward: 0.734, total: 412.6 } } }), 'medium', 0);
    expect(text).toBe(
      "No outcomes from this user yet, so this follows the population: among this app's users, tasks framed as curiosity at medium complexity average a reward of 0.73 over 413 outcomes.",
    );
  });

  it('quotes the population for a value this user has not tried recently', () => {
    const text = buildRationale(buildEvidence({ framing: { population: { n: 57, meanReward: 0.41, total: 57 } } }), 'high', 7);
    expect(text).toBe(
      "This user has 7 reported outcomes but none with tasks framed as curiosity recently; among this app's users, tasks framed as curiosity at high complexity average a reward of 0.41 over 57 outcomes.",
    );
  });

  it('says a value is tried first when neither the user nor the population has evidence', () => {
    const cold = buildRationale(buildEvidence({ framing: { population: { n: 0.3, meanReward: 0.9, total: 0.3 } } }), 'high', 0);
    expect(cold).toBe(
      "No outcomes from this user or this app's other users yet, so tasks framed as curiosity are being tried first; recommendations adapt with each reported outcome.",
    );
    // The app's users have outcomes, just not (or hardly) with this value: the text says so.
    expect(buildRationale(buildEvidence({ framing: { population: { n: 0, meanReward: 0, total: 71 } } }), 'medium', 0)).toBe(
      "No outcomes from this user yet, and this app's users have no outcomes with tasks framed as curiosity at medium complexity, so they are being tried; recommendations adapt with each reported outcome.",
    );
    expect(buildRationale(buildEvidence({ framing: { population: { n: 0.3, meanReward: 0.1, total: 71 } } }), 'medium', 0)).toContain(
      "this app's users have few outcomes with tasks framed as curiosity at medium complexity",
    );
    expect(buildRationale(buildEvidence(), 'low', 1)).toBe(
      'This user has 1 reported outcome but none with tasks framed as curiosity recently, so they are being tried.',
    );
    expect(buildRationale(buildEvidence(), 'low', 5)).toContain('This user has 5 reported outcomes but none');
  });

  it('speaks of a single case as “the one recent time”, started or not', () => {
    const started = buildRationale(buildEvidence({ framing: { inContext: evidence(1, 1, 0.8), overall: evidence(1, 1, 0.8) } }), 'high', 1);
    expect(started).toBe('Tasks framed as curiosity at high complexity were started the one recent time this user saw them (reward 0.80).');
    const notStarted = buildRationale(
      buildEvidence({ framing: { inContext: evidence(0.97, 0, 0.1), overall: evidence(0.97, 0, 0.1) } }),
      'high',
      2,
    );
    expect(notStarted).toBe(
      'Tasks framed as curiosity at high complexity were not started the one recent time this user saw them (reward 0.10).',
    );
    const taskType = buildRationale(
      buildEvidence({ framing: { taskType: { name: 'chores', evidence: evidence(1, 1, 0.9) }, inContext: evidence(1, 1, 0.9) } }),
      'low',
      1,
    );
    expect(taskType).toBe(
      'For "chores" tasks, tasks framed as curiosity were started the one recent time this user saw them (reward 0.90).',
    );
  });

  it('names each dimension’s value in its own words', () => {
    const lead = (dimension: Dimension) =>
      buildRationale(
        buildEvidence({
          ...Object.fromEntries((Object.keys(VALUES) as Dimension[]).filter((d) => d !== dimension).map((d) => [d, { pinned: true }])),
          [dimension]: { inContext: evidence(2, 2, 1.6), overall: evidence(2, 2, 1.6) },
        }),
        'low',
        2,
      );
    expect(lead('style')).toMatch(/^Tasks presented in a warm style at low complexity were started/);
    expect(lead('complexityHandling')).toMatch(/^Tasks with chunked handling at low complexity were started/);
    expect(lead('encouragement')).toMatch(/^Tasks with moderate encouragement at low complexity were started/);
  });
});

describe('buildRationale: notes', () => {
  it('leads with the first dimension that is not pinned and notes a single pin', () => {
    const text = buildRationale(
      buildEvidence({
        framing: { pinned: true, value: 'purpose' },
        style: { inContext: evidence(2, 2, 1.8), overall: evidence(2, 2, 1.8) },
      }),
      'high',
      2,
    );
    expect(text).toMatch(
      /^Tasks presented in a warm style at high complexity were started .* 2 of this user's 2 recent cases \(average reward 0\.90\)\./,
    );
    expect(text).toMatch(/ Framing \(purpose\) is pinned by the app\.$/);
  });

  it('lists several pins with a plural verb', () => {
    const text = buildRationale(buildEvidence({ framing: { pinned: true }, encouragement: { pinned: true } }), 'high', 0);
    expect(text).toMatch(/ Framing \(curiosity\), encouragement \(moderate\) are pinned by the app\.$/);
  });

  it('notes what is explored and how often it was tried here', () => {
    const text = buildRationale(
      buildEvidence({
        framing: { explored: true, inContext: evidence(3.2, 1, 1.2), overall: evidence(3.2, 1, 1.2) },
        style: { explored: true, overall: evidence(2, 1, 1) },
        encouragement: { explored: true, inContext: evidence(1.1, 1, 0.7), overall: evidence(1.1, 1, 0.7) },
      }),
      'high',
      6,
    );
    expect(text).toMatch(
      / Exploring framing curiosity \(tried 3 times recently here\), communication style warm \(not tried recently at this complexity\), encouragement moderate \(tried once recently here\) to learn more\.$/,
    );
  });

  it('joins a pinned and an exploring note in one sentence', () => {
    const text = buildRationale(buildEvidence({ framing: { pinned: true }, style: { explored: true } }), 'medium', 4);
    expect(text).toMatch(
      / Framing \(curiosity\) is pinned by the app; exploring communication style warm \(not tried recently at this complexity\) to learn more\.$/,
    );
  });

  it('says when every dimension is pinned, then gives the framing’s evidence if there is any', () => {
    const all = (extra: Partial<ValueEvidence> = {}) =>
      buildEvidence({
        framing: { pinned: true, ...extra },
        style: { pinned: true },
        complexityHandling: { pinned: true },
        encouragement: { pinned: true },
      });
    const list =
      'Every dimension is pinned by the app: framing (curiosity), communication style (warm), complexity handling (chunked), encouragement (moderate).';
    expect(buildRationale(all(), 'low', 0)).toBe(list);
    expect(buildRationale(all({ population: { n: 100, meanReward: 0.6, total: 100 } }), 'low', 0)).toBe(list);
    expect(buildRationale(all({ inContext: evidence(1, 1, 1), overall: evidence(1, 1, 1) }), 'low', 1)).toBe(
      `${list} Tasks framed as curiosity at low complexity were started the one recent time this user saw them (reward 1.00).`,
    );
    expect(buildRationale(all({ overall: evidence(5, 4, 3.5) }), 'low', 5)).toBe(
      `${list} No recent low-complexity outcomes for tasks framed as curiosity; at other complexities they were started in 4 of this user's 5 recent cases (average reward 0.70).`,
    );
  });
});

describe('buildRationale: never a fixed string', () => {
  it('gives different texts for different evidence', () => {
    const cases: Array<[Partial<ValueEvidence>, 'low' | 'medium' | 'high', number]> = [
      [{}, 'low', 0],
      [{}, 'low', 3],
      [{ population: { n: 40, meanReward: 0.6, total: 40 } }, 'low', 0],
      [{ population: { n: 41, meanReward: 0.6, total: 41 } }, 'low', 0],
      [{ population: { n: 40, meanReward: 0.62, total: 40 } }, 'low', 0],
      [{ population: { n: 40, meanReward: 0.6, total: 40 } }, 'high', 0],
      [{ value: 'purpose', population: { n: 40, meanReward: 0.6, total: 40 } }, 'low', 0],
      [{ inContext: evidence(4, 3, 2.8), overall: evidence(4, 3, 2.8) }, 'low', 4],
      [{ inContext: evidence(4, 2, 2.8), overall: evidence(4, 2, 2.8) }, 'low', 4],
      [{ inContext: evidence(4, 3, 2.4), overall: evidence(4, 3, 2.4) }, 'low', 4],
      [{ inContext: evidence(5, 3, 2.8), overall: evidence(5, 3, 2.8) }, 'low', 5],
      [{ overall: evidence(4, 3, 2.8) }, 'low', 4],
      [{ taskType: { name: 'email', evidence: evidence(4, 3, 2.8) }, inContext: evidence(4, 3, 2.8) }, 'low', 4],
      [{ taskType: { name: 'report', evidence: evidence(4, 3, 2.8) }, inContext: evidence(4, 3, 2.8) }, 'low', 4],
    ];
    const texts = cases.map(([framing, complexity, count]) => buildRationale(buildEvidence({ framing }), complexity, count));
    expect(new Set(texts).size).toBe(cases.length);
  });
});

describe('buildRationale: grouped exploration note', () => {
  const ev = (n: number) => ({ n, started: n, rewardSum: n * 0.8 });
  const item = (dimension: Dimension, value: string, n: number, explored: boolean): ValueEvidence => ({
    dimension,
    value,
    taskType: null,
    inContext: ev(n),
    overall: ev(n),
    population: { n: 0, meanReward: 0.5, total: 0 },
    pinned: false,
    explored,
  });

  it('says once that none of several explored values was tried here', () => {
    const text = buildRationale(
      [
        item('framing', 'curiosity', 3, false),
        item('style', 'warm', 0, true),
        item('complexityHandling', 'whole', 0, true),
        item('encouragement', 'minimal', 0, false),
      ],
      'high',
      5,
    );
    expect(text).toMatch(
      /Exploring communication style warm, complexity handling whole \(none tried recently at this complexity\) to learn more\.$/,
    );
  });

  it('gives each explored value its own count when they differ', () => {
    const text = buildRationale(
      [
        item('framing', 'curiosity', 3, false),
        item('style', 'warm', 2, true),
        item('complexityHandling', 'whole', 0, true),
        item('encouragement', 'minimal', 0, false),
      ],
      'high',
      5,
    );
    expect(text).toContain(
      'communication style warm (tried 2 times recently here), complexity handling whole (not tried recently at this complexity)',
    );
  });
});

describe('buildRationale: a request without complexity', () => {
  it('says no complexity was given and quotes all of the user’s outcomes', () => {
    const text = buildRationale(buildEvidence({ framing: { inContext: evidence(5, 4, 3.5), overall: evidence(5, 4, 3.5) } }), undefined, 5);
    expect(text).toBe(
      "No complexity was given, so all of this user's outcomes count: tasks framed as curiosity were started in 4 of this user's 5 recent cases (average reward 0.70).",
    );
  });

  it('quotes the population at any complexity', () => {
    expect(buildRationale(buildEvidence({ framing: { population: { n: 412.6, meanReward: 0.734, total: 900 } } }), undefined, 0)).toBe(
      "No outcomes from this user yet, so this follows the population: among this app's users, tasks framed as curiosity at any complexity average a reward of 0.73 over 413 outcomes.",
    );
    expect(buildRationale(buildEvidence({ framing: { population: { n: 0, meanReward: 0, total: 71 } } }), undefined, 0)).toContain(
      "this app's users have no outcomes with tasks framed as curiosity at any complexity, so they are being tried",
    );
  });

  it('notes an untried explored value without speaking of a complexity', () => {
    const text = buildRationale(buildEvidence({ style: { explored: true } }), undefined, 2);
    expect(text).toContain('Exploring communication style warm (not tried recently) to learn more.');
    expect(text).not.toContain('undefined');
  });
});
