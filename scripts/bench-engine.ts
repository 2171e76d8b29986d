import { performance } from 'node:perf_hooks';
import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension } from '../shared/domain/arms';
import { createEngine, readEngineState, type Engine } from '../shared/domain/engine/engine';
import { historyLength, type EngineState } from '../shared/domain/engine/state';
import type { CompiledPopulation } from '../shared/domain/engine/population-model';
import { seededRandom, type Random } from '../shared/domain/random';
import { likesPurpose, unanimousTenant } from './bench/tenant';
import { newProfile, storedProfileSchema } from '../shared/profile/profile';

/**
 * `npm run bench:engine`: the cost of one engine decision (all four
 * dimensions: posteriors, Thompson draws, selection probabilities, confidence and rationale)
 * and of one update, on a long-time user — 100 outcomes over three complexities and three
 * task types, a full history — of a tenant with a trained population prior; and that user's
 * state size.
 * Each call is timed on its own and the median reported, with the bytes it allocates (the
 * median over batches of calls), next to a baseline measured in the same run: a uniform random
 * choice plus a JSON round trip of the state (what any learner backed by a cached JSON state
 * pays). And what the API pays per context request for this user: when the profile changed
 * since its last request, the cached profile's JSON decoded (its state read) and a decision;
 * when it did not, a decision on the profile it keeps (KnownUsers), whose state and prior the
 * engine has seen. And a worker's whole engine work per outcome (update and observe), with the
 * bytes it allocates: for a state freshly read, and for the next outcome of a user whose last
 * one the worker has just applied (a batch applies each user's outcomes in a row).
 *
 *   node dist/scripts/bench-engine.js [--json] [--calls N]
 */
const TASK_TYPES = ['email', 'report', 'chores'];
/** A decision's selection probabilities, as an outcome carries them to the worker. */
const OUTCOME_PROBABILITIES = { framing: 0.2, style: 0.25, complexityHandling: 1 / 3, encouragement: 1 / 3 };
const USER_OUTCOMES = 100;

function randomChoice(random: Random): Choice {
  const choice = {} as Record<Dimension, string>;
  for (const dim of DIMENSION_NAMES) {
    const values = DIMENSIONS[dim].values;
    choice[dim] = values[Math.floor(random() * values.length)]!;
  }
  return choice as Choice;
}

/**
 * A long-time user served by the engine: 100 outcomes over 3 complexities and 3 task types,
 * liking one framing, so the history is full (HISTORY_LENGTH entries — the most a decision
 * reads) and older outcomes are folded into decayed sums.
 */
function userState(engine: Engine, prior: CompiledPopulation, random: Random): EngineState {
  let state = engine.initialState(prior);
  for (let i = 0; i < USER_OUTCOMES; i++) {
    const context = { taskComplexity: TASK_COMPLEXITY[i % 3]!, taskType: TASK_TYPES[i % TASK_TYPES.length] };
    const choice = engine.decide(state, { context, pins: {}, random }, prior).choice;
    const reward = likesPurpose(choice, random);
    state = engine.update(state, { context, choice, reward, started: reward > 0.5 }, prior);
  }
  return state;
}

function medianMicros(calls: number, run: (i: number) => void): number {
  const times = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    run(i);
    times[i] = (performance.now() - start) * 1000;
  }
  times.sort();
  return times[Math.floor(calls / 2)]!;
}

/** Calls per batch of the allocation count, and batches counted. */
const ALLOCATION_BATCH = 20;
const ALLOCATION_BATCHES = 201;

/**
 * Bytes one call allocates: the JS heap's growth plus that of typed arrays' backing stores
 * (which live outside it), over a batch of calls, per call; the median over batches, so that a
 * batch during which the garbage collector ran (its heap shrinks) does not count.
 */
function allocatedBytes(run: (i: number) => void): number {
  const inUse = () => {
    const memory = process.memoryUsage();
    return memory.heapUsed + memory.arrayBuffers;
  };
  const perCall = new Float64Array(ALLOCATION_BATCHES);
  for (let b = 0; b < ALLOCATION_BATCHES; b++) {
    const before = inUse();
    for (let i = 0; i < ALLOCATION_BATCH; i++) run(b * ALLOCATION_BATCH + i);
    perCall[b] = (inUse() - before) / ALLOCATION_BATCH;
  }
  perCall.sort();
  return Math.round(perCall[Math.floor(ALLOCATION_BATCHES / 2)]!);
}

/** The median time of a call (µs) and the bytes it allocates. */
function measure(calls: number, run: (i: number) => void): { micros: number; bytes: number } {
  return { micros: medianMicros(calls, run), bytes: allocatedBytes(run) };
}

function main() {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const callsArg = argv.indexOf('--calls');
  const calls = callsArg >= 0 ? Number(argv[callsArg + 1]) : 20_000;
  if (!Number.isInteger(calls) || calls < 100) throw new Error('usage: bench-engine [--json] [--calls N ≥ 100]');
  const random = seededRandom(1);
  const prior = unanimousTenant(random, 200);
  const engine = createEngine();
  const state = userState(engine, prior, random);
  const serialized = JSON.stringify(state);
  const contexts = TASK_COMPLEXITY.flatMap((complexity) =>
    [...TASK_TYPES, undefined].map((taskType) => ({ taskComplexity: complexity, taskType })),
  );
  // The engine keeps its inference per state object; a decision or update is timed as for a
  // state freshly read, so every timed call gets a new object (a shallow copy, which costs ~0).
  const fresh = () => ({ ...state });
  // The user's profile as the cache holds it, and as the API keeps it decoded between requests.
  const profile = {
    ...newProfile({ userId: 'user', generation: 'generation' }, state, new Date()),
    version: USER_OUTCOMES,
    interactionCount: USER_OUTCOMES,
  };
  const cachedProfile = JSON.stringify(profile);
  const kept = storedProfileSchema.parse(JSON.parse(cachedProfile));
  // Warm up the JIT before measuring.
  medianMicros(2_000, (i) => engine.decide(fresh(), { context: contexts[i % contexts.length]!, pins: {}, random }, prior));
  const decide = measure(calls, (i) => engine.decide(fresh(), { context: contexts[i % contexts.length]!, pins: {}, random }, prior));
  const decidePinned = measure(calls, (i) =>
    engine.decide(fresh(), { context: contexts[i % contexts.length]!, pins: { framing: 'purpose' }, random }, prior),
  );
  const update = measure(Math.min(calls, 5_000), (i) =>
    engine.update(
      fresh(),
      { context: contexts[i % contexts.length]!, choice: randomChoice(random), reward: random(), started: true },
      prior,
    ),
  );
  // A worker's outcome: the update, then the population's delta observed (one delta per batch, as the worker keeps).
  const delta = engine.emptyDelta();
  const outcome = measure(Math.min(calls, 5_000), (i) => {
    const before = fresh();
    const context = contexts[i % contexts.length]!;
    const choice = randomChoice(random);
    const feedback = { context, choice, probabilities: OUTCOME_PROBABILITIES, reward: random(), started: true };
    const after = engine.update(before, feedback, prior);
    engine.observe(delta, prior, { before, after, feedback });
  });
  // The same when the user's previous outcome was applied in the same batch (a worker applies a
  // user's outcomes in a row): the state before is the last update's, whose inference the engine kept.
  let running = fresh();
  const outcomeInRun = measure(Math.min(calls, 5_000), (i) => {
    const context = contexts[i % contexts.length]!;
    const choice = randomChoice(random);
    const feedback = { context, choice, probabilities: OUTCOME_PROBABILITIES, reward: random(), started: true };
    const after = engine.update(running, feedback, prior);
    engine.observe(delta, prior, { before: running, after, feedback });
    running = after;
  });
  const baseline = measure(calls, () => {
    randomChoice(random);
    readEngineState(JSON.parse(serialized));
  });
  const requestParsedAnew = measure(calls, (i) => {
    const read = storedProfileSchema.parse(JSON.parse(cachedProfile));
    engine.decide(read.state, { context: contexts[i % contexts.length]!, pins: {}, random }, prior);
  });
  const requestKept = measure(calls, (i) =>
    engine.decide(kept.state, { context: contexts[i % contexts.length]!, pins: {}, random }, prior),
  );
  const result = {
    calls,
    decideMedianMicros: decide.micros,
    decideAllocatedBytes: decide.bytes,
    decidePinnedFramingMedianMicros: decidePinned.micros,
    decidePinnedFramingAllocatedBytes: decidePinned.bytes,
    updateMedianMicros: update.micros,
    updateAllocatedBytes: update.bytes,
    outcomeMedianMicros: outcome.micros,
    outcomeAllocatedBytes: outcome.bytes,
    outcomeInRunMedianMicros: outcomeInRun.micros,
    outcomeInRunAllocatedBytes: outcomeInRun.bytes,
    baselineMedianMicros: baseline.micros,
    baselineAllocatedBytes: baseline.bytes,
    requestParsedAnewMedianMicros: requestParsedAnew.micros,
    requestParsedAnewAllocatedBytes: requestParsedAnew.bytes,
    requestKeptMedianMicros: requestKept.micros,
    requestKeptAllocatedBytes: requestKept.bytes,
    historyEntries: historyLength(state.history),
    stateBytes: Buffer.byteLength(serialized),
    populationBytes: Buffer.byteLength(JSON.stringify(prior.sums)),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (x: number) => x.toFixed(1).padStart(7);
  const b = (x: number) => x.toLocaleString('en-US').padStart(7);
  process.stdout.write(
    [
      `bench:engine — ${calls} calls each; user with ${USER_OUTCOMES} outcomes over 3 complexities and 3 task types (${result.historyEntries} in the history); trained population prior`,
      `decide (4 dimensions)           median ${f(result.decideMedianMicros)} µs, ${b(result.decideAllocatedBytes)} bytes allocated   (target ≤ 30 µs)`,
      `decide, framing pinned          median ${f(result.decidePinnedFramingMedianMicros)} µs, ${b(result.decidePinnedFramingAllocatedBytes)} bytes allocated`,
      `update (worker, with summary)   median ${f(result.updateMedianMicros)} µs, ${b(result.updateAllocatedBytes)} bytes allocated   (target ≤ 20 µs)`,
      `outcome (worker: update, observe) median ${f(result.outcomeMedianMicros)} µs, ${b(result.outcomeAllocatedBytes)} bytes allocated per outcome`,
      `outcome after the user's last (its inference kept) median ${f(result.outcomeInRunMedianMicros)} µs, ${b(result.outcomeInRunAllocatedBytes)} bytes allocated per outcome`,
      `baseline: random + state JSON   median ${f(result.baselineMedianMicros)} µs, ${b(result.baselineAllocatedBytes)} bytes allocated`,
      `API request, profile changed: decode, decide  median ${f(result.requestParsedAnewMedianMicros)} µs, ${b(result.requestParsedAnewAllocatedBytes)} bytes; unchanged (kept): decide  median ${f(result.requestKeptMedianMicros)} µs, ${b(result.requestKeptAllocatedBytes)} bytes`,
      `user state ${result.stateBytes} bytes serialized (limit 8,192); population prior ${result.populationBytes} bytes`,
      '',
    ].join('\n'),
  );
}

main();
