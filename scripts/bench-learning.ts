import { performance } from 'node:perf_hooks';
import { seededRandom } from '../shared/domain/random';
import { createEngine } from '../shared/domain/engine/engine';
import { enginePolicy, epsilonGreedyPolicy, oraclePolicy, pooledThompsonPolicy, randomPolicy, type Policy } from './bench/policies';
import { fmt, formatTable, POLICY_NAMES, toJson, type PolicyName, type Results } from './bench/report';
import { runPolicy, summarize } from './bench/run';
import {
  createSimulation,
  DEFAULT_INTERACTIONS,
  DRIFT_AFTER,
  mixSeed,
  BENCH_WORLDS,
  WORLDS,
  type Simulation,
  type World,
  type WorldName,
} from './bench/simulator';
import { squareCBPolicy, type SquareCBParams } from './bench/squarecb';
import { bayesReferencePolicy, framingKnownPolicy } from './bench/bayes-reference';
import { formatSweep, summarizeSweep } from './bench/sweep';

/**
 * `npm run bench:learning`: runs the seeded end-user simulator
 * (scripts/bench/simulator.ts) against the service's learning engine — whatever
 * `engine` currently is, through its Learner interface — and the baselines of
 * scripts/bench/policies.ts, then prints a table, or with --json exactly one JSON object.
 *
 *   node dist/scripts/bench-learning.js [--json] [--seed N] [--users N] [--interactions N] [--world NAME|all]
 *   node dist/scripts/bench-learning.js --seeds A-B [--users N] [--interactions N] [--world NAME|all]
 *
 * --seeds runs the benchmark once per seed A…B (each with its own SquareCB tuning) and prints
 * the mean over seeds of every figure with its 95% confidence interval, and the engine's paired
 * differences to SquareCB and pooled Thompson sampling (scripts/bench/sweep.ts).
 *
 * Without --world it runs the worlds of BENCH_WORLDS one after another — `default`,
 * `individual-minor`, `equal-effects`, `popular-minor` — and prints each one's tables (with
 * --json, one object whose top-level `policies` are the first world's and `worlds` holds each
 * world's). --world picks one of scripts/bench/simulator.ts's WORLDS (besides those,
 * `strong-minor`, `weak-majority`, and — with a task type in every request — `task-types`
 * (preferences ignore it) or `typed-preferences` (they follow it)); `--world all` runs every one.
 * docs/BENCHMARKS.md describes each world's generative model.
 *
 * SquareCB's γ schedule is tuned first on a separate seed (derived from --seed, never the
 * evaluated one) over SQUARECB_GRID by mean reward over the whole run, then fixed.
 */

const DEFAULTS = { seed: 1, users: 500, interactions: DEFAULT_INTERACTIONS };

/** Fixed γ (exponent 0) and VW's growing schedule γ = scale·√t (VW's default is scale 10). */
export const SQUARECB_GRID: SquareCBParams[] = [
  ...[10, 20, 50, 100, 200, 500, 1000].map((gammaScale) => ({ gammaScale, gammaExponent: 0 })),
  ...[0.3, 1, 3, 10].map((gammaScale) => ({ gammaScale, gammaExponent: 0.5 })),
];

interface Options {
  json: boolean;
  seed: number;
  /** Several seeds: the sweep mode (--seeds A-B). */
  seeds: number[] | null;
  users: number;
  interactions: number;
  /** The worlds to run, in order. */
  worlds: readonly WorldName[];
}

const USAGE = `usage: bench-learning [--json] [--seed N | --seeds A-B] [--users N] [--interactions N] [--world ${Object.keys(WORLDS).join('|')}|all]`;

/** "A-B" (inclusive, at most 1,000 seeds) as a list of seeds; null when malformed. */
function parseSeedRange(text: string): number[] | null {
  const match = /^(\d+)-(\d+)$/.exec(text);
  if (!match) return null;
  const [from, to] = [Number(match[1]), Number(match[2])];
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to - from >= 1000) return null;
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function parseArgs(argv: string[]): Options {
  const options: Options = { json: false, worlds: BENCH_WORLDS, seeds: null, ...DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') {
      options.json = true;
      continue;
    }
    if (arg === '--seeds') {
      const seeds = parseSeedRange(argv[i + 1] ?? '');
      if (!seeds) throw new Error(`${USAGE} (bad argument: --seeds, expected A-B)`);
      options.seeds = seeds;
      i += 1;
      continue;
    }
    if (arg === '--world') {
      const name = argv[i + 1] ?? '';
      if (name !== 'all' && !Object.hasOwn(WORLDS, name)) throw new Error(`${USAGE} (unknown world: ${name})`);
      options.worlds = name === 'all' ? (Object.keys(WORLDS) as WorldName[]) : [name as WorldName];
      i += 1;
      continue;
    }
    const key = ({ '--seed': 'seed', '--users': 'users', '--interactions': 'interactions' } as const)[arg];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isInteger(value) || value < (key === 'seed' ? 0 : 1)) {
      throw new Error(`${USAGE} (bad argument: ${arg})`);
    }
    options[key] = value;
    i += 1;
  }
  if (options.json && options.seeds) throw new Error(`${USAGE} (--json prints one seed's object: use --seed)`);
  return options;
}

/** --seeds: one benchmark per seed, summarised over the seeds, for each world. */
function sweep(options: Options & { seeds: number[] }) {
  for (const name of options.worlds) sweepWorld(options, name);
}

function sweepWorld(options: Options & { seeds: number[] }, name: WorldName) {
  const started = performance.now();
  const world = WORLDS[name];
  const runs = options.seeds.map((seed) => {
    process.stderr.write(`world ${name}, seed ${seed}…\n`);
    const tuning = tuneSquareCB(seed, options.users, options.interactions, world);
    return runBenchmark(seed, options.users, options.interactions, tuning.best, world);
  });
  const seconds = (performance.now() - started) / 1000;
  const [first, last] = [options.seeds[0]!, options.seeds[options.seeds.length - 1]!];
  process.stdout.write(
    [
      `bench:learning sweep — world ${name}, seeds ${first}–${last} ` +
        `(${options.seeds.length}), ${options.users} users × ${options.interactions} interactions each; ` +
        'mean over seeds ± 95% CI (Student t); SquareCB tuned per seed',
      '',
      formatSweep(summarizeSweep(options.seeds, runs)),
      `finished in ${seconds.toFixed(1)} s`,
      '',
    ].join('\n') + '\n',
  );
}

function makePolicy(name: PolicyName, sim: Simulation, squareCB: SquareCBParams): Policy {
  const random = seededRandom(mixSeed(sim.seed, 100, POLICY_NAMES.indexOf(name)));
  switch (name) {
    case 'engine':
      return enginePolicy(createEngine(), random);
    case 'random':
      return randomPolicy(random);
    case 'epsilonGreedy':
      return epsilonGreedyPolicy(random, 0.2);
    case 'pooledThompson':
      return pooledThompsonPolicy(random);
    case 'squareCB':
      return squareCBPolicy(random, squareCB);
    case 'oracle':
      return oraclePolicy(sim);
  }
}

/** Picks SquareCB's γ schedule on a separate seed: the grid point with the highest mean reward. */
export function tuneSquareCB(seed: number, users: number, interactions: number, world: World = WORLDS.default) {
  const sim = createSimulation(mixSeed(seed, 0x7e57), users, interactions, world);
  const scored = SQUARECB_GRID.map((params) => ({
    params,
    meanReward: summarize(sim, runPolicy(sim, squareCBPolicy(seededRandom(mixSeed(sim.seed, 200)), params))).meanRewardAll,
  }));
  const best = scored.reduce((a, b) => (b.meanReward > a.meanReward ? b : a));
  return { best: best.params, scored, tuningSeed: sim.seed };
}

export function runBenchmark(
  seed: number,
  users: number,
  interactions: number,
  squareCB: SquareCBParams,
  world: World = WORLDS.default,
): Results {
  const sim = createSimulation(seed, users, interactions, world);
  const results = {} as Results;
  for (const name of POLICY_NAMES) results[name] = summarize(sim, runPolicy(sim, makePolicy(name, sim, squareCB)));
  return results;
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.seeds) return sweep({ ...options, seeds: options.seeds });
  const runs = options.worlds.map((name) => {
    const started = performance.now();
    const world = WORLDS[name];
    const tuning = tuneSquareCB(options.seed, options.users, options.interactions, world);
    const results = runBenchmark(options.seed, options.users, options.interactions, tuning.best, world);
    if (!options.json) process.stdout.write(`${worldReport(options, name, tuning, results, started).join('\n')}\n\n`);
    return { world: name, results };
  });
  if (options.json) process.stdout.write(`${JSON.stringify(toJson(options.seed, options.users, runs))}\n`);
}

/** One world's tables, and in the default world the Bayes reference and the framing ceiling. */
function worldReport(
  options: Options,
  name: WorldName,
  tuning: ReturnType<typeof tuneSquareCB>,
  results: Results,
  started: number,
): string[] {
  const sim = createSimulation(options.seed, options.users, options.interactions, WORLDS[name]);
  const drifting = sim.users.filter((u) => u.drifts).length;
  const oracle1140 = results.oracle.metrics.meanReward_11_40 ?? NaN;
  const ratio = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(3)} (${(x / oracle1140).toFixed(3)} × oracle)`);
  const gamma = ({ gammaScale, gammaExponent }: SquareCBParams) =>
    gammaExponent === 0 ? `γ = ${gammaScale}` : `γ = ${gammaScale}·t^${gammaExponent}`;
  const lines = [
    `bench:learning — world ${name}, seed ${options.seed}, ` +
      `${options.users} users × ${options.interactions} interactions; ` +
      (options.interactions > DRIFT_AFTER
        ? `${drifting} users change preferences after interaction ${DRIFT_AFTER}`
        : `no drift (it happens after interaction ${DRIFT_AFTER})`),
    `SquareCB ${gamma(tuning.best)} (tuned on seed ${tuning.tuningSeed}: ` +
      tuning.scored.map((s) => `${gamma(s.params)} → ${s.meanReward.toFixed(3)}`).join(', ') +
      ')',
    '',
    formatTable(results, options.interactions),
    '',
    `engine reward 11–40: ${ratio(results.engine.metrics.meanReward_11_40)}`,
    'best … 31–40: non-drifting users (drift happens after interaction 40); explored: share of interactions answered with some ' +
      "dimension off the policy's current best (the engine's explorationMode); drift recovery: mean interactions after the change " +
      'until ≥ 7 of the last 10 picks are the new best framing (users who never recover count as ' +
      `${options.interactions - DRIFT_AFTER + 1}; n/a when fewer than half recover); ECE: confidence vs "the combination is the user's best"`,
  ];
  if (name === 'default') {
    const reference = summarize(sim, runPolicy(sim, bayesReferencePolicy(sim)));
    const ceiling = summarize(sim, runPolicy(sim, framingKnownPolicy(sim))).metrics;
    lines.push(
      '',
      'reference, not a competitor — a Bayes policy that knows how the simulator makes its users (population favourites, majority share, ' +
        'how often own favourites change with complexity, reward levels) but not their hidden values ' +
        `(scripts/bench/bayes-reference.ts): reward 11–40 ${ratio(reference.metrics.meanReward_11_40)}, ` +
        `best framing 31–40 ${fmt(reference.metrics.bestFramingShareLast10)}, cold start ${fmt(reference.metrics.coldStartReward)}`,
      "ceiling, not a policy — each user's best framing known from the first interaction, the population's favourites of the other " +
        `dimensions: reward 11–40 ${ratio(ceiling.meanReward_11_40)}; best framing over interactions 11–40: ` +
        `engine ${fmt(results.engine.bestFramingShare11to40)}, reference ${fmt(reference.bestFramingShare11to40)}`,
    );
  }
  lines.push(`finished in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return lines;
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
