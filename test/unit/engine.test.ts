import {
  DIMENSIONS,
  DIMENSION_NAMES,
  FRAMINGS,
  TASK_COMPLEXITY,
  type Choice,
  type Dimension,
  type Pins,
  type TaskComplexity,
} from '../../shared/domain/arms';
import { createEngine, readEngineState, sharpness } from '../../shared/domain/engine/engine';
import { ESTABLISHED_MIN_OUTCOMES } from '../../shared/domain/engine/summary';
import { FIRST_OUTCOME_WEIGHT } from '../../shared/domain/engine/inference';
import { DIMENSION_OFFSET, cellIndex, complexityIndex } from '../../shared/domain/engine/layout';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import {
  DECAY,
  HISTORY_LENGTH,
  MAX_TASK_TYPES,
  engineStateSchema,
  historyFrom,
  historyLength,
  outcomeAt,
  type EngineState,
} from '../../shared/domain/engine/state';
import type { DecisionContext } from '../../shared/domain/learner';
import { trainedTenant } from '../../scripts/bench/tenant';
import { seededRandom, standardNormal } from '../../shared/domain/random';
import { inferenceOf } from '../support/engine';

const engine = createEngine();
const EMPTY = engine.emptyPrior();
const OTHERS_PINNED: Pins = { style: 'warm', complexityHandling: 'chunked', encouragement: 'moderate' };
const choice = (framing: Choice['framing'], rest: Partial<Choice> = {}): Choice => ({
  framing,
  style: 'warm',
  complexityHandling: 'chunked',
  encouragement: 'moderate',
  ...rest,
});
const olderWeight = (state: EngineState) => state.older.weight.reduce((s, x) => s + x, 0);

/** Applies outcomes of fixed choices through engine.update. */
function withOutcomes(state: EngineState, items: Array<[DecisionContext, Choice, number]>, prior = EMPTY): EngineState {
  return items.reduce((s, [context, c, reward]) => engine.update(s, { context, choice: c, reward, started: reward > 0.5 }, prior), state);
}

/** A simulated user driven by the engine: decide, reward, update. Returns the state and the framings chosen. */
function run(
  steps: number,
  context: (i: number) => DecisionContext,
  reward: (c: Choice, i: number) => number,
  seed: number,
  prior = EMPTY,
) {
  const random = seededRandom(seed);
  let state = engine.initialState(prior);
  const framings: string[] = [];
  for (let i = 0; i < steps; i++) {
    const decision = engine.decide(state, { context: context(i), pins: {}, random }, prior);
    framings.push(decision.choice.framing);
    const r = reward(decision.choice, i);
    state = engine.update(state, { context: context(i), choice: decision.choice, reward: r, started: r > 0.5 }, prior);
  }
  return { state, framings };
}

/** A user at 'high' with some evidence: purpose looks best, curiosity was tried once, two framings never. */
function trainedState(): EngineState {
  const high: DecisionContext = { taskComplexity: 'high' };
  return withOutcomes(engine.initialState(EMPTY), [
    [high, choice('purpose', { style: 'structured' }), 0.8],
    [high, choice('micro_steps', { style: 'direct', encouragement: 'minimal' }), 0.2],
    [high, choice('purpose', { style: 'structured', complexityHandling: 'whole' }), 0.85],
    [high, choice('curiosity', { style: 'playful' }), 0.75],
    [high, choice('purpose', { style: 'structured' }), 0.7],
    [high, choice('micro_steps', { complexityHandling: 'scaffolded' }), 0.3],
    [high, choice('purpose', { style: 'warm', encouragement: 'enthusiastic' }), 0.8],
  ]);
}

/** A population prior built as the worker builds it (users preferring one framing at one complexity, with noise). */
const trainedPopulation = (
  prefers: Choice['framing'],
  complexity: TaskComplexity,
  users: number,
  steps: number,
  seed: number,
): CompiledPopulation =>
  trainedTenant(
    seededRandom(seed),
    users,
    steps,
    () => ({ taskComplexity: complexity }),
    (shown, random) => (shown.framing === prefers ? 0.8 : 0.3) + 0.1 * (random() - 0.5),
  );

describe('engine.decide', () => {
  const state = trainedState();
  const high: DecisionContext = { taskComplexity: 'high' };

  it('is deterministic given the seed; different seeds can choose differently', () => {
    for (const context of [high, { taskComplexity: 'low' as const, taskType: 'email' }]) {
      for (const pins of [{}, { style: 'warm' as const }]) {
        const a = engine.decide(state, { context, pins, random: seededRandom(42) }, EMPTY);
        const b = engine.decide(structuredClone(state), { context, pins, random: seededRandom(42) }, EMPTY);
        expect(b).toEqual(a);
      }
    }
    const choices = new Set(
      Array.from({ length: 40 }, (_, seed) =>
        JSON.stringify(engine.decide(state, { context: high, pins: {}, random: seededRandom(seed) }, EMPTY).choice),
      ),
    );
    expect(choices.size).toBeGreaterThan(1);
  });

  it('returns values of each dimension’s set, probabilities in (0, 1] and confidence in [0, 1]', () => {
    for (const s of [engine.initialState(EMPTY), state]) {
      for (let seed = 0; seed < 30; seed++) {
        const d = engine.decide(
          s,
          { context: { taskComplexity: TASK_COMPLEXITY[seed % 3]! }, pins: {}, random: seededRandom(seed) },
          EMPTY,
        );
        for (const dim of DIMENSION_NAMES) {
          expect(DIMENSIONS[dim].values).toContain(d.choice[dim]);
          expect(d.probabilities[dim]).toBeGreaterThan(0);
          expect(d.probabilities[dim]).toBeLessThanOrEqual(1);
        }
        expect(d.confidence).toBeGreaterThanOrEqual(0);
        expect(d.confidence).toBeLessThanOrEqual(1);
        expect(d.rationale.length).toBeGreaterThan(20);
      }
    }
  });

  it('returns pinned values with probability 1, never explored, and says they are pinned', () => {
    const pins: Pins = { framing: 'challenge', encouragement: 'minimal' };
    for (let seed = 0; seed < 40; seed++) {
      const d = engine.decide(state, { context: high, pins, random: seededRandom(seed) }, EMPTY);
      expect(d.choice.framing).toBe('challenge');
      expect(d.choice.encouragement).toBe('minimal');
      expect(d.probabilities.framing).toBe(1);
      expect(d.probabilities.encouragement).toBe(1);
      expect(d.explored).not.toContain('framing');
      expect(d.explored).not.toContain('encouragement');
      expect(d.rationale).toContain('Framing (challenge), encouragement (minimal) are pinned by the app');
    }
    const all = engine.decide(state, { context: high, pins: { ...OTHERS_PINNED, framing: 'purpose' }, random: seededRandom(1) }, EMPTY);
    expect(all.confidence).toBe(1);
    expect(all.explored).toEqual([]);
    expect(all.rationale).toMatch(/^Every dimension is pinned by the app/);
  });

  it('marks a dimension explored exactly when its choice is not the most probable favourite, which does not depend on the seed', () => {
    const best = {} as Record<Dimension, Set<string>>;
    const explored = {} as Record<Dimension, Set<string>>;
    for (const dim of DIMENSION_NAMES) {
      best[dim] = new Set();
      explored[dim] = new Set();
    }
    for (let seed = 0; seed < 300; seed++) {
      const d = engine.decide(state, { context: high, pins: {}, random: seededRandom(seed) }, EMPTY);
      for (const dim of DIMENSION_NAMES) (d.explored.includes(dim) ? explored : best)[dim].add(d.choice[dim]);
    }
    for (const dim of DIMENSION_NAMES) {
      expect(best[dim].size).toBe(1); // one seed-independent best per dimension…
      for (const value of best[dim]) expect(explored[dim].has(value)).toBe(false); // …and exploring means choosing another
    }
    expect(explored.framing.size).toBeGreaterThan(0); // the check is not vacuous
    expect([...best.framing]).toEqual([engine.summarize(state).best.framing]);
    expect([...best.framing]).toEqual(['purpose']);
  });

  it('logs each value’s selection probability: it matches how often the value is chosen (1,200 seeds)', () => {
    const counts = new Map<string, number>();
    const logged = new Map<string, number>();
    const draws = 1200;
    for (let seed = 0; seed < draws; seed++) {
      const d = engine.decide(state, { context: high, pins: OTHERS_PINNED, random: seededRandom(seed * 7919 + 1) }, EMPTY);
      counts.set(d.choice.framing, (counts.get(d.choice.framing) ?? 0) + 1);
      if (logged.has(d.choice.framing)) expect(d.probabilities.framing).toBe(logged.get(d.choice.framing));
      logged.set(d.choice.framing, d.probabilities.framing);
    }
    expect(counts.size).toBeGreaterThan(1);
    for (const [framing, count] of counts) expect(Math.abs(count / draws - logged.get(framing)!)).toBeLessThan(0.04);
  });

  it('chooses more sharply as the user’s evidence grows: κ = 4 up to 20 outcomes, 6 from 40, linear between', () => {
    expect([0, 20, 30, 40, 64].map(sharpness)).toEqual([4, 4, 5, 6, 6]);
    // The logged probability of the framing chosen is P^κ / Σ P^κ over the user's beliefs at 'high'.
    const logged = (s: EngineState, kappa: number) => {
      const beliefs = inferenceOf(s, EMPTY).beliefs;
      const first = cellIndex(complexityIndex('high'), DIMENSION_OFFSET.framing);
      const w = FRAMINGS.map((_, v) => beliefs[first + v]! ** kappa);
      const d = engine.decide(s, { context: high, pins: OTHERS_PINNED, random: seededRandom(1) }, EMPTY);
      return { actual: d.probabilities.framing, expected: w[FRAMINGS.indexOf(d.choice.framing)]! / w.reduce((a, b) => a + b, 0) };
    };
    const early = logged(state, 4);
    expect(early.actual).toBeCloseTo(early.expected, 5);
    // 40 outcomes that leave two framings close: the sharper choice shows.
    const close = withOutcomes(
      engine.initialState(EMPTY),
      Array.from({ length: 40 }, (_, i): [DecisionContext, Choice, number] => {
        const framing = FRAMINGS[i % FRAMINGS.length]!;
        return [high, choice(framing), framing === 'purpose' ? 0.62 : framing === 'curiosity' ? 0.55 : 0.3];
      }),
    );
    const late = logged(close, 6);
    expect(late.actual).toBeCloseTo(late.expected, 5);
    expect(late.actual).toBeGreaterThan(logged(close, 4).expected + 0.01); // 0.997 against 0.980 at κ = 4
  });

  it('reports as confidence the product over dimensions of the chosen value’s probability of being the favourite', () => {
    for (const seed of [3, 4, 5]) {
      const d = engine.decide(state, { context: high, pins: {}, random: seededRandom(seed) }, EMPTY);
      // With the other dimensions pinned, the confidence is that of one dimension alone (pins do not change beliefs).
      const perDimension = DIMENSION_NAMES.map((dim) => {
        const pins = Object.fromEntries(DIMENSION_NAMES.filter((other) => other !== dim).map((other) => [other, d.choice[other]])) as Pins;
        for (let s = 0; s < 500; s++) {
          const single = engine.decide(state, { context: high, pins, random: seededRandom(s) }, EMPTY);
          if (single.choice[dim] === d.choice[dim]) return single.confidence;
        }
        throw new Error(`no seed chose ${d.choice[dim]}`);
      });
      expect(d.confidence).toBeCloseTo(
        perDimension.reduce((p, x) => p * x, 1),
        12,
      );
      for (const p of perDimension) expect(p).toBeGreaterThan(0);
    }
  });

  it('at cold start with no population gives every framing the same chance, and confidence 1/5 for a lone framing', () => {
    const fresh = engine.initialState(EMPTY);
    const d = engine.decide(fresh, { context: high, pins: OTHERS_PINNED, random: seededRandom(9) }, EMPTY);
    expect(d.probabilities.framing).toBeCloseTo(1 / FRAMINGS.length, 6);
    expect(d.confidence).toBeCloseTo(1 / FRAMINGS.length, 6);
    expect(d.explored).toEqual([]);
    expect(d.rationale).toContain("No outcomes from this user or this app's other users yet");
  });

  it('does not call a tie exploring: a new tenant’s new user has every value equally likely, so nothing is off the best', () => {
    const fresh = engine.initialState(EMPTY);
    for (let seed = 0; seed < 50; seed++) {
      const d = engine.decide(fresh, { context: high, pins: {}, random: seededRandom(seed) }, EMPTY);
      expect(d.explored).toEqual([]);
      expect(d.rationale).not.toMatch(/explor/i);
    }
  });

  it('tells a cold user when the app has outcomes, just none with the framing shown', () => {
    // One outcome in the tenant, at medium complexity.
    const prior = trainedTenant(
      seededRandom(3),
      1,
      1,
      () => ({ taskComplexity: 'medium' }),
      () => 0.9,
    );
    const fresh = engine.initialState(prior);
    const decisions = Array.from({ length: 20 }, (_, seed) =>
      engine.decide(fresh, { context: { taskComplexity: 'medium' }, pins: OTHERS_PINNED, random: seededRandom(seed) }, prior),
    );
    const shownBefore = prior.support;
    const untried = decisions.find((d) => shownBefore[cellIndex(1, DIMENSION_OFFSET.framing + FRAMINGS.indexOf(d.choice.framing))] === 0)!;
    expect(untried.rationale).toContain(
      `No outcomes from this user yet, and this app's users have no outcomes with tasks framed as ${untried.choice.framing} at medium complexity`,
    );
  });
});

describe('engine.update', () => {
  const medium: DecisionContext = { taskComplexity: 'medium' };

  it('appends the outcome to the history and counts it, without changing the input state', () => {
    const before = withOutcomes(engine.initialState(EMPTY), [[medium, choice('purpose'), 0.7]]);
    const copy = structuredClone(before);
    const after = engine.update(
      before,
      { context: { taskComplexity: 'low' }, choice: choice('challenge', { style: 'direct' }), reward: 0.41234567, started: true },
      EMPTY,
    );
    expect(before).toEqual(copy);
    expect(after.outcomes).toBe(2);
    expect(historyLength(after.history)).toBe(2);
    expect(outcomeAt(after.history, 1)).toEqual({
      taskComplexity: 0,
      taskSlot: 0,
      shown: { framing: FRAMINGS.indexOf('challenge'), style: 0, complexityHandling: 0, encouragement: 1 },
      reward: 0.4123,
      started: true,
    });
    expect(olderWeight(after)).toBe(0);
  });

  it(`keeps the latest ${HISTORY_LENGTH} outcomes one by one and folds older ones into decayed sums`, () => {
    let state = engine.initialState(EMPTY);
    for (let i = 0; i < HISTORY_LENGTH; i++)
      state = engine.update(state, { context: medium, choice: choice('purpose'), reward: 0.7, started: true }, EMPTY);
    expect(historyLength(state.history)).toBe(HISTORY_LENGTH);
    expect(olderWeight(state)).toBe(0);
    state = engine.update(state, { context: medium, choice: choice('purpose'), reward: 0.7, started: true }, EMPTY);
    expect(historyLength(state.history)).toBe(HISTORY_LENGTH);
    const cell = cellIndex(1, DIMENSION_OFFSET.framing + FRAMINGS.indexOf('purpose'));
    expect(state.older.weight[cell]).toBeCloseTo(DECAY ** HISTORY_LENGTH, 4);
    expect(state.older.rewardSum[cell]).toBeCloseTo(0.7 * DECAY ** HISTORY_LENGTH, 4);
    expect(state.older.startedSum[cell]).toBeCloseTo(DECAY ** HISTORY_LENGTH, 4);
    expect(olderWeight(state)).toBeCloseTo(DIMENSION_NAMES.length * DECAY ** HISTORY_LENGTH, 3);
    const next = engine.update(state, { context: medium, choice: choice('purpose'), reward: 0.7, started: true }, EMPTY);
    expect(next.older.weight[cell]).toBeCloseTo(DECAY ** (HISTORY_LENGTH + 1) + DECAY ** HISTORY_LENGTH, 4);
  });

  it('tracks up to MAX_TASK_TYPES task types; a new one replaces the least used, whose outcomes become untyped', () => {
    const typed = (taskType: string): DecisionContext => ({ taskComplexity: 'medium', taskType });
    let state = withOutcomes(engine.initialState(EMPTY), [
      [medium, choice('purpose'), 0.6],
      [typed('a'), choice('purpose'), 0.6],
      [typed('a'), choice('challenge'), 0.6],
      [typed('a'), choice('purpose'), 0.6],
      [typed('b'), choice('purpose'), 0.6],
      [typed('c'), choice('purpose'), 0.6],
      [typed('c'), choice('curiosity'), 0.6],
    ]);
    expect(state.taskTypes).toEqual(['a', 'b', 'c']);
    expect(state.history.taskSlot).toEqual([0, 1, 1, 1, 2, 3, 3]);
    state = engine.update(state, { context: typed('d'), choice: choice('micro_steps'), reward: 0.6, started: true }, EMPTY);
    expect(state.taskTypes).toHaveLength(MAX_TASK_TYPES);
    expect(state.taskTypes).toEqual(['a', 'd', 'c']); // b had the least evidence
    expect(state.history.taskSlot).toEqual([0, 1, 1, 1, 0, 3, 3, 2]);
  });

  it('refuses a choice with a value outside its set instead of recording another value', () => {
    const state = engine.initialState(EMPTY);
    const bogus = { ...choice('purpose'), style: 'shouty' } as unknown as Choice;
    expect(() => engine.update(state, { context: medium, choice: bogus, reward: 0.5, started: true }, EMPTY)).toThrow(
      'engine: shouty is not a style value',
    );
    expect(() =>
      engine.decide(state, { context: medium, pins: { framing: 'bogus' } as unknown as Pins, random: seededRandom(1) }, EMPTY),
    ).toThrow('engine: bogus is not a framing value');
  });

  it('takes an empty task type for none: the state stays valid and keeps what it learned', () => {
    const state = withOutcomes(engine.initialState(EMPTY), [
      [medium, choice('purpose'), 0.9],
      [{ taskComplexity: 'medium', taskType: '' }, choice('purpose'), 0.9],
    ]);
    expect(state.taskTypes).toEqual([]);
    expect(state.history.taskSlot).toEqual([0, 0]);
    expect(readEngineState(JSON.parse(JSON.stringify(state)))).toEqual(state);
    expect(state.outcomes).toBe(2);
  });

  it('keeps the state under 8 KiB after 500 outcomes over 10 task types and all complexities', () => {
    const random = seededRandom(12);
    let state = engine.initialState(EMPTY);
    const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
    for (let i = 0; i < 500; i++) {
      const c: Choice = {
        framing: pick(DIMENSIONS.framing.values),
        style: pick(DIMENSIONS.style.values),
        complexityHandling: pick(DIMENSIONS.complexityHandling.values),
        encouragement: pick(DIMENSIONS.encouragement.values),
      };
      const taskType = `${i % 10}`.padEnd(100, 'x'); // the longest task type names allowed
      state = engine.update(
        state,
        { context: { taskComplexity: TASK_COMPLEXITY[i % 3]!, taskType }, choice: c, reward: random(), started: random() < 0.5 },
        EMPTY,
      );
    }
    expect(state.outcomes).toBe(500);
    expect(state.taskTypes).toHaveLength(MAX_TASK_TYPES);
    expect(Buffer.byteLength(JSON.stringify(state))).toBeLessThanOrEqual(8192);
    expect(engineStateSchema.safeParse(JSON.parse(JSON.stringify(state))).success).toBe(true);
  });
});

describe('change detection', () => {
  const medium: DecisionContext = { taskComplexity: 'medium' };
  const steady = (reward: number, count = 15) =>
    withOutcomes(
      engine.initialState(EMPTY),
      Array.from({ length: count }, (): [DecisionContext, Choice, number] => [medium, choice('purpose'), reward]),
    );

  it('never fires while rewards keep to what the user had', () => {
    let state = steady(0.8);
    for (let i = 0; i < 40; i++) {
      const next = engine.update(state, { context: medium, choice: choice('purpose'), reward: 0.8, started: true }, EMPTY);
      expect(historyLength(next.history)).toBe(Math.min(HISTORY_LENGTH, historyLength(state.history) + 1));
      state = next;
    }
    expect(state.shortfall).toBe(0);
    expect(state.excursion).toBe(0);
  });

  it('accumulates rewards’ shortfall below the prediction, and when it passes the threshold keeps only the outcomes that revealed the change', () => {
    let state = steady(0.9, 30);
    let fired = 0;
    for (let i = 0; i < 12 && fired === 0; i++) {
      const next = engine.update(state, { context: medium, choice: choice('purpose'), reward: 0, started: false }, EMPTY);
      if (historyLength(next.history) === historyLength(state.history) + 1) {
        expect(next.shortfall).toBeGreaterThan(state.shortfall);
        expect(next.excursion).toBe(state.excursion + 1);
      } else {
        // The excursion's outcomes (all failures) and the new one remain; nothing older.
        expect(state.excursion).toBeGreaterThan(0);
        expect(historyLength(next.history)).toBe(state.excursion + 1);
        expect(next.history.reward.every((reward) => reward === 0)).toBe(true);
        expect(olderWeight(next)).toBe(0);
        expect(next.shortfall).toBe(0);
        expect(next.excursion).toBe(0);
        fired += 1;
      }
      state = next;
    }
    expect(fired).toBe(1);
  });
});

describe('readEngineState', () => {
  /** `state`'s history with one outcome: every column one entry long. */
  const oneOutcome = (state: EngineState) =>
    historyFrom(state.history, 0, {
      taskComplexity: 0,
      taskSlot: 0,
      shown: { framing: 0, style: 0, complexityHandling: 0, encouragement: 0 },
      reward: 0.5,
      started: true,
    });

  it('round-trips a state through JSON', () => {
    const state = withOutcomes(trainedState(), [[{ taskComplexity: 'low', taskType: 'email' }, choice('time_boxed'), 0.33333]]);
    expect(readEngineState(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  it('returns a fresh state for anything else', () => {
    const fresh = engine.initialState(EMPTY);
    const one = oneOutcome(fresh);
    expect(readEngineState({ ...fresh, history: one })).toEqual({ ...fresh, history: one });
    const garbage = [
      null,
      7,
      'state',
      [],
      {},
      { learner: 'engine-v2' },
      { learner: 'thompson-v1', n: 3 },
      { ...fresh, learner: 'engine-v2' }, // an earlier format's name
      { ...fresh, outcomes: -1 },
      { ...fresh, history: 'x' },
      { ...fresh, history: [[0, 0, 0, 0, 0, 0, 0.5, 1]] }, // the earlier format's tuples
      { ...fresh, history: { ...one, shown: { ...one.shown, framing: [9] } } }, // no such framing
      { ...fresh, history: { ...one, taskSlot: [2] }, taskTypes: ['only one'] }, // slot of an untracked type
      { ...fresh, history: { ...one, reward: [] } }, // a column shorter than the others
      { ...fresh, excursion: 3 },
      { ...fresh, shortfall: null },
    ];
    for (const raw of garbage) expect(readEngineState(raw)).toEqual(fresh);
  });

  it("checks each column as zod's array schema of it would: bounds, whole numbers, finiteness, length", () => {
    const fresh = engine.initialState(EMPTY);
    const one = oneOutcome(fresh);
    const withHistory = (history: Partial<typeof one>) => ({ ...fresh, history: { ...one, ...history } });
    const withOlder = (column: keyof typeof fresh.older, values: unknown) => ({ ...fresh, older: { ...fresh.older, [column]: values } });
    const cells = fresh.older.weight.length;
    const accepted = [
      withHistory({ reward: [0] }),
      withHistory({ reward: [1] }),
      withHistory({ taskComplexity: [3] }), // without a complexity
      withHistory({ shown: { ...one.shown, framing: [4] } }),
      withOlder(
        'creditedRewardSum',
        Array.from({ length: cells }, () => -2.5),
      ),
      withOlder(
        'weight',
        Array.from({ length: cells }, () => 1e6),
      ),
    ];
    for (const raw of accepted) expect(readEngineState(raw)).toEqual(raw);
    const told: string[] = [];
    const rejected = [
      withHistory({ reward: [Number.NaN] }),
      withHistory({ reward: [1.0001] }),
      withHistory({ reward: [-0.0001] }),
      withHistory({ reward: ['0.5' as unknown as number] }),
      withHistory({ reward: [null as unknown as number] }),
      withHistory({ taskComplexity: [0.5] }),
      withHistory({ taskComplexity: [4] }),
      withHistory({ shown: { ...one.shown, framing: [5] } }),
      withHistory({ shown: { ...one.shown, encouragement: [-1] } }),
      withHistory({ started: [1 as unknown as boolean] }),
      withHistory({ started: 'yes' as unknown as boolean[] }),
      withOlder(
        'creditedRewardSum',
        Array.from({ length: cells }, () => Number.POSITIVE_INFINITY),
      ),
      withOlder('weight', [...fresh.older.weight.slice(1), -0.1]),
      withOlder('rewardSum', fresh.older.rewardSum.slice(1)), // a cell short
      withOlder('startedSum', [...fresh.older.startedSum, 0]), // a cell too many
      withOlder('weight', { length: cells }),
    ];
    for (const raw of rejected) expect(readEngineState(raw, (issue) => told.push(issue))).toEqual(fresh);
    expect(told).toHaveLength(rejected.length);
    expect(told[0]).toBe('history.reward: an array of numbers from 0 to 1 expected');
    expect(told[12]).toBe(`older.weight: ${cells} numbers of at least 0 expected`);
  });

  it('reports an unreadable state at every read: nothing about it is remembered', () => {
    const told: string[] = [];
    const broken = { ...engine.initialState(EMPTY), outcomes: -1 };
    readEngineState(broken, (issue) => told.push(issue));
    readEngineState(broken, (issue) => told.push(issue));
    expect(told).toHaveLength(2);
  });

  it('says what was wrong with a state it replaces — where, not the value found — and nothing for one it reads', () => {
    const told: string[] = [];
    const tell = (issue: string) => told.push(issue);
    const fresh = engine.initialState(EMPTY);
    readEngineState({ ...fresh, history: 'secret-looking text' }, tell);
    readEngineState(null, tell);
    expect(told).toEqual([expect.stringMatching(/^history: /), expect.stringMatching(/^\(state\): /)]);
    expect(told.join(' ')).not.toContain('secret-looking');
    told.length = 0;
    readEngineState(JSON.parse(JSON.stringify(trainedState())), tell);
    expect(told).toEqual([]);
  });
});

describe('profile phase', () => {
  const high: DecisionContext = { taskComplexity: 'high' };
  const roundRobin = (reward: (framing: Choice['framing']) => number, count: number) =>
    Array.from({ length: count }, (_, i): [DecisionContext, Choice, number] => {
      const framing = FRAMINGS[i % FRAMINGS.length]!;
      return [high, choice(framing), reward(framing)];
    });

  it('is cold_start without outcomes and learning after one', () => {
    const fresh = engine.initialState(EMPTY);
    expect(engine.summarize(fresh)).toMatchObject({ phase: 'cold_start', interactionCount: 0 });
    const one = withOutcomes(fresh, [[high, choice('curiosity'), 0.9]]);
    expect(engine.summarize(one)).toMatchObject({ phase: 'learning', interactionCount: 1 });
  });

  it('is established from ESTABLISHED_MIN_OUTCOMES outcomes of a consistent strong preference on', () => {
    const items = roundRobin((framing) => (framing === 'curiosity' ? 0.9 : 0.1), ESTABLISHED_MIN_OUTCOMES + 5);
    const almost = withOutcomes(engine.initialState(EMPTY), items.slice(0, ESTABLISHED_MIN_OUTCOMES - 1));
    expect(engine.summarize(almost).phase).toBe('learning');
    let state = withOutcomes(almost, items.slice(ESTABLISHED_MIN_OUTCOMES - 1, ESTABLISHED_MIN_OUTCOMES));
    expect(engine.summarize(state)).toMatchObject({ phase: 'established', interactionCount: ESTABLISHED_MIN_OUTCOMES });
    expect(engine.summarize(state).best.framing).toBe('curiosity');
    state = withOutcomes(state, items.slice(ESTABLISHED_MIN_OUTCOMES));
    expect(engine.summarize(state).phase).toBe('established');
  });

  it('is established for a user served one framing they keep responding to, whatever untried framings might do', () => {
    const items = Array.from({ length: ESTABLISHED_MIN_OUTCOMES }, (): [DecisionContext, Choice, number] => [
      high,
      choice('curiosity'),
      0.9,
    ]);
    const state = withOutcomes(engine.initialState(EMPTY), items);
    expect(engine.summarize(state)).toMatchObject({ phase: 'established', interactionCount: ESTABLISHED_MIN_OUTCOMES });
  });

  it('stays learning when no framing stands out', () => {
    const state = withOutcomes(
      engine.initialState(EMPTY),
      roundRobin(() => 0.5, 3 * ESTABLISHED_MIN_OUTCOMES),
    );
    expect(engine.summarize(state).phase).toBe('learning');
  });
});

describe('learning', () => {
  it('finds a user’s favourite framing: curiosity in at least 8 of the last 10 of 40 decisions', () => {
    const { state, framings } = run(
      40,
      () => ({ taskComplexity: 'high' }),
      (c) => (c.framing === 'curiosity' ? 0.9 : 0.1),
      1,
    );
    expect(framings.slice(-10).filter((f) => f === 'curiosity').length).toBeGreaterThanOrEqual(8);
    expect(engine.summarize(state).best.framing).toBe('curiosity');
    expect(state.outcomes).toBe(40);
  });

  it('backs off to what it knows of the user when a complexity is new: a favourite at low carries to high', () => {
    const { state } = run(
      20,
      () => ({ taskComplexity: 'low' }),
      (c) => (c.framing === 'challenge' ? 0.9 : 0.1),
      3,
    );
    const picks = Array.from({ length: 200 }, (_, seed) =>
      engine.decide(state, { context: { taskComplexity: 'high' }, pins: OTHERS_PINNED, random: seededRandom(seed) }, EMPTY),
    );
    expect(picks.filter((d) => d.choice.framing === 'challenge').length).toBeGreaterThanOrEqual(150);
    expect(picks[0]!.rationale).toContain('at other complexities');
  });

  it('follows a change of preference: after 40 outcomes preferring purpose and 40 preferring challenge it recommends challenge', () => {
    const medium = { taskComplexity: 'medium' as const };
    const { state, framings } = run(
      80,
      () => medium,
      (c, i) => (c.framing === (i < 40 ? 'purpose' : 'challenge') ? 0.9 : 0.1),
      2,
    );
    expect(framings.slice(30, 40).filter((f) => f === 'purpose').length).toBeGreaterThanOrEqual(8); // it had learned purpose
    expect(framings.slice(-10).filter((f) => f === 'challenge').length).toBeGreaterThanOrEqual(8);
    expect(engine.summarize(state).best.framing).toBe('challenge');
    const d = engine.decide(state, { context: medium, pins: OTHERS_PINNED, random: seededRandom(0) }, EMPTY);
    expect(d.rationale).toContain('challenge');
  });

  it('learns a framing per task type, without slowing users whose task types agree', () => {
    // 60 users; tasks alternate at random between two task types. In `differ`, each type has its
    // own best framing (started 80% vs 25% of the time); in `agree`, both types share one. The
    // same users are also served without their task types, as a learner that ignores them would.
    const shareOver31to40 = (differ: boolean, withTaskTypes: boolean, seed = differ ? 17 : 18) => {
      const random = seededRandom(seed);
      let hits = 0;
      for (let user = 0; user < 60; user++) {
        const first = Math.floor(random() * FRAMINGS.length);
        const second = differ ? (first + 1 + Math.floor(random() * (FRAMINGS.length - 1))) % FRAMINGS.length : first;
        const best: Record<string, string> = { writing: FRAMINGS[first]!, coding: FRAMINGS[second]! };
        let state = engine.initialState(EMPTY);
        for (let i = 0; i < 40; i++) {
          const taskType = random() < 0.5 ? 'writing' : 'coding';
          const context: DecisionContext = withTaskTypes ? { taskComplexity: 'medium', taskType } : { taskComplexity: 'medium' };
          const decision = engine.decide(state, { context, pins: OTHERS_PINNED, random }, EMPTY);
          const right = decision.choice.framing === best[taskType];
          if (i >= 30 && right) hits++;
          const started = random() < (right ? 0.8 : 0.25);
          const reward = started ? 0.7 + 0.3 * random() : 0.05 * random();
          state = engine.update(state, { context, choice: decision.choice, reward, started }, EMPTY);
        }
      }
      return hits / 600;
    };
    // 0.70: in a tenant whose population favourite is unknown a decision leans toward a favourite
    // that carries across contexts, which these users' do not (0.75 when it did not lean).
    const differ = shareOver31to40(true, true);
    expect(differ).toBeGreaterThanOrEqual(0.68);
    expect(differ).toBeGreaterThan(shareOver31to40(true, false) + 0.3); // 0.37 without task types
    // Over 4 × 60 users: one run's share moves by ±0.03 with the seed.
    const overSeeds = (withTaskTypes: boolean) =>
      [18, 19, 20, 21].reduce((sum, seed) => sum + shareOver31to40(false, withTaskTypes, seed), 0) / 4;
    const agree = overSeeds(true); // 0.80
    expect(agree).toBeGreaterThanOrEqual(0.77);
    expect(agree).toBeGreaterThan(overSeeds(false) - 0.03); // 0.80 without task types
  });

  it('starts a new user from the population prior: what this app’s users liked at that complexity', () => {
    const prior = trainedPopulation('purpose', 'medium', 25, 8, 21);
    const fresh = engine.initialState(prior);
    expect(engine.summarize(fresh)).toMatchObject({ phase: 'cold_start', interactionCount: 0 });
    expect(engine.summarize(fresh).best.framing).toBe('purpose');
    const decisions = Array.from({ length: 200 }, (_, seed) =>
      engine.decide(fresh, { context: { taskComplexity: 'medium' }, pins: {}, random: seededRandom(seed) }, prior),
    );
    expect(decisions.filter((d) => d.choice.framing === 'purpose').length).toBeGreaterThanOrEqual(180);
    const purpose = decisions.find((d) => d.choice.framing === 'purpose')!;
    expect(purpose.rationale).toContain("this app's users");
    expect(purpose.rationale).toContain('purpose');
    // Without the prior, the same user has no reason to prefer purpose.
    const uninformed = Array.from({ length: 200 }, (_, seed) =>
      engine.decide(engine.initialState(EMPTY), { context: { taskComplexity: 'medium' }, pins: {}, random: seededRandom(seed) }, EMPTY),
    );
    expect(uninformed.filter((d) => d.choice.framing === 'purpose').length).toBeLessThan(80);
  });
});

describe('a new user’s first outcome', () => {
  /**
   * A tenant whose rewards are mostly "started or not", as real apps' are: 60% of its 150 users
   * like purpose, the others another framing; a favourite is started 80% of the time, another
   * framing 25%.
   */
  const STEPS = 20;
  const favourites = Array.from({ length: 150 }, (_, u) => (u % 5 < 3 ? 'purpose' : FRAMINGS[(u * 7) % 5]!));
  let calls = 0;
  const prior = trainedTenant(
    seededRandom(21),
    favourites.length,
    STEPS,
    () => ({ taskComplexity: 'medium' }),
    (shown, random) => {
      const user = Math.floor(calls++ / STEPS);
      const started = random() < (shown.framing === favourites[user] ? 0.8 : 0.25);
      return started ? 0.6 + 0.4 * random() : 0.1 * random();
    },
  );
  const medium: DecisionContext = { taskComplexity: 'medium' };
  const purposeShare = (state: EngineState) =>
    Array.from({ length: 400 }, (_, seed) => engine.decide(state, { context: medium, pins: {}, random: seededRandom(seed) }, prior)).filter(
      (d) => d.choice.framing === 'purpose',
    ).length / 400;
  const failure = (state: EngineState) =>
    engine.update(state, { context: medium, choice: choice('purpose'), reward: 0, started: false }, prior);

  it(`counts FIRST_OUTCOME_WEIGHT (${FIRST_OUTCOME_WEIGHT}) while it is the only one, and in full once a second arrives`, () => {
    const cell = cellIndex(1, DIMENSION_OFFSET.framing + FRAMINGS.indexOf('purpose'));
    const one = failure(engine.initialState(prior));
    expect(inferenceOf(one, prior).n[cell]).toBeCloseTo(FIRST_OUTCOME_WEIGHT, 12);
    expect(inferenceOf(failure(one), prior).n[cell]).toBeCloseTo(1 + DECAY, 12);
  });

  it('keeps serving the population’s favourite after one failure (82% of decisions at full weight, here > 90%); a second failure moves the user off it', () => {
    const fresh = engine.initialState(prior);
    expect(purposeShare(fresh)).toBeGreaterThan(0.95);
    const once = failure(fresh);
    expect(purposeShare(once)).toBeGreaterThan(0.9);
    expect(purposeShare(failure(once))).toBeLessThan(0.05);
  });
});

describe('calibration', () => {
  /**
   * A known, well-specified case: users drawn from the engine's own prior for a tenant without
   * population data — half followers of a population that has no favourite yet (so a uniform
   * favourite per complexity), half individuals with a core favourite kept at each complexity
   * with probability PERSISTENCE — and rewards at the model's levels plus Gaussian noise. Each
   * user has 0–8 outcomes of random framings at random complexities. Then the engine's
   * confidence (other dimensions pinned: the framing's P(favourite)) should match how often the
   * chosen framing really is the user's favourite.
   */
  function confidenceAndHits(users: number, seed: number, score: (d: ReturnType<typeof engine.decide>) => number): Array<[number, number]> {
    const world = seededRandom(seed);
    const framing = EMPTY.dimensions[0]!;
    const noise = Math.sqrt(framing.step / framing.weight);
    const fresh = engine.initialState(EMPTY);
    const records: Array<[number, number]> = [];
    for (let u = 0; u < users; u++) {
      const pick = () => Math.floor(world() * FRAMINGS.length);
      const core = pick();
      const follower = world() < framing.follow;
      const favourite = TASK_COMPLEXITY.map(() => (follower ? pick() : world() < 0.7 ? core : pick()));
      let state = fresh;
      const outcomes = Math.floor(world() * 9);
      for (let i = 0; i < outcomes; i++) {
        const c = Math.floor(world() * 3);
        const a = pick();
        const reward = framing.mid[c]! + (a === favourite[c] ? 0.5 : -0.5) * framing.step + noise * standardNormal(world);
        state = engine.update(
          state,
          {
            context: { taskComplexity: TASK_COMPLEXITY[c]! },
            choice: choice(FRAMINGS[a]!),
            reward: Math.min(1, Math.max(0, reward)),
            started: reward > 0.5,
          },
          EMPTY,
        );
      }
      const d = engine.decide(state, { context: { taskComplexity: 'medium' }, pins: OTHERS_PINNED, random: seededRandom(u) }, EMPTY);
      records.push([score(d), FRAMINGS.indexOf(d.choice.framing) === favourite[1] ? 1 : 0]);
    }
    return records;
  }

  function calibrationError(records: Array<[number, number]>) {
    const bins = Array.from({ length: 10 }, () => ({ n: 0, confidence: 0, hits: 0 }));
    for (const [confidence, hit] of records) {
      const bin = bins[Math.min(9, Math.floor(confidence * 10))]!;
      bin.n += 1;
      bin.confidence += confidence;
      bin.hits += hit;
    }
    const ece = bins.reduce((sum, b) => sum + Math.abs(b.confidence - b.hits) / records.length, 0);
    return { ece, bins };
  }

  it('P(favourite) is calibrated on a known case: expected calibration error ≤ 0.06 over 1,500 users', () => {
    const records = confidenceAndHits(1500, 1, (d) => d.confidence);
    const { ece, bins } = calibrationError(records);
    expect(ece).toBeLessThanOrEqual(0.06);
    const meanConfidence = records.reduce((s, [c]) => s + c, 0) / records.length;
    const hitRate = records.reduce((s, [, h]) => s + h, 0) / records.length;
    expect(Math.abs(meanConfidence - hitRate)).toBeLessThan(0.04);
    // The users span the range: confidences from near chance to near certainty.
    expect(bins.filter((b) => b.n >= 30).length).toBeGreaterThanOrEqual(5);
  });

  it('the same check rejects a miscalibrated score (the sharpened selection probability)', () => {
    const { ece } = calibrationError(confidenceAndHits(600, 1, (d) => d.probabilities.framing));
    expect(ece).toBeGreaterThan(0.1);
  });
});
