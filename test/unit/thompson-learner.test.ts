import {
  COMPLEXITY_HANDLING,
  DIMENSIONS,
  DIMENSION_NAMES,
  ENCOURAGEMENT,
  FRAMINGS,
  STYLES,
  TASK_COMPLEXITY,
  type Choice,
  type Pins,
} from '../../shared/domain/arms';
import { seededRandom } from '../../shared/domain/random';
import { ESTABLISHED_MIN_OUTCOMES, thompsonLearner as learner } from '../../shared/domain/thompson-learner';
import { buildLearnedState } from '../support/learner-state.factory';

const BEST: Choice = { framing: 'curiosity', style: 'warm', complexity: 'scaffolded', encouragement: 'enthusiastic' };
const high = { complexity: 'high' } as const;
const zeros = (n: number) => Array.from({ length: n }, () => [0, 0, 0]);

describe('thompsonLearner.initialState', () => {
  it('has n = 0 and one zeroed [count, rewardSum, started] cell per value, overall and per complexity', () => {
    const state = learner.initialState();
    expect(state.learner).toBe('thompson-v1');
    expect(state.n).toBe(0);
    const expected = {
      framing: zeros(FRAMINGS.length),
      style: zeros(STYLES.length),
      complexity: zeros(COMPLEXITY_HANDLING.length),
      encouragement: zeros(ENCOURAGEMENT.length),
    };
    expect(state.all).toEqual(expected);
    expect(state.byComplexity).toEqual({ low: expected, medium: expected, high: expected });
  });

  it('returns independent objects (no shared cells between calls)', () => {
    const a = learner.initialState();
    a.all.framing[0]![0] = 99;
    expect(learner.initialState().all.framing[0]).toEqual([0, 0, 0]);
  });
});

describe('thompsonLearner.decide', () => {
  it('returns values from the SPEC value sets, and tries every value at cold start', () => {
    const seen = { framing: new Set(), style: new Set(), complexity: new Set(), encouragement: new Set() };
    for (let seed = 0; seed < 120; seed++) {
      const { choice } = learner.decide(learner.initialState(), { complexity: TASK_COMPLEXITY[seed % 3]! }, {}, seededRandom(seed));
      for (const dim of DIMENSION_NAMES) seen[dim].add(choice[dim]);
    }
    for (const dim of DIMENSION_NAMES) expect([...seen[dim]].sort()).toEqual([...DIMENSIONS[dim].values].sort());
  });

  it('is deterministic: same seed and same state give an identical decision', () => {
    const state = buildLearnedState(BEST, { rounds: 2 });
    for (const seed of [1, 2, 3]) {
      expect(learner.decide(state, high, {}, seededRandom(seed))).toEqual(learner.decide(state, high, {}, seededRandom(seed)));
    }
  });

  it('honours every pin with probability 1, never explores it, and is fully confident when all are pinned', () => {
    const pins: Pins = { framing: 'purpose', style: 'direct', complexity: 'whole', encouragement: 'minimal' };
    const state = buildLearnedState(BEST);
    const decision = learner.decide(state, high, pins, seededRandom(1));
    expect(decision.choice).toEqual(pins);
    expect(decision.probabilities).toEqual({ framing: 1, style: 1, complexity: 1, encouragement: 1 });
    expect(decision.explored).toEqual([]);
    expect(decision.confidence).toBe(1);
  });

  it('keeps a partial pin against the learned best and learns the other dimensions', () => {
    const state = buildLearnedState(BEST, { rounds: 2 });
    for (let seed = 0; seed < 40; seed++) {
      const decision = learner.decide(state, high, { framing: 'micro_steps' }, seededRandom(seed));
      expect(decision.choice.framing).toBe('micro_steps');
      expect(decision.probabilities.framing).toBe(1);
      expect(decision.explored).not.toContain('framing');
    }
  });

  it('marks as explored exactly the dimensions whose choice differs from the posterior-mean best', () => {
    // Lightly learned: BEST has the highest posterior mean in every dimension, but sampling
    // still often picks something else.
    const state = buildLearnedState(BEST, { rounds: 2, goodReward: 0.8, badReward: 0.4 });
    let exploring = 0;
    let exploiting = 0;
    for (let seed = 0; seed < 150; seed++) {
      const { choice, explored } = learner.decide(state, high, {}, seededRandom(seed));
      expect([...explored].sort()).toEqual(DIMENSION_NAMES.filter((dim) => choice[dim] !== BEST[dim]).sort());
      if (explored.length > 0) exploring += 1;
      else exploiting += 1;
    }
    expect(exploring).toBeGreaterThan(20);
    expect(exploiting).toBeGreaterThan(20);
  });

  it('rarely explores once a user is strongly learned, and never a pinned dimension', () => {
    const state = buildLearnedState(BEST, { rounds: 30 });
    let explored = 0;
    for (let seed = 0; seed < 100; seed++) {
      const decision = learner.decide(state, high, { style: 'playful' }, seededRandom(seed));
      expect(decision.explored).not.toContain('style');
      if (decision.explored.length > 0) explored += 1;
    }
    expect(explored).toBeLessThan(5);
  });

  it('reports for each chosen value the probability with which it is selected', () => {
    const state = buildLearnedState(BEST, { rounds: 3, goodReward: 0.8, badReward: 0.4 });
    // other dimensions pinned to keep the test fast; framing is decided as usual
    const pins: Pins = { style: 'warm', complexity: 'whole', encouragement: 'minimal' };
    const draws = 1200;
    let picked = 0;
    let reported: number | undefined;
    for (let seed = 0; seed < draws; seed++) {
      const decision = learner.decide(state, high, pins, seededRandom(seed * 7919 + 1));
      if (decision.choice.framing === BEST.framing) {
        picked += 1;
        reported = decision.probabilities.framing;
      }
    }
    expect(reported).toBeDefined();
    expect(Math.abs(picked / draws - reported!)).toBeLessThan(0.035);
  });

  it('gives a confidence in [0,1] that is low at cold start and higher once learned', () => {
    const cold = learner.decide(learner.initialState(), high, {}, seededRandom(1)).confidence;
    // four independent uniform dimensions: 1/5 · 1/4 · 1/3 · 1/3
    expect(cold).toBeCloseTo(1 / 180, 3);
    const learned = buildLearnedState(BEST, { rounds: 30 });
    for (let seed = 0; seed < 50; seed++) {
      const { confidence, explored } = learner.decide(learned, high, {}, seededRandom(seed));
      expect(confidence).toBeGreaterThanOrEqual(0);
      expect(confidence).toBeLessThanOrEqual(1);
      if (explored.length === 0) expect(confidence).toBeGreaterThan(0.5);
    }
  });
});

describe('thompsonLearner.update', () => {
  const choice: Choice = { framing: 'challenge', style: 'structured', complexity: 'whole', encouragement: 'moderate' };

  it('increments n and the chosen cells in `all` and in the context complexity, and nothing else', () => {
    const before = learner.initialState();
    const after = learner.update(before, { complexity: 'medium' }, choice, 0.75, true);
    expect(after.n).toBe(1);
    const expected = learner.initialState();
    for (const dim of DIMENSION_NAMES) {
      const index = (DIMENSIONS[dim].values as readonly string[]).indexOf(choice[dim]);
      expected.all[dim][index] = [1, 0.75, 1];
      expected.byComplexity.medium[dim][index] = [1, 0.75, 1];
    }
    expect(after.all).toEqual(expected.all);
    expect(after.byComplexity).toEqual(expected.byComplexity);
  });

  it('accumulates reward sums and counts only started outcomes as started', () => {
    let state = learner.initialState();
    state = learner.update(state, high, choice, 0.5, true);
    state = learner.update(state, high, choice, 0.25, false);
    state = learner.update(state, { complexity: 'low' }, choice, 1, true);
    const framing = FRAMINGS.indexOf('challenge');
    expect(state.n).toBe(3);
    expect(state.byComplexity.high.framing[framing]).toEqual([2, 0.75, 1]);
    expect(state.byComplexity.low.framing[framing]).toEqual([1, 1, 1]);
    expect(state.all.framing[framing]).toEqual([3, 1.75, 2]);
  });

  it('does not mutate the state it is given', () => {
    const before = learner.initialState();
    const snapshot = structuredClone(before);
    learner.update(before, high, choice, 1, true);
    expect(before).toEqual(snapshot);
  });
});

describe('thompsonLearner.parseState', () => {
  it('returns a valid persisted state unchanged (JSON round trip)', () => {
    const state = buildLearnedState(BEST, { rounds: 2 });
    expect(learner.parseState(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  it.each([
    ['null', null],
    ['a string', 'garbage'],
    ['an empty object', {}],
    ['another learner', { ...learner.initialState(), learner: 'ucb-v1' }],
    ['a negative n', { ...learner.initialState(), n: -1 }],
    ['a missing complexity', { ...learner.initialState(), byComplexity: { low: learner.initialState().all } }],
  ])('turns %s into a fresh initial state', (_label, raw) => {
    expect(learner.parseState(raw)).toEqual(learner.initialState());
  });

  it('rejects a state whose cells do not match the value sets (it would break update)', () => {
    const raw = learner.initialState();
    for (const cells of [raw.all, raw.byComplexity.low, raw.byComplexity.medium, raw.byComplexity.high]) cells.framing.pop();
    const parsed = learner.parseState(raw);
    expect(parsed).toEqual(learner.initialState());
    expect(() => learner.update(parsed, high, { ...BEST, framing: 'curiosity' }, 1, true)).not.toThrow();
  });
});

describe('thompsonLearner.summarize', () => {
  it('is cold_start with no outcome, learning after one', () => {
    const cold = learner.summarize(learner.initialState());
    expect(cold.phase).toBe('cold_start');
    expect(cold.interactionCount).toBe(0);
    const one = learner.summarize(learner.update(learner.initialState(), high, BEST, 1, true));
    expect(one.phase).toBe('learning');
    expect(one.interactionCount).toBe(1);
  });

  it('is established after many consistent outcomes, and names the learned best', () => {
    const state = buildLearnedState(BEST, { rounds: 10 });
    expect(state.n).toBeGreaterThanOrEqual(ESTABLISHED_MIN_OUTCOMES);
    const summary = learner.summarize(state);
    expect(summary.phase).toBe('established');
    expect(summary.best).toEqual(BEST);
    expect(summary.interactionCount).toBe(state.n);
  });

  it('stays learning after many outcomes when no framing stands out', () => {
    let state = learner.initialState();
    for (let i = 0; i < 40; i++) {
      state = learner.update(state, high, { ...BEST, framing: FRAMINGS[i % FRAMINGS.length]! }, 0.5, true);
    }
    expect(learner.summarize(state).phase).toBe('learning');
  });
});
