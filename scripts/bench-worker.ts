import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { cpuSnapshot, settleMachine } from './bench/cpu';
import { drive } from './bench/drive';
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
import { EventQueues, keysOf } from './bench/event-queues';
import { tableSizes } from './bench/table-sizes';
import { buildOutcomeBacklog, timeBacklog } from './bench/worker-backlog';
import { startWebhookLoad, type WebhookLoadReport } from './bench/webhook-load';
import { apiNodeArgs } from '../api/node-flags';

/**
 * `npm run bench:worker`: how fast worker processes apply a backlog of outcomes, exactly once.
 * Throwaway Postgres and Redis, the built api and worker; N users warmed with a context call
 * each, M requestIds issued (their decisions applied), then the worker stopped and one outcome
 * per requestId posted through the API, so the queue holds exactly the jobs the API makes.
 * Then W workers start on that backlog and are timed until it is applied. `--workers 1,2`
 * measures each count in turn on a backlog of its own. Prints outcomes/s, the exactly-once
 * check and CPU ms per outcome of the worker, Postgres and Redis, and the bytes per row of the
 * tables that grow with traffic (or, with --json, JSON). `--webhooks` runs webhook deliveries to a
 * slow receiver beside it (scripts/bench/webhook-load.ts).
 */

const PREFIX = 'bench';
const CONCURRENCY = 64;

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? '') : fallback;
}
function positive(name: string, fallback: number): number {
  const value = Number(flag(name, String(fallback)));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive whole number`);
  return value;
}
const opts = {
  users: positive('users', 1000),
  outcomes: positive('outcomes', 20_000),
  workers: flag('workers', '1')
    .split(',')
    .map((w) => {
      const n = Number(w);
      if (!Number.isInteger(n) || n <= 0) throw new Error('--workers needs positive whole numbers, e.g. 1 or 1,2');
      return n;
    }),
  /** Longest wait (s) for a quiet machine before each timed round; 0 skips it. */
  settle: Number(flag('settle', '30')),
  json: process.argv.includes('--json'),
  /** Webhooks on: a receiver answering after 2 s, and 50 events a second into the outbox while the backlog is applied. */
  webhooks: process.argv.includes('--webhooks'),
  cpuProfDir: process.argv.includes('--cpu-prof-dir') ? path.resolve(flag('cpu-prof-dir', '.')) : undefined,
};

async function run(dir: string, onCleanup: (step: () => Promise<void>) => void) {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: path.join(__dirname, '../..'), encoding: 'utf8' }).stdout?.trim() ?? '';
  const source =
    process.env.BENCH_SOURCE ?? `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain') ? ' + uncommitted' : ''}`;
  const { services, db, key, env } = await startBenchBackend(dir, onCleanup, {
    account: 'bench',
    keyName: 'bench key',
    prefix: PREFIX,
    dbPoolSize: 4,
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
  const redisPort = new URL(services.redisUrl).port;
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const users = Array.from({ length: opts.users }, (_, i) => `bench-user-${String(i).padStart(5, '0')}`);
  const complexities = ['low', 'medium', 'high'];
  const contextCall = (i: number) => ({
    path: '/v1/context',
    body: { userId: users[i % users.length], task: 'Write the quarterly report', complexity: complexities[i % 3] },
  });

  const roles: Record<string, number[]> = {};
  const api = await startServer('api', apiNodeArgs(path.join(__dirname, '../api/main.js')), env, '/healthz');
  roles.api = [api.proc.child.pid!];
  const workerMain = path.join(__dirname, '../worker/main.js');
  const profArgs = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  let workers: Proc[] = [];
  const startWorkers = (n: number, args: string[] = []) => {
    workers = Array.from({ length: n }, () => startProc('worker', [...args, workerMain], env));
    roles.worker = workers.map((w) => w.child.pid!);
  };
  const drained = (what: string) => queues.drained(what, workers);

  startWorkers(1);
  log(`warming ${users.length} users with a context call each…`);
  await drive(api.port, headers, users.length, CONCURRENCY, contextCall);
  await drained('the warm-up decisions to be applied');

  const rounds = [];
  for (const workerCount of opts.workers) {
    log(`issuing ${opts.outcomes} requestIds, then posting an outcome for each with the worker(s) stopped…`);
    const backlog = await buildOutcomeBacklog({
      port: api.port,
      headers,
      count: opts.outcomes,
      concurrency: CONCURRENCY,
      contextCall,
      drained,
      stopWorkers: async () => {
        await Promise.all(workers.map((w) => stopProc(w)));
        workers = [];
        roles.worker = [];
      },
      queues,
    });
    mustBeRunning(api.proc);
    log(
      `${backlog.accepted} outcomes accepted in ${backlog.jobs} jobs (${JSON.stringify(backlog.statuses)}); starting ${workerCount} worker(s)…`,
    );
    await settleMachine(opts.settle);
    const round = await timeBacklog({
      db,
      queues,
      backlog,
      workerCount,
      startWorkers: (n) => {
        startWorkers(n, profArgs);
        return workers;
      },
      snapshot: () => cpuSnapshot(roles, dir, redisPort),
      selfRole: 'bench',
    });
    log(`${workerCount} worker(s): ${round.outcomesPerSec} outcomes/s; exactly once: ${round.check.exactlyOnce}`);
    rounds.push(round);
    // The next round's decisions are applied by the workers of this one (stopped before its outcomes).
    if (opts.cpuProfDir) {
      await Promise.all(workers.map((w) => stopProc(w)));
      startWorkers(1);
    }
  }
  await Promise.all(workers.map((w) => stopProc(w)));
  await stopProc(api.proc);
  const webhookReport: WebhookLoadReport | undefined = await webhooks?.stop();
  const storage = await tableSizes(db);
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    command: `npm run bench:worker -- ${process.argv.slice(2).join(' ')}`.trim(),
    source,
    machine: { cpu: cpus[0]?.model ?? 'unknown', cores: cpus.length, node: process.version },
    settings: {
      users: opts.users,
      outcomes: opts.outcomes,
      batchSize: env.WORKER_BATCH_SIZE ?? 'default',
      concurrency: env.WORKER_CONCURRENCY ?? 'default',
      queuePartitions: keys.queuePrefixes.length,
    },
    rounds,
    webhooks: webhookReport ?? null,
    storage,
  };
}

function print(result: Awaited<ReturnType<typeof run>>): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`\nsource ${result.source}; ${result.machine.cpu}, ${result.machine.cores} cores, node ${result.machine.node}; ${result.date}`);
  out(
    `${result.settings.users} users, ${result.settings.outcomes} outcomes per round, ${result.settings.queuePartitions} queue partitions\n`,
  );
  for (const r of result.rounds) {
    const ms = Object.entries(r.cpuMsPerOutcome)
      .map(([role, v]) => `${role} ${v}`)
      .join(', ');
    out(`${r.workers} worker(s): ${r.outcomesPerSec} outcomes/s (${r.accepted} in ${r.jobs} jobs, ${r.seconds} s)`);
    out(
      `  exactly once: ${r.check.exactlyOnce} (rows ${r.check.applied}, interactions ${r.check.interactions}, versions ${r.check.versions}, failed ${r.check.failed})`,
    );
    out(`  CPU ms per outcome: ${ms}; other work on the machine: ${r.cpuPercentOfOneCore.other ?? 0}% of a core`);
  }
  if (result.webhooks) {
    const w = result.webhooks;
    out(
      `webhooks on: ${w.eventsRecorded} events recorded, ${w.requestsReceived} deliveries received, the receiver answering after ${w.receiverDelayMs} ms`,
    );
  }
  out(`\nstorage: ${result.storage.map((s) => `${s.table} ${s.rows} rows, ${s.bytesPerRow ?? '-'} bytes/row`).join('; ')}`);
}

withCleanup('cos-bench-worker-', run).then(
  (result) => {
    if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else print(result);
    process.exit(result.rounds.every((r) => r.check.exactlyOnce) ? 0 : 1);
  },
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
