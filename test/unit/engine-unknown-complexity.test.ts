import { DIMENSION_NAMES, FRAMINGS, TASK_COMPLEXITY, type Choice, type Pins } from '../../shared/domain/arms';
import { SHARE_PRIOR, complexityShares } from '../../shared/domain/engine/complexity-shares';
import { createEngine, readEngineState } from '../../shared/domain/engine/engine';
import {
  COMPLEXITY_COUNT,
  DIMENSION_OFFSET,
  UNKNOWN_COMPLEXITY,
  VALUE_COUNT,
  cellIndex,
  contextIndex,
} from '../../shared/domain/engine/layout';
import { DECAY, HISTORY_LENGTH, engineStateSchema, type EngineState } from '../../shared/domain/engine/state';
import type { DecisionContext } from '../../shared/domain/learner';
import { seededRandom } from '../../shared/domain/random';
import { trainedTenant } from '../../scripts/bench/tenant';
import { inferenceOf } from '../support/engine';

const engine = createEngine();
const EMPTY = engine.emptyPrior();
const UNKNOWN: DecisionContext = {};
const OTHERS_PINNED: Pins = { style: 'warm', complexityHandling: 'chunked', encouragement: 'moderate' };
const choice = (framing: Choice['framing']): Choice => ({
  framing,
  style: 'warm',
  complexityHandling: 'chunked',
  encouragement: 'moderate',
});
const framingCell = (context: number, framing: Choice['framing']) =>
  context * VALUE_COUNT + DIMENSION_OFFSET.framing + FRAMINGS.indexOf(framing);

function withOutcomes(state: EngineState, items: Array<[DecisionContext, Choice, number]>, prior = EMPTY): EngineState {
  return items.reduce((s, [context, c, reward]) => engine.update(s, { context, choice: c, reward, started: reward > 0.5 }, prior), state);
}

/** A user driven by the engine without ever sending a complexity. */
function run(steps: number, reward: (c: Choice) => number, seed: number) {
  const random = seededRandom(seed);
  let state = engine.initialState(EMPTY);
  const framings: string[] = [];
  for (let i = 0; i < steps; i++) {
    const decision = engine.decide(state, { context: UNKNOWN, pins: {}, random }, EMPTY);
    framings.push(decision.choice.framing);
    state = engine.update(
      state,
      { context: UNKNOWN, choice: decision.choice, reward: reward(decision.choice), started: reward(decision.choice) > 0.5 },
      EMPTY,
    );
  }
  return { state, framings };
}

describe('complexity shares', () => {
  it('are even for a new user and follow the user’s outcomes of known complexity, from SHARE_PRIOR each', () => {
    expect([...complexityShares(engine.initialState(EMPTY))]).toEqual([1 / 3, 1 / 3, 1 / 3]);
    const state = withOutcomes(engine.initialState(EMPTY), [
      [{ taskComplexity: 'high' }, choice('purpose'), 0.8],
      [{ taskComplexity: 'high' }, choice('purpose'), 0.8],
      [UNKNOWN, choice('purpose'), 0.8],
    ]);
    const high = SHARE_PRIOR + DECAY + DECAY ** 2;
    const total = 2 * SHARE_PRIOR + high;
    const shares = complexityShares(state);
    expect(shares[2]).toBeCloseTo(high / total, 12);
    expect(shares[0]).toBeCloseTo(SHARE_PRIOR / total, 12);
  });
});

describe('engine.decide without complexity', () => {
  it('uses the user’s context-free beliefs: each value’s P(favourite) mixed over the complexities by the shares', () => {
    const state = withOutcomes(engine.initialState(EMPTY), [
      [{ taskComplexity: 'high' }, choice('purpose'), 0.9],
      [{ taskComplexity: 'high' }, choice('micro_steps'), 0.1],
      [{ taskComplexity: 'low' }, choice('curiosity'), 0.8],
    ]);
    const inference = inferenceOf(state, EMPTY);
    for (const framing of FRAMINGS) {
      const mixed = TASK_COMPLEXITY.reduce(
        (p, _, c) => p + inference.shares[c]! * inference.favourite[framingCell(contextIndex(c, 0), framing)]!,
        0,
      );
      expect(inference.beliefs[framingCell(contextIndex(UNKNOWN_COMPLEXITY, 0), framing)]).toBeCloseTo(mixed, 12);
    }
    // Its confidence for a lone framing is that mixed probability.
    const decision = engine.decide(state, { context: UNKNOWN, pins: OTHERS_PINNED, random: seededRandom(1) }, EMPTY);
    const p = inference.beliefs[framingCell(contextIndex(UNKNOWN_COMPLEXITY, 0), decision.choice.framing)]!;
    expect(decision.confidence).toBeCloseTo(p, 12);
  });

  it('serves what the user liked at the complexities they did report', () => {
    const state = withOutcomes(
      engine.initialState(EMPTY),
      Array.from({ length: 12 }, (_, i): [DecisionContext, Choice, number] =>
        i % 2 ? [{ taskComplexity: 'low' }, choice('challenge'), 0.9] : [{ taskComplexity: 'low' }, choice(FRAMINGS[i % 5]!), 0.1],
      ),
    );
    const picks = Array.from({ length: 200 }, (_, seed) =>
      engine.decide(state, { context: UNKNOWN, pins: OTHERS_PINNED, random: seededRandom(seed) }, EMPTY),
    );
    expect(picks.filter((d) => d.choice.framing === 'challenge').length).toBeGreaterThanOrEqual(150);
  });

  it('returns valid values, probabilities and confidence for a new user and a task type', () => {
    for (const context of [UNKNOWN, { taskType: 'email' }]) {
      const d = engine.decide(engine.initialState(EMPTY), { context, pins: {}, random: seededRandom(3) }, EMPTY);
      for (const dim of DIMENSION_NAMES) expect(d.probabilities[dim]).toBeGreaterThan(0);
      expect(d.confidence).toBeGreaterThanOrEqual(0);
      expect(d.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('says in the rationale that no complexity was given and quotes all of the user’s outcomes', () => {
    const state = withOutcomes(engine.initialState(EMPTY), [
      [{ taskComplexity: 'high' }, choice('purpose'), 0.9],
      [{ taskComplexity: 'low' }, choice('purpose'), 0.8],
    ]);
    const allPinned: Pins = { framing: 'purpose', ...OTHERS_PINNED };
    expect(engine.decide(state, { context: UNKNOWN, pins: allPinned, random: seededRandom(1) }, EMPTY).rationale).toContain(
      "No complexity was given, so all of this user's outcomes count: tasks framed as purpose were started in 2 of this user's 2 recent cases",
    );
    const cold = engine.decide(
      engine.initialState(EMPTY),
      { context: UNKNOWN, pins: OTHERS_PINNED, random: seededRandom(1) },
      EMPTY,
    ).rationale;
    expect(cold).toContain('No outcomes from this user or this app');
    expect(cold).not.toContain('undefined');
  });
});

describe('engine.update without complexity', () => {
  it('records the outcome as of unknown complexity; the state stays valid through JSON', () => {
    const state = withOutcomes(engine.initialState(EMPTY), [[UNKNOWN, choice('purpose'), 0.7]]);
    expect(state.history.taskComplexity).toEqual([UNKNOWN_COMPLEXITY]);
    expect(engineStateSchema.safeParse(JSON.parse(JSON.stringify(state))).success).toBe(true);
    let issue: string | undefined;
    const read = readEngineState(JSON.parse(JSON.stringify(state)), (i) => (issue = i));
    expect(issue).toBeUndefined();
    expect(read.outcomes).toBe(1);
  });

  it('splits its evidence between the complexities by the user’s shares', () => {
    const state = withOutcomes(engine.initialState(EMPTY), [
      [{ taskComplexity: 'medium' }, choice('curiosity'), 0.2],
      [{ taskComplexity: 'medium' }, choice('curiosity'), 0.2],
      [UNKNOWN, choice('purpose'), 0.9],
    ]);
    const inference = inferenceOf(state, EMPTY);
    const total = TASK_COMPLEXITY.reduce((n, _, c) => n + inference.n[framingCell(c, 'purpose')]!, 0);
    expect(total).toBeCloseTo(1, 12);
    TASK_COMPLEXITY.forEach((_, c) => expect(inference.n[framingCell(c, 'purpose')]).toBeCloseTo(inference.shares[c]!, 12));
    expect(inference.shares[1]).toBeGreaterThan(inference.shares[0]!);
  });

  it('folds outcomes leaving the history into the older sums by the shares', () => {
    let state = engine.initialState(EMPTY);
    for (let i = 0; i <= HISTORY_LENGTH; i++)
      state = engine.update(state, { context: UNKNOWN, choice: choice('purpose'), reward: 0.7, started: true }, EMPTY);
    const weight = DECAY ** HISTORY_LENGTH;
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const cell = cellIndex(c, DIMENSION_OFFSET.framing + FRAMINGS.indexOf('purpose'));
      expect(state.older.weight[cell]).toBeCloseTo(weight / 3, 4);
      expect(state.older.rewardSum[cell]).toBeCloseTo((0.7 * weight) / 3, 4);
    }
  });

  it('learns a favourite from outcomes without complexity: curiosity in at least 8 of the last 10 of 40 decisions', () => {
    const { state, framings } = run(40, (c) => (c.framing === 'curiosity' ? 0.9 : 0.1), 1);
    expect(framings.slice(-10).filter((f) => f === 'curiosity').length).toBeGreaterThanOrEqual(8);
    expect(engine.summarize(state).best.framing).toBe('curiosity');
    // What it learned also serves the known complexities.
    const picks = Array.from({ length: 100 }, (_, seed) =>
      engine.decide(state, { context: { taskComplexity: 'high' }, pins: OTHERS_PINNED, random: seededRandom(seed) }, EMPTY),
    );
    expect(picks.filter((d) => d.choice.framing === 'curiosity').length).toBeGreaterThanOrEqual(75);
  });
});

describe('the population and outcomes without complexity', () => {
  it('spreads one outcome over the complexities by the user’s shares', () => {
    const before = withOutcomes(engine.initialState(EMPTY), [[{ taskComplexity: 'low' }, choice('purpose'), 0.8]]);
    const decision = engine.decide(before, { context: UNKNOWN, pins: {}, random: seededRandom(2) }, EMPTY);
    const feedback = { context: UNKNOWN, choice: decision.choice, probabilities: decision.probabilities, reward: 0.8, started: true };
    const after = engine.update(before, feedback, EMPTY);
    const delta = engine.emptyDelta();
    engine.observe(delta, EMPTY, { before, after, feedback });
    const shares = complexityShares(before);
    expect(delta.outcomeCount).toBe(1);
    TASK_COMPLEXITY.forEach((_, c) => {
      expect(delta.complexityCount[c]).toBeCloseTo(shares[c]!, 12);
      expect(delta.complexityRewardSum[c]).toBeCloseTo(0.8 * shares[c]!, 12);
      expect(delta.shownCount[framingCell(c, decision.choice.framing)]).toBeCloseTo(shares[c]!, 12);
    });
    expect(delta.creditedCount.every((n) => n === 1)).toBe(true);
  });

  it('recommends, without complexity, the population’s favourite across complexities', () => {
    const prior = trainedTenant(
      seededRandom(5),
      20,
      9,
      (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3] }),
      (shown, random) => (shown.framing === 'purpose' ? 0.8 : 0.3) + 0.1 * (random() - 0.5),
    );
    expect(engine.populationBest(prior, UNKNOWN).framing).toBe('purpose');
  });
});
