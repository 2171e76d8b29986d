import { performance } from 'node:perf_hooks';
import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension } from '../shared/domain/arms';
import { engine } from '../shared/domain/engine/engine';
import type { EngineState } from '../shared/domain/engine/state';
import type { PopulationPrior } from '../shared/domain/engine/population';
import { seededRandom, type Random } from '../shared/domain/random';
import { likesPurpose, unanimousTenant } from './bench/tenant';
import { KnownUsers } from '../api/services/known-users';
import { ParsedStates } from '../api/services/parsed-states';
import { redisKeys } from '../shared/redis/key-names';
import { newProfile } from '../shared/profile/profile';

/**
 * `npm run bench:engine`: the cost of one engine decision (all four
 * dimensions: posteriors, Thompson draws, selection probabilities, confidence and rationale)
 * and of one update, on a long-time user — 100 outcomes over three complexities and three
 * task types, a full history — of a tenant with a trained population prior; and that user's
 * state size.
 * Each call is timed on its own and the median reported, next to a baseline measured in the
 * same run: a uniform random choice plus a JSON round trip of the state (what any learner
 * backed by a cached JSON state pays). And what the API pays per context request for this user:
 * the cached profile's JSON parsed, its state read, a decision — with the state parsed anew
 * each time, and from the API's ParsedStates (parsed once per profile version).
 *
 *   node dist/scripts/bench-engine.js [--json] [--calls N]
 */
const TASK_TYPES = ['email', 'report', 'chores'];
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
function userState(prior: PopulationPrior, random: Random): EngineState {
  let state = engine.initialState(prior);
  for (let i = 0; i < USER_OUTCOMES; i++) {
    const context = { complexity: TASK_COMPLEXITY[i % 3]!, taskType: TASK_TYPES[i % TASK_TYPES.length] };
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

function main() {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const callsArg = argv.indexOf('--calls');
  const calls = callsArg >= 0 ? Number(argv[callsArg + 1]) : 20_000;
  if (!Number.isInteger(calls) || calls < 100) throw new Error('usage: bench-engine [--json] [--calls N ≥ 100]');
  const random = seededRandom(1);
  const prior = unanimousTenant(random, 200);
  const state = userState(prior, random);
  const serialized = JSON.stringify(state);
  const contexts = TASK_COMPLEXITY.flatMap((complexity) => [...TASK_TYPES, undefined].map((taskType) => ({ complexity, taskType })));
  // The engine caches its inference per state object; a served request has a state freshly
  // read from the cache, so every timed call gets a new object (a shallow copy, which costs ~0).
  const fresh = () => ({ ...state });
  // The user's profile as the API reads it from the cache (a new object at every read).
  const profile = { ...newProfile('user', 'generation', state, new Date()), version: USER_OUTCOMES, interactionCount: USER_OUTCOMES };
  const cachedProfile = JSON.stringify(profile);
  const parsed = new ParsedStates(engine);
  const tenant = { accountId: '1', environment: 'live' as const };
  const user = new KnownUsers(redisKeys('bench'), 'bench-secret').of(tenant, 'user');
  // Warm up the JIT before measuring.
  medianMicros(2_000, (i) => engine.decide(fresh(), { context: contexts[i % contexts.length]!, pins: {}, random }, prior));
  const result = {
    calls,
    decideMedianMicros: medianMicros(calls, (i) =>
      engine.decide(fresh(), { context: contexts[i % contexts.length]!, pins: {}, random }, prior),
    ),
    decidePinnedFramingMedianMicros: medianMicros(calls, (i) =>
      engine.decide(fresh(), { context: contexts[i % contexts.length]!, pins: { framing: 'purpose' }, random }, prior),
    ),
    updateMedianMicros: medianMicros(Math.min(calls, 5_000), (i) =>
      engine.update(
        fresh(),
        { context: contexts[i % contexts.length]!, choice: randomChoice(random), reward: random(), started: true },
        prior,
      ),
    ),
    baselineMedianMicros: medianMicros(calls, () => {
      randomChoice(random);
      engine.parseState(JSON.parse(serialized));
    }),
    requestParsedAnewMedianMicros: medianMicros(calls, (i) => {
      const read = JSON.parse(cachedProfile) as typeof profile;
      engine.decide(engine.parseState(read.state), { context: contexts[i % contexts.length]!, pins: {}, random }, prior);
    }),
    requestParsedStatesMedianMicros: medianMicros(calls, (i) => {
      const read = JSON.parse(cachedProfile) as typeof profile;
      engine.decide(parsed.get(user, read), { context: contexts[i % contexts.length]!, pins: {}, random }, prior);
    }),
    historyEntries: state.history.length,
    stateBytes: Buffer.byteLength(serialized),
    populationBytes: Buffer.byteLength(JSON.stringify(prior)),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (x: number) => x.toFixed(1).padStart(7);
  process.stdout.write(
    [
      `bench:engine — ${calls} calls each; user with ${USER_OUTCOMES} outcomes over 3 complexities and 3 task types (${result.historyEntries} in the history); trained population prior`,
      `decide (4 dimensions)           median ${f(result.decideMedianMicros)} µs   (target ≤ 50 µs)`,
      `decide, framing pinned          median ${f(result.decidePinnedFramingMedianMicros)} µs`,
      `update (worker, with summary)   median ${f(result.updateMedianMicros)} µs`,
      `baseline: random + state JSON   median ${f(result.baselineMedianMicros)} µs`,
      `API request: profile JSON, state, decide — state parsed anew  median ${f(result.requestParsedAnewMedianMicros)} µs; from ParsedStates  median ${f(result.requestParsedStatesMedianMicros)} µs`,
      `user state ${result.stateBytes} bytes serialized (limit 8,192); population prior ${result.populationBytes} bytes`,
      '',
    ].join('\n'),
  );
}

main();
