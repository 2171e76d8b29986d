import { TASK_COMPLEXITY, type Choice } from '../../shared/domain/arms';
import { createEngine, type Engine } from '../../shared/domain/engine/engine';
import type { EngineState } from '../../shared/domain/engine/state';
import type { PopulationPrior } from '../../shared/domain/engine/population';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { DecisionContext, LoggedFeedback } from '../../shared/domain/learner';
import { seededRandom } from '../../shared/domain/random';
import { trainedTenant } from '../../scripts/bench/tenant';

/**
 * The invariants the engine's kept inferences and scratch buffers rest on
 * (shared/domain/engine/README.md, "Invariants"): states and priors are never mutated, so what an
 * engine keeps per object stays right; an engine's scratch buffers never carry one call's data
 * into another's, and engines share none.
 */

const engine = createEngine();

/** Freezes a value and all it holds; typed arrays cannot be frozen, so a test compares them with a copy instead. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

const likesPurpose = (choice: Choice, random: () => number): number => (random() < (choice.framing === 'purpose' ? 0.8 : 0.3) ? 1 : 0);
const at = (i: number): DecisionContext => ({ taskComplexity: TASK_COMPLEXITY[i % 3]!, ...(i % 4 === 0 ? { taskType: 'email' } : {}) });

/** A user driven by the engine for `steps` outcomes under `prior`; every state it makes is frozen before the next call. */
function frozenUser(prior: CompiledPopulation, steps: number, seed: number): { states: EngineState[]; delta: PopulationPrior } {
  const random = seededRandom(seed);
  const delta = engine.emptyDelta();
  const states = [deepFreeze(engine.initialState(prior))];
  for (let i = 0; i < steps; i++) {
    const before = states[states.length - 1]!;
    const decision = engine.decide(before, { context: at(i), pins: {}, random }, prior);
    const reward = likesPurpose(decision.choice, random);
    const feedback = { context: at(i), choice: decision.choice, probabilities: decision.probabilities, reward, started: reward > 0 };
    const after = deepFreeze(engine.update(before, feedback, prior));
    engine.observe(delta, prior, { before, after, feedback });
    states.push(after);
  }
  return { states, delta };
}

describe('engine invariants', () => {
  const prior = deepFreeze(trainedTenant(seededRandom(3), 30, 20, (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3]! }), likesPurpose));

  it('never mutates a state or a prior: decide, update, observe and mergePrior all work on frozen ones', () => {
    const before = structuredClone(prior);
    const { states, delta } = frozenUser(prior, 80, 5);
    expect(states).toHaveLength(81);
    const merged = engine.mergePrior(prior, deepFreeze(delta));
    expect(merged).not.toBe(prior);
    expect(merged.sums.outcomeCount).toBeGreaterThan(prior.sums.outcomeCount);
    // The compiled prior's typed arrays, which cannot be frozen, are as they were.
    expect(prior).toEqual(before);
  });

  it("decides the same for a user whatever other users' inferences ran in between (no scratch buffer carries over)", () => {
    const a = frozenUser(prior, 70, 7).states.at(-1)!;
    const b = frozenUser(prior, 30, 8).states.at(-1)!;
    const context: DecisionContext = { taskComplexity: 'medium', taskType: 'email' };
    const alone = engine.decide(a, { context, pins: {}, random: seededRandom(1) }, prior);
    engine.decide(b, { context: { taskComplexity: 'low' }, pins: {}, random: seededRandom(2) }, prior);
    const afterOther = engine.decide(a, { context, pins: {}, random: seededRandom(1) }, prior);
    // A copy of the state is a new object: its inference is recomputed, not read from the cache.
    const recomputed = engine.decide(structuredClone(a), { context, pins: {}, random: seededRandom(1) }, prior);
    for (const decision of [afterOther, recomputed]) {
      expect(decision.choice).toEqual(alone.choice);
      expect(decision.probabilities).toEqual(alone.probabilities);
      expect(decision.confidence).toBe(alone.confidence);
    }
  });

  it('keeps an inference for one prior: the same state decided under another prior is decided as a new engine would', () => {
    const a = frozenUser(prior, 40, 9).states.at(-1)!;
    const other = deepFreeze(trainedTenant(seededRandom(4), 20, 10, (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3]! }), likesPurpose));
    const context: DecisionContext = { taskComplexity: 'high' };
    engine.decide(a, { context, pins: {}, random: seededRandom(1) }, prior);
    const kept = engine.decide(a, { context, pins: {}, random: seededRandom(1) }, other);
    expect(kept).toEqual(createEngine().decide(a, { context, pins: {}, random: seededRandom(1) }, other));
  });

  it("observes an outcome as a new engine would, whatever it observed before (observe's scratch carries nothing over)", () => {
    const observed = (by: Engine, before: EngineState, feedback: LoggedFeedback): PopulationPrior => {
      const delta = by.emptyDelta();
      by.observe(delta, prior, { before, after: by.update(before, feedback, prior), feedback });
      return delta;
    };
    const feedback = (taskComplexity: DecisionContext['taskComplexity'], framing: Choice['framing'], reward: number): LoggedFeedback => ({
      context: { taskComplexity },
      choice: { framing, style: 'direct', complexityHandling: 'chunked', encouragement: 'minimal' },
      probabilities: { framing: 0.3, style: 0.4, complexityHandling: 0.5, encouragement: 0.6 },
      reward,
      started: true,
    });
    const [a, b] = [frozenUser(prior, 70, 13).states.at(-1)!, frozenUser(prior, 30, 14).states.at(-1)!];
    const used = createEngine();
    const other = observed(used, b, feedback('high', 'purpose', 1));
    expect(other.contrastExcess.some((x) => x !== 0)).toBe(true);
    const next = observed(used, a, feedback('low', 'curiosity', 0.2));
    expect(next).toEqual(observed(createEngine(), a, feedback('low', 'curiosity', 0.2)));
  });

  it('shares the empty older sums of a user whose history never filled, and copies them once it fills', () => {
    const { states } = frozenUser(prior, 70, 15);
    expect(states[40]!.older).toBe(states[0]!.older);
    expect(states[70]!.older).not.toBe(states[69]!.older);
    expect(states[70]!.older.weight.some((x) => x > 0)).toBe(true);
  });

  it('shares nothing between engines: two engines taking turns decide as each would alone', () => {
    const [first, second] = [createEngine(), createEngine()];
    const users = [frozenUser(prior, 50, 11).states.at(-1)!, frozenUser(prior, 20, 12).states.at(-1)!];
    const contexts: DecisionContext[] = [{ taskComplexity: 'low', taskType: 'email' }, {}];
    const alone = users.map((state, u) =>
      createEngine().decide(state, { context: contexts[u]!, pins: {}, random: seededRandom(u) }, prior),
    );
    const interleaved = users.map((state, u) => {
      (u === 0 ? second : first).decide(users[1 - u]!, { context: contexts[1 - u]!, pins: {}, random: seededRandom(9) }, prior);
      return (u === 0 ? first : second).decide(state, { context: contexts[u]!, pins: {}, random: seededRandom(u) }, prior);
    });
    expect(interleaved).toEqual(alone);
  });
});

describe('exploration', () => {
  it('stops on the dimensions whose favourite is known: a user whose four favourites are clear is no longer explored', () => {
    const favourite: Choice = { framing: 'purpose', style: 'direct', complexityHandling: 'whole', encouragement: 'minimal' };
    const prior = engine.emptyPrior();
    const medium: DecisionContext = { taskComplexity: 'medium' };
    const random = seededRandom(11);
    let state = engine.initialState(prior);
    const exploredShare = (s: EngineState) =>
      Array.from({ length: 200 }, (_, seed) => engine.decide(s, { context: medium, pins: {}, random: seededRandom(seed) }, prior)).filter(
        (d) => d.explored.length > 0,
      ).length / 200;
    const early = exploredShare(state);
    for (let i = 0; i < 60; i++) {
      const decision = engine.decide(state, { context: medium, pins: {}, random }, prior);
      // Each dimension's favourite adds 0.2 to the reward: the outcomes are clear.
      const matches = (Object.keys(favourite) as Array<keyof Choice>).filter((dim) => decision.choice[dim] === favourite[dim]).length;
      const reward = 0.2 + 0.2 * matches;
      state = engine.update(state, { context: medium, choice: decision.choice, reward, started: matches >= 2 }, prior);
    }
    expect(early).toBe(0); // a new user of a new tenant: every value ties, nothing is exploration
    expect(engine.summarize(state).best).toEqual(favourite);
    expect(exploredShare(state)).toBeLessThan(0.05);
  });
});
