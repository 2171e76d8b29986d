import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIMENSIONS, type Choice } from '../shared/domain/arms';
import { createEngine } from '../shared/domain/engine/engine';
import { seededRandom } from '../shared/domain/random';
import { HOST, log, mustBeRunning, startBenchBackend, startProc, startServer, waitUntil, withCleanup, type Proc } from './bench/processes';
import { enginePolicy, oraclePolicy } from './bench/policies';
import {
  interactionRecord,
  roundCount,
  roundInteractions,
  runPolicy,
  summarize,
  type InteractionRecord,
  type PolicyMetrics,
} from './bench/run';
import { createSimulation, mixSeed, simulateOutcome, WORLDS, type Simulation, type WorldName } from './bench/simulator';
import { CHOICE_METRICS, MAIN_METRICS, METRIC_LABELS, fmt, formatColumns, metricDigits, type MetricName } from './bench/report';
import { mean, percentile, sampleSd } from './bench/stats';
import { nodeArgs } from '../shared/process/node-flags';

/**
 * `npm run bench:live`: the users of bench:learning's simulator (scripts/bench/simulator.ts)
 * drive the built service the way a client app — or a black-box test — does: for each
 * interaction POST /v1/context, then POST /v1/outcome with the user's signals, and the user's
 * next POST /v1/context as soon as that outcome is accepted. The api and the worker(s) run as
 * separate processes (NODE_ENV=production) on a throwaway Postgres and Redis; users interleave
 * round by round as in bench:learning, the users of a round concurrently.
 *
 * It prints the engine's figures over HTTP next to those of the same engine run in process on
 * the same simulation (same users, contexts and outcome noise) with IN_PROCESS_RUNS random
 * streams — their mean and spread: one run's figures move with the engine's random draws, whose
 * early choices shape the population prior every later user starts from — and the oracle's;
 * how many decisions were made before one of the user's earlier outcomes was applied ("stale":
 * metadata.interactionCount below the outcomes reported); the client-side latencies; and
 * checks at the end that every accepted outcome was applied exactly once.
 *
 *   node dist/scripts/bench-live.js [--seed N] [--users N] [--interactions N] [--world NAME] [--workers N] [--json]
 */

/** Random streams of the in-process engine the HTTP run is set against. */
const IN_PROCESS_RUNS = 8;
const USAGE = `usage: bench-live [--seed N] [--users N] [--interactions N] [--world ${Object.keys(WORLDS).join('|')}] [--workers N] [--json]`;

interface Options {
  seed: number;
  users: number;
  interactions: number;
  world: WorldName;
  workers: number;
  json: boolean;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { seed: 1, users: 100, interactions: 80, world: 'default', workers: 1, json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') {
      options.json = true;
      continue;
    }
    const value = argv[++i];
    if (arg === '--world' && value !== undefined && Object.hasOwn(WORLDS, value)) {
      options.world = value as WorldName;
      continue;
    }
    const number = Number(value);
    const limits: Record<string, ['seed' | 'users' | 'interactions' | 'workers', number, number]> = {
      '--seed': ['seed', 0, 2 ** 32 - 1],
      '--users': ['users', 1, 2000],
      '--interactions': ['interactions', 1, 200],
      '--workers': ['workers', 1, 8],
    };
    const limit = limits[arg];
    if (!limit || !Number.isInteger(number) || number < limit[1] || number > limit[2]) throw new Error(`${USAGE}\n(bad argument: ${arg})`);
    options[limit[0]] = number;
  }
  return options;
}

/** A small JSON client of the service; any answer but the expected status ends the run. */
function client(baseUrl: string, key: string) {
  return async (route: string, expected: number, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${baseUrl}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== expected) throw new Error(`${route} answered ${res.status}, expected ${expected}: ${text.slice(0, 300)}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
}

const choiceOf = (body: Record<string, unknown>): Choice => {
  const choice = {} as Record<string, string>;
  for (const dim of Object.keys(DIMENSIONS) as Array<keyof typeof DIMENSIONS>) choice[dim] = body[DIMENSIONS[dim].field] as string;
  return choice as Choice;
};

/** Runs the simulation's users against the service through `call`; returns their records, stale decisions and latencies. */
async function driveService(sim: Simulation, call: ReturnType<typeof client>, workers: Proc[], api: Proc) {
  const records: InteractionRecord[][] = sim.users.map(() => []);
  const latencies: number[] = [];
  let stale = 0;
  const userId = (index: number) => `sim-${sim.seed}-${index}`;
  const lastRound = roundCount(sim);
  for (let round = 0; round < lastRound; round++) {
    mustBeRunning(api, ...workers);
    await Promise.all(
      roundInteractions(sim, round).map(async ({ user, interaction, complexity, taskType, preferences }) => {
        const started = performance.now();
        const decided = await call('/v1/context', 200, { userId: userId(user.index), task: `Task ${interaction}`, complexity, taskType });
        latencies.push(performance.now() - started);
        const metadata = decided.metadata as { interactionCount: number; explorationMode: boolean };
        if (metadata.interactionCount < interaction - 1) stale++;
        const choice = choiceOf(decided);
        const { signals, reward } = simulateOutcome(sim, { user, complexity, interaction, choice, preferences });
        await call('/v1/outcome', 202, { requestId: decided.requestId, ...signals });
        records[user.index]!.push(
          interactionRecord({
            user,
            complexity: preferences,
            interaction,
            choice,
            reward,
            confidence: decided.confidence as number,
            explored: metadata.explorationMode,
          }),
        );
      }),
    );
    if (round % 20 === 19) log(`round ${round + 1} of ${lastRound}`);
  }
  // Every accepted outcome applied exactly once: the users' profiles count all of them, and no more.
  const accepted = sim.users.length * sim.interactions;
  const applied = await waitUntil('every accepted outcome to be applied', 60_000, 200, async () => {
    let counted = 0;
    for (const user of sim.users) counted += (await call(`/v1/profile/${userId(user.index)}`, 200)).interactionCount as number;
    if (counted > accepted) throw new Error(`the profiles count ${counted} outcomes of ${accepted} accepted: some were applied twice`);
    return counted === accepted ? counted : undefined;
  });
  latencies.sort((a, b) => a - b);
  return { records, stale, applied, latency: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) } };
}

async function run(options: Options, dir: string, onCleanup: (step: () => Promise<void>) => void) {
  const sim = createSimulation(options.seed, options.users, options.interactions, WORLDS[options.world]);
  const { key, env } = await startBenchBackend(dir, onCleanup, {
    account: 'bench-live',
    keyName: 'bench:live',
    prefix: 'bench-live',
    dbPoolSize: 2,
  });
  const api = await startServer('api', nodeArgs('api', path.join(__dirname, '../api/main.js')), env, '/readyz');
  const workers = Array.from({ length: options.workers }, (_, i) =>
    startProc(`worker ${i + 1}`, nodeArgs('worker', path.join(__dirname, '../worker/main.js')), env),
  );
  log(`${options.users} users × ${options.interactions} interactions through http://${HOST}:${api.port} (${options.workers} worker(s))…`);
  const t0 = performance.now();
  const live = await driveService(sim, client(`http://${HOST}:${api.port}`, key), workers, api.proc);
  const seconds = (performance.now() - t0) / 1000;
  log('the same engine in process, and the oracle…');
  const inProcessRuns = Array.from(
    { length: IN_PROCESS_RUNS },
    (_, k) => summarize(sim, runPolicy(sim, enginePolicy(createEngine(), seededRandom(mixSeed(options.seed, 11, k))))).metrics,
  );
  const oracle = summarize(sim, runPolicy(sim, oraclePolicy(sim)));
  const http = summarize(sim, live.records);
  const decisions = options.users * options.interactions;
  return {
    seed: options.seed,
    users: options.users,
    interactions: options.interactions,
    world: options.world,
    workers: options.workers,
    seconds: Math.round(seconds * 10) / 10,
    decisions,
    staleDecisions: live.stale,
    appliedOutcomes: live.applied,
    contextLatencyMs: { p50: round(live.latency.p50, 1), p99: round(live.latency.p99, 1) },
    inProcessRuns: IN_PROCESS_RUNS,
    policies: {
      http: http.metrics,
      inProcess: spread(inProcessRuns, mean),
      inProcessSd: spread(inProcessRuns, sampleSd),
      oracle: oracle.metrics,
    },
  };
}

/** `statistic` of each metric over runs; null where the metric does not apply. */
function spread(runs: PolicyMetrics[], statistic: (xs: number[]) => number): PolicyMetrics {
  const result = {} as Record<keyof PolicyMetrics, number | null>;
  for (const name of Object.keys(runs[0]!) as Array<keyof PolicyMetrics>) {
    const values = runs.map((run) => run[name]).filter((x): x is number => x !== null);
    result[name] = values.length === runs.length ? statistic(values) : null;
  }
  return result;
}
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
function printTable(result: Awaited<ReturnType<typeof run>>): void {
  const rows: Array<[string, PolicyMetrics]> = [
    ['engine over HTTP', result.policies.http],
    [`in process, mean of ${result.inProcessRuns}`, result.policies.inProcess],
    ['  ± sd across those runs', result.policies.inProcessSd],
    ['oracle', result.policies.oracle],
  ];
  const table = (metrics: readonly MetricName[]) =>
    formatColumns(
      ['policy', ...metrics.map((metric) => METRIC_LABELS[metric])],
      rows.map(([name, m]) => [name, ...metrics.map((metric) => fmt(m[metric], metricDigits(metric)))]),
    );
  const lines = [
    `bench:live — seed ${result.seed}, ${result.users} users × ${result.interactions} interactions, world ${result.world}, ${result.workers} worker(s), ${result.seconds} s`,
    '',
    ...table(MAIN_METRICS),
    '',
    ...table(CHOICE_METRICS),
  ];
  lines.push('', `in process: the same engine on the same users, with ${result.inProcessRuns} random streams`);
  lines.push(
    `decisions made before one of the user's earlier outcomes was applied: ${result.staleDecisions} of ${result.decisions}`,
    `outcomes applied, each exactly once: ${result.appliedOutcomes} of ${result.decisions} accepted (the run fails otherwise)`,
    `POST /v1/context latency seen by the client: p50 ${result.contextLatencyMs.p50} ms, p99 ${result.contextLatencyMs.p99} ms (the users of a round at once)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const result = await withCleanup('cos-bench-live-', (dir, onCleanup) => run(options, dir, onCleanup));
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else printTable(result);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
