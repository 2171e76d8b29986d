import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { redisKeys } from '../shared/cache/keys';
import type { Db } from '../shared/db/database';
import { EVENTS_QUEUE } from '../shared/jobs/catalog';
import { costPer, cpuPercent, cpuSnapshot, type Roles } from './bench/cpu';
import { drive } from './bench/drive';
import {
  log,
  mustBeRunning,
  startBenchBackend,
  startProc,
  startServer,
  stopProc,
  waitUntil,
  withCleanup,
  type Proc,
} from './bench/processes';

/**
 * `npm run bench:worker`: how fast worker processes apply a backlog of outcomes, exactly once.
 * Throwaway Postgres and Redis, the built api and worker; N users warmed with a context call
 * each, M requestIds issued (their decisions applied), then the worker stopped and one outcome
 * per requestId posted through the API, so the queue holds exactly the jobs the API makes.
 * Then W workers start on that backlog and are timed until it is applied. `--workers 1,2`
 * measures each count in turn on a backlog of its own. Prints outcomes/s, the exactly-once
 * check and CPU ms per outcome of the worker, Postgres and Redis (or, with --json, JSON).
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
  json: process.argv.includes('--json'),
  cpuProfDir: process.argv.includes('--cpu-prof-dir') ? path.resolve(flag('cpu-prof-dir', '.')) : undefined,
};

interface Totals {
  outcomes: number;
  interactions: number;
  versions: number;
}
async function totals(db: Db): Promise<Totals> {
  const { rows } = await sql<Totals>`
    select (select count(*) from outcomes)::int as outcomes,
           (select coalesce(sum(interaction_count), 0) from profiles)::int as interactions,
           (select count(*) from profile_versions where cause = 'outcome')::int as versions`.execute(db);
  return rows[0]!;
}

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
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: null });
  onCleanup(async () => redis.disconnect());
  const queue = new Queue(EVENTS_QUEUE, { connection: redis, prefix: redisKeys(PREFIX).queuePrefix });
  queue.on('error', () => undefined);
  onCleanup(() => queue.close());
  const redisPort = new URL(services.redisUrl).port;
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const users = Array.from({ length: opts.users }, (_, i) => `bench-user-${String(i).padStart(5, '0')}`);
  const complexities = ['low', 'medium', 'high'];
  const contextCall = (i: number) => ({
    path: '/v1/context',
    body: { userId: users[i % users.length], task: 'Write the quarterly report', complexity: complexities[i % 3] },
  });

  const roles: Record<string, number[]> = {};
  const api = await startServer('api', [path.join(__dirname, '../api/main.js')], env, '/healthz');
  roles.api = [api.proc.child.pid!];
  const workerMain = path.join(__dirname, '../worker/main.js');
  const profArgs = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  let workers: Proc[] = [];
  const startWorkers = (n: number, args: string[] = []) => {
    workers = Array.from({ length: n }, () => startProc('worker', [...args, workerMain], env));
    roles.worker = workers.map((w) => w.child.pid!);
  };
  const counts = async () => {
    const c = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'failed');
    return { pending: (c.wait ?? 0) + (c.prioritized ?? 0) + (c.active ?? 0), delayed: c.delayed ?? 0, failed: c.failed ?? 0 };
  };
  const drained = (what: string) =>
    waitUntil(what, 300_000, 100, async () => {
      mustBeRunning(...workers);
      const c = await counts();
      if (c.failed > 0) throw new Error(`${c.failed} jobs failed: ${workers.map((w) => w.output()).join('\n')}`);
      return c.pending + c.delayed === 0 ? true : undefined;
    });

  startWorkers(1);
  log(`warming ${users.length} users with a context call each…`);
  await drive(api.port, headers, users.length, CONCURRENCY, contextCall);
  await drained('the warm-up decisions to be applied');

  const rounds = [];
  for (const workerCount of opts.workers) {
    log(`issuing ${opts.outcomes} requestIds…`);
    const ids: string[] = [];
    await drive(api.port, headers, opts.outcomes, CONCURRENCY, contextCall, (_i, status, body) => {
      if (status === 200) ids.push((JSON.parse(body) as { requestId: string }).requestId);
    });
    await drained('the decisions of the issued requestIds to be applied');
    log('stopping the worker(s); posting the outcomes…');
    await Promise.all(workers.map((w) => stopProc(w)));
    workers = [];
    roles.worker = [];
    const outcomeCall = (i: number) => ({
      path: '/v1/outcome',
      body: { requestId: ids[i], started: true, completed: i % 3 !== 0, satisfaction: (i % 5) / 4 },
    });
    const statuses = await drive(api.port, headers, ids.length, CONCURRENCY, outcomeCall);
    const accepted = statuses[202] ?? 0;
    const jobs = (await counts()).pending;
    mustBeRunning(api.proc);
    log(`${accepted} outcomes accepted in ${jobs} jobs (${JSON.stringify(statuses)}); starting ${workerCount} worker(s)…`);

    const before = await totals(db);
    const cpuBefore = cpuSnapshot(roles, dir, redisPort);
    const t0 = performance.now();
    startWorkers(workerCount, profArgs);
    let firstTaken = 0;
    await waitUntil('the outcome backlog to be applied', 600_000, 10, async () => {
      mustBeRunning(...workers);
      const c = await counts();
      if (!firstTaken && c.pending < jobs) firstTaken = performance.now();
      if (c.delayed > 0 || c.failed > 0) return true; // retries would wait in backoff: report them below
      return c.pending === 0 ? true : undefined;
    });
    const end = performance.now();
    const seconds = (end - (firstTaken || t0)) / 1000;
    const cpu: Roles = cpuPercent(cpuBefore, cpuSnapshot(roles, dir, redisPort), (end - t0) / 1000, 'bench');
    const after = await totals(db);
    const { failed, delayed } = await counts();
    const applied = after.outcomes - before.outcomes;
    const interactions = after.interactions - before.interactions;
    const versions = after.versions - before.versions;
    const exactlyOnce = applied === accepted && interactions === accepted && versions === accepted && failed === 0 && delayed === 0;
    const cost = costPer({ cpu, seconds: (end - t0) / 1000 }, applied);
    const round = {
      workers: workerCount,
      accepted,
      jobs,
      outcomesPerSec: Math.round(applied / seconds),
      seconds: Math.round(seconds * 100) / 100,
      check: { applied, interactions, versions, failed, delayed, exactlyOnce },
      cpuMsPerOutcome: cost.cpuMsPerItem,
      cpuPercentOfOneCore: cpu,
    };
    log(`${workerCount} worker(s): ${round.outcomesPerSec} outcomes/s; exactly once: ${exactlyOnce}`);
    rounds.push(round);
    // The next round's decisions are applied by the workers of this one (stopped before its outcomes).
    if (opts.cpuProfDir) {
      await Promise.all(workers.map((w) => stopProc(w)));
      startWorkers(1);
    }
  }
  await Promise.all(workers.map((w) => stopProc(w)));
  await stopProc(api.proc);
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
    },
    rounds,
  };
}

function print(result: Awaited<ReturnType<typeof run>>): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`\nsource ${result.source}; ${result.machine.cpu}, ${result.machine.cores} cores, node ${result.machine.node}; ${result.date}`);
  out(`${result.settings.users} users, ${result.settings.outcomes} outcomes per round\n`);
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
