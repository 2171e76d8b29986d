import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import path from 'node:path';
import { nodeArgs } from '../../shared/process/node-flags';
import { HOST, log, sleep, startBenchBackend, startProc, startServer, waitUntil } from '../bench/processes';
import { EventQueues, keysOf } from '../bench/event-queues';
import { machineDescription, runSource } from '../bench/provenance';
import { outcomeLedger } from './ledger';
import { signalTree } from '../process-tree';

/**
 * `npm run soak -- --scenario postgres-outage` (or `postgres-freeze`, `redis-freeze`): the built
 * api and one worker on a throwaway Postgres and Redis under a steady `--rate` context + outcome
 * pairs a second over `--users` users, while Postgres is stopped — or Postgres or Redis frozen,
 * every process of it stopped with SIGSTOP — for `--down` seconds. Measures what an operator
 * sees: how long after the dependency's return every outcome accepted before it is applied, how
 * many lines the worker logged, the answers by status, and whether each accepted outcome was
 * applied exactly once with nothing parked.
 */
export type Fault = 'postgres-outage' | 'postgres-freeze' | 'redis-freeze';

export interface OutageOptions {
  fault: Fault;
  downS: number;
  rate: number;
  users: number;
  /** Traffic before the fault, and after its end. */
  warmS: number;
}

export interface OutageResult {
  command: string;
  date: string;
  source: ReturnType<typeof runSource>;
  machine: ReturnType<typeof machineDescription>;
  settings: OutageOptions;
  /** Outcomes accepted (202) by the end of the fault, and event jobs waiting when it ended. */
  acceptedDuringOutage: number;
  backlogJobsAtReturn: number;
  /** Seconds from the dependency answering again until every outcome accepted before that was applied. */
  backlogAppliedS: number | null;
  /** Answers by status, before / during / after the outage. */
  statuses: Record<'before' | 'during' | 'after', Record<string, number>>;
  /** Milliseconds from sending to the answer, per phase: median, p99 and the longest. */
  latencyMs: Record<'before' | 'during' | 'after', { p50: number; p99: number; max: number }>;
  workerLogLines: number;
  apiLogLines: number;
  outcomes: { accepted: number; applied: number; lost: number; appliedTwice: number };
  failedJobs: number;
  pass: boolean;
}

type Phase = keyof OutageResult['statuses'];

export async function runDependencyFault(
  dir: string,
  onCleanup: (step: () => Promise<void>) => void,
  o: OutageOptions,
): Promise<OutageResult> {
  const { services, db, key, env } = await startBenchBackend(dir, onCleanup, {
    account: 'soak-outage',
    keyName: 'soak outage key',
    prefix: 'soak',
    dbPoolSize: 4,
  });
  const queues = new EventQueues(redisFor(services.redisUrl, onCleanup), keysOf(env));
  onCleanup(() => queues.close());
  const api = await startServer('api', nodeArgs('api', path.join(__dirname, '../../api/main.js')), env, '/healthz');
  const worker = startProc('worker', nodeArgs('worker', path.join(__dirname, '../../worker/main.js')), env);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const call = (method: string, route: string, body: unknown) =>
    new Promise<{ status: number; body: Record<string, unknown> | undefined }>((resolve) => {
      const text = JSON.stringify(body);
      const req = http.request(
        {
          host: HOST,
          port: api.port,
          method,
          path: route,
          agent,
          timeout: 10_000,
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) },
        },
        (res) => {
          let data = '';
          res.on('data', (chunk: Buffer) => (data += chunk.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: data ? (JSON.parse(data) as Record<string, unknown>) : undefined }),
          );
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve({ status: 0, body: undefined }));
      req.end(text);
    });

  const users = Array.from({ length: o.users }, (_, i) => `outage-user-${i}`);
  const statuses: OutageResult['statuses'] = { before: {}, during: {}, after: {} };
  let phase: Phase = 'before';
  const latencies: Record<Phase, number[]> = { before: [], during: [], after: [] };
  const count = (status: number, ms: number) => {
    statuses[phase][status] = (statuses[phase][status] ?? 0) + 1;
    latencies[phase].push(ms);
  };
  const accepted = new Set<string>();
  const acceptedAt = new Map<string, number>();
  let stopping = false;
  const inFlight = new Set<Promise<void>>();

  /** One pair: a context call, then its outcome, retried each second until acknowledged (as the contract asks). */
  const timed = async (method: string, route: string, body: unknown) => {
    const started = performance.now();
    const answer = await call(method, route, body);
    count(answer.status, performance.now() - started);
    return answer;
  };
  const pair = async (userId: string) => {
    const context = await timed('POST', '/v1/context', { userId, task: 'Reconcile the ledger', complexity: 'medium' });
    if (context.status !== 200) return;
    const requestId = context.body!.requestId as string;
    for (;;) {
      const outcome = await timed('POST', '/v1/outcome', { requestId, started: true, completed: Math.random() < 0.5 });
      if (outcome.status === 202) {
        accepted.add(requestId);
        acceptedAt.set(requestId, Date.now());
        return;
      }
      if (outcome.status !== 503 && outcome.status !== 0) return;
      if (stopping) return;
      await sleep(1000);
    }
  };

  log(`warming ${o.users} users…`);
  for (let i = 0; i < users.length; i += 20) await Promise.all(users.slice(i, i + 20).map(pair));
  await waitUntil('the warm-up to be applied', 120_000, 500, async () => ((await queues.counts()).pending === 0 ? true : undefined));

  log(`traffic: ${o.rate} pairs/s`);
  let next = 0;
  const ticker = setInterval(() => {
    const running = pair(users[next++ % users.length]!).finally(() => inFlight.delete(running));
    inFlight.add(running);
  }, 1000 / o.rate);

  await sleep(o.warmS * 1000);
  const linesBefore = worker.lines();
  const service = o.fault === 'redis-freeze' ? services.redis! : services.postgres!;
  if (o.fault === 'postgres-outage') await service.stop('clean');
  else signalTree(service.child.pid!, 'SIGSTOP');
  phase = 'during';
  log(`${o.fault}: for ${o.downS} s`);
  await sleep(o.downS * 1000);
  // Redis answers nothing while frozen: the backlog is counted once it is back.
  const waitingBefore = o.fault === 'redis-freeze' ? undefined : (await queues.counts()).pending;
  const acceptedDuringOutage = accepted.size;
  if (o.fault === 'postgres-outage') await service.start();
  else signalTree(service.child.pid!, 'SIGCONT');
  const returned = Date.now();
  phase = 'after';
  const backlogJobsAtReturn = waitingBefore ?? (await queues.counts()).pending;
  log(`back; ${backlogJobsAtReturn} event jobs waiting`);
  const waiting = new Set([...accepted].filter((id) => (acceptedAt.get(id) ?? 0) <= returned));
  let backlogAppliedS: number | null = null;
  await waitUntil('the backlog to be applied', 10 * 60_000, 250, async () => {
    const ledger = await outcomeLedger(db, waiting).catch(() => undefined);
    if (ledger?.lost.length !== 0) return undefined;
    backlogAppliedS = Math.round((Date.now() - returned) / 100) / 10;
    return true;
  }).catch(() => undefined);
  log(`backlog applied ${backlogAppliedS ?? 'not'} s after the return`);
  await sleep(o.warmS * 1000);
  clearInterval(ticker);
  stopping = true;
  await Promise.all(inFlight);
  await waitUntil('the queue to drain', 5 * 60_000, 500, async () => {
    const counts = await queues.counts();
    return counts.pending + counts.delayed === 0 ? true : undefined;
  }).catch(() => undefined);
  const ledger = await outcomeLedger(db, accepted);
  const failedJobs = (await queues.counts()).failed;
  const pass = ledger.lost.length === 0 && ledger.appliedTwice === 0 && failedJobs === 0 && backlogAppliedS !== null;
  return {
    command: `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    source: runSource(),
    machine: machineDescription(),
    settings: o,
    acceptedDuringOutage,
    backlogJobsAtReturn,
    backlogAppliedS,
    statuses,
    latencyMs: {
      before: summary(latencies.before),
      during: summary(latencies.during),
      after: summary(latencies.after),
    },
    workerLogLines: worker.lines() - linesBefore,
    apiLogLines: api.proc.lines(),
    outcomes: { accepted: ledger.accepted, applied: ledger.applied, lost: ledger.lost.length, appliedTwice: ledger.appliedTwice },
    failedJobs,
    pass,
  };
}

function summary(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), max: Math.round((sorted.at(-1) ?? 0) * 10) / 10 };
}

function redisFor(url: string, onCleanup: (step: () => Promise<void>) => void): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  onCleanup(async () => redis.disconnect());
  return redis;
}

export function printOutageReport(r: OutageResult): void {
  const lines = [
    `${r.settings.fault} for ${r.settings.downS} s under ${r.settings.rate} context + outcome pairs/s (${r.settings.users} users)`,
    `outcomes accepted by its end: ${r.acceptedDuringOutage}; event jobs waiting then: ${r.backlogJobsAtReturn}`,
    `backlog applied ${r.backlogAppliedS ?? 'NOT'} s after the return`,
    `answers before: ${JSON.stringify(r.statuses.before)}; during: ${JSON.stringify(r.statuses.during)}; after: ${JSON.stringify(r.statuses.after)}`,
    `latency ms (p50 / p99 / max) before: ${Object.values(r.latencyMs.before).join(' / ')}; during: ${Object.values(r.latencyMs.during).join(' / ')}; after: ${Object.values(r.latencyMs.after).join(' / ')}`,
    `worker log lines from the outage on: ${r.workerLogLines}; api log lines in all: ${r.apiLogLines}`,
    `outcomes: ${r.outcomes.accepted} accepted, ${r.outcomes.applied} applied, ${r.outcomes.lost} lost, ${r.outcomes.appliedTwice} applied twice; failed jobs: ${r.failedJobs}`,
    r.pass ? 'PASS' : 'FAIL',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
