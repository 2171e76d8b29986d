import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadWorkerConfig } from '../shared/config/config';
import { applyLagPhase } from './bench/apply-lag';
import { timeColdStart } from './bench/cold-start';
import { cpuSnapshot, settleMachine } from './bench/cpu';
import { drive } from './bench/drive';
import { EventQueues, keysOf } from './bench/event-queues';
import { noopBaseline } from './bench/noop-baseline';
import {
  BENCH_SECRET,
  log,
  mustBeRunning,
  startBenchBackend,
  startProc,
  startServer,
  stopProc,
  withCleanup,
  type Proc,
} from './bench/processes';
import { runSource } from './bench/provenance';
import { STEADY_RATE } from './bench/load-targets';
import { tableSizes } from './bench/table-sizes';
import { fillMonth } from './bench/month-rows';
import { buildOutcomeBacklog, timeBacklog } from './bench/worker-backlog';
import { meanBytes } from './bench/worker-figures';
import { printWorkerReport, vsNoop, type WorkerBenchResult } from './bench/worker-report';
import { nodeArgs } from '../shared/process/node-flags';
import { startWebhookLoad, type WebhookLoadReport } from './bench/webhook-load';

/**
 * `npm run bench:worker`: how fast worker processes apply a backlog of outcomes, exactly once.
 * Throwaway Postgres and Redis, the built api and worker; then for each worker count of
 * `--workers`, on a backlog of its own for N users of its own, warmed with a context call each
 * (so that every round's users start alike: a user's later outcomes cost more, their state
 * being larger), M requestIds issued, their decisions applied, the workers stopped, one outcome
 * per requestId posted through the API by `--connections` clients, so the queues hold exactly
 * the jobs the API makes:
 * the workers timed cold from their spawn to empty queues (the headline), exactly once; a no-op
 * BullMQ worker on as many jobs of the same size; the apply lag of outcomes posted open loop at
 * `--lag-rate` (1,000/s); with `--warm`, the workers timed again on a new backlog once they have
 * shared out the partitions (bench:load's method). docs/BENCHMARKS.md has the method.
 * `--webhooks` runs webhook deliveries to a slow receiver beside it (scripts/bench/webhook-load.ts).
 */

const PREFIX = 'bench';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? '') : fallback;
}
/** A number flag above 0 (`whole`: an integer; `orZero`: 0 allowed too). */
function positive(name: string, fallback: number, whole = true, orZero = false): number {
  const value = Number(flag(name, String(fallback)));
  if (!(value > 0 || (orZero && value === 0)) || (whole && !Number.isInteger(value)))
    throw new Error(`--${name} needs a ${orZero ? 'whole number, 0 or more' : `positive ${whole ? 'whole ' : ''}number`}`);
  return value;
}
const opts = {
  users: positive('users', 1000),
  outcomes: positive('outcomes', 40_000),
  workers: flag('workers', '1')
    .split(',')
    .map((w) => {
      const n = Number(w);
      if (!Number.isInteger(n) || n <= 0) throw new Error('--workers needs positive whole numbers, e.g. 1 or 1,2');
      return n;
    }),
  /** Clients posting the backlog (and issuing requestIds), as bench:load's connections. */
  connections: positive('connections', 50),
  /**
   * Outcomes per second of the apply-lag phase: bench:load's steady rate by default. Half the cold
   * rate overloads a 2-core machine, where the API posting them shares the cores with the workers.
   */
  lagRate: positive('lag-rate', STEADY_RATE, false),
  lagSeconds: positive('lag-seconds', 10, false),
  /** Seconds posted at the lag rate before the measured ones (the workers' first outcomes). */
  lagWarmupSeconds: positive('lag-warmup', 5, false),
  warm: process.argv.includes('--warm'),
  /** Decisions, each with its outcome, already in the tenant's month before the first round (scripts/bench/month-rows.ts). */
  monthRows: positive('month-rows', 0, true, true),
  /** Postgres as a production one runs (fsync, full-page writes), not throwaway. */
  durable: process.argv.includes('--durable'),
  /** Longest wait (s) for a quiet machine before each timed round; 0 skips it. */
  settle: Number(flag('settle', '30')),
  json: process.argv.includes('--json'),
  /** Webhooks on: a receiver answering after 2 s, and 50 events a second into the outbox while the backlog is applied. */
  webhooks: process.argv.includes('--webhooks'),
  cpuProfDir: process.argv.includes('--cpu-prof-dir') ? path.resolve(flag('cpu-prof-dir', '.')) : undefined,
};

async function run(dir: string, onCleanup: (step: () => Promise<void>) => void): Promise<WorkerBenchResult> {
  const source = runSource();
  const { services, db, key, env } = await startBenchBackend(dir, onCleanup, {
    account: 'bench',
    keyName: 'bench key',
    prefix: PREFIX,
    dbPoolSize: 4,
    durable: opts.durable,
  });
  const webhooks = opts.webhooks
    ? await startWebhookLoad({ db, account: 'bench', secret: BENCH_SECRET, eventsPerSecond: 50, delayMs: 2000 })
    : undefined;
  if (webhooks) Object.assign(env, webhooks.env);
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: null });
  onCleanup(async () => redis.disconnect());
  const keys = keysOf(env);
  const queues = new EventQueues(redis, keys);
  onCleanup(() => queues.close());
  const workerConfig = loadWorkerConfig(env);
  const workerConcurrency = workerConfig.WORKER_CONCURRENCY;
  const redisPort = new URL(services.redisUrl).port;
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  /** Each round's users, named by the round: its context calls and outcomes are theirs. */
  const usersOf = (round: number) => Array.from({ length: opts.users }, (_, i) => `bench-user-${round}-${String(i).padStart(5, '0')}`);
  let users = usersOf(0);
  const complexities = ['low', 'medium', 'high'];
  const contextCall = (i: number) => ({
    path: '/v1/context',
    body: { userId: users[i % users.length], task: 'Write the quarterly report', complexity: complexities[i % 3] },
  });

  const roles: Record<string, number[]> = {};
  const api = await startServer('api', nodeArgs('api', path.join(__dirname, '../api/main.js')), env, '/healthz');
  roles.api = [api.proc.child.pid!];
  const workerMain = path.join(__dirname, '../worker/main.js');
  const profArgs = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  let workers: Proc[] = [];
  const startWorkers = (n: number, args: string[] = []) => {
    workers = Array.from({ length: n }, () => startProc('worker', [...args, ...nodeArgs('worker', workerMain)], env));
    roles.worker = workers.map((w) => w.child.pid!);
    return workers;
  };
  const stopWorkers = async () => {
    await Promise.all(workers.map((w) => stopProc(w)));
    workers = [];
    roles.worker = [];
  };
  const drained = (what: string) => queues.drained(what, workers);
  const snapshot = () => cpuSnapshot(roles, dir, redisPort);
  const backlogFor = async (workerCount: number) => {
    log(`issuing ${opts.outcomes} requestIds, then posting an outcome for each with the worker(s) stopped…`);
    const backlog = await buildOutcomeBacklog({
      port: api.port,
      headers,
      count: opts.outcomes,
      concurrency: opts.connections,
      contextCall,
      drained,
      stopWorkers,
      queues,
    });
    mustBeRunning(api.proc);
    log(
      `${backlog.accepted} outcomes accepted in ${backlog.jobs} jobs (${JSON.stringify(backlog.statuses)}); ${workerCount} worker(s) next…`,
    );
    return backlog;
  };

  if (opts.monthRows > 0) {
    log(`putting a month of ${opts.monthRows} decisions and their outcomes in first…`);
    await fillMonth(db, { accountId: 'bench', environment: 'test' }, users, opts.monthRows);
  }
  startWorkers(1);
  const rounds: WorkerBenchResult['rounds'] = [];
  for (const [round, workerCount] of opts.workers.entries()) {
    // (The workers of the round before, or the first one, apply the warm-up's decisions.)
    users = usersOf(round);
    log(`warming ${users.length} users of round ${round + 1} with a context call each…`);
    await drive(api.port, headers, users.length, opts.connections, contextCall);
    await drained('the warm-up decisions to be applied');
    const backlog = await backlogFor(workerCount);
    // Measured before any worker runs: the no-op baseline's jobs carry as many bytes.
    const jobBytes = meanBytes(await queues.sampleOutcomeJobBytes(100));
    await settleMachine(opts.settle);
    const cold = await timeColdStart({
      db,
      queues,
      backlog,
      workerCount,
      startWorkers: (n) => startWorkers(n, profArgs),
      snapshot,
      selfRole: 'bench',
    });
    log(`${workerCount} worker(s), cold: ${cold.outcomesPerSec} outcomes/s; exactly once: ${cold.check.exactlyOnce}`);
    await stopWorkers();

    await settleMachine(opts.settle);
    log(`no-op baseline: ${cold.jobs} jobs of ${jobBytes} bytes, ${workerCount} process(es)…`);
    const noop = await noopBaseline({
      redis,
      env,
      prefix: `${PREFIX}-noop`,
      jobs: cold.jobs,
      jobBytes,
      processes: workerCount,
      concurrency: workerConcurrency,
      roles,
      snapshot,
      selfRole: 'bench',
    });
    log(`no-op baseline: ${noop.jobsPerSec} jobs/s`);

    // The next round's decisions are applied by these workers (stopped before its outcomes).
    startWorkers(workerCount);
    const applyLag = await applyLagPhase({
      db,
      port: api.port,
      headers,
      connections: opts.connections,
      contextCall,
      drained,
      rate: opts.lagRate,
      seconds: opts.lagSeconds,
      warmupSeconds: opts.lagWarmupSeconds,
    });
    log(`apply lag at ${applyLag.rate}/s: p50 ${applyLag.lag.p50Ms} ms, p99 ${applyLag.lag.p99Ms} ms, max ${applyLag.lag.maxMs} ms`);

    let warm;
    if (opts.warm) {
      const again = await backlogFor(workerCount);
      await settleMachine(opts.settle);
      warm = await timeBacklog({
        db,
        queues,
        backlog: again,
        workerCount,
        startWorkers: (n) => startWorkers(n),
        snapshot,
        selfRole: 'bench',
      });
      log(`${workerCount} worker(s), warm: ${warm.outcomesPerSec} outcomes/s; exactly once: ${warm.check.exactlyOnce}`);
    }
    rounds.push({
      workers: workerCount,
      cold,
      noop,
      vsNoop: vsNoop(cold, noop),
      applyLag,
      ...(warm ? { warm } : {}),
    });
  }
  await stopWorkers();
  await stopProc(api.proc);
  const webhookReport: WebhookLoadReport | undefined = await webhooks?.stop();
  // Bytes per row of what the bench wrote: a month filled first is mostly rows of its own shape.
  const storage = opts.monthRows > 0 ? [] : await tableSizes(db);
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    command: `node dist/scripts/bench-worker.js ${process.argv.slice(2).join(' ')}`.trim(),
    source,
    machine: { cpu: cpus[0]?.model ?? 'unknown', cores: cpus.length, node: process.version },
    settings: {
      users: opts.users,
      monthRows: opts.monthRows,
      durable: opts.durable,
      outcomes: opts.outcomes,
      connections: opts.connections,
      batchSize: workerConfig.WORKER_BATCH_SIZE,
      concurrency: workerConcurrency,
      queuePartitions: keys.queuePrefixes.length,
      lagSeconds: opts.lagSeconds,
      lagRate: opts.lagRate,
    },
    rounds,
    webhooks: webhookReport ?? null,
    storage,
  };
}

withCleanup('cos-bench-worker-', run).then(
  (result) => {
    if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else printWorkerReport(result);
    const passed = result.rounds.every(
      (r) => r.cold.check.exactlyOnce && (r.warm?.check.exactlyOnce ?? true) && r.applyLag.missing === 0 && r.noop.failed === 0,
    );
    process.exit(passed ? 0 : 1);
  },
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
