import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../shared/db/database';
import { costPer, cpuPercent, type CpuSnapshot, type Roles } from './cpu';
import { drive } from './drive';
import type { EventQueues } from './event-queues';
import { mustBeRunning, waitUntil, type Proc } from './processes';

/**
 * Worker throughput on an outcome backlog, shared by bench:worker and bench:load: the backlog is
 * made through the API (so the queue holds exactly the jobs the API makes, outcomes grouped in
 * `outcomes` jobs, docs/adr/0010-group-commit.md), then W worker processes are timed until it is
 * applied, and the outcomes, interactions and profile versions they wrote are checked against
 * the outcomes accepted: exactly once.
 */

const issued = z.object({ requestId: z.string() });
/** The requestId of a 200 answer to POST /v1/context. */
export const requestIdOf = (body: string): string => issued.parse(JSON.parse(body)).requestId;

export interface Totals {
  outcomes: number;
  interactions: number;
  versions: number;
}
/** What the workers have written so far: outcome rows, interactions counted on profiles, outcome versions. */
export async function totals(db: Db): Promise<Totals> {
  const { rows } = await sql<Totals>`
    select (select count(*) from outcomes)::int as outcomes,
           (select coalesce(sum(interaction_count), 0) from profiles)::int as interactions,
           (select count(*) from profile_versions where cause = 'outcome')::int as versions`.execute(db);
  return rows[0]!;
}

export interface Backlog {
  /** Outcomes the API accepted (202) into the queue. */
  accepted: number;
  /** The jobs they wait in. */
  jobs: number;
  statuses: Record<number, number>;
}

/**
 * Issues `count` requestIds with context calls, waits until the running workers applied their
 * decisions, stops the workers, then posts one outcome per requestId.
 */
export async function buildOutcomeBacklog(o: {
  port: number;
  headers: Record<string, string>;
  count: number;
  concurrency: number;
  contextCall: (i: number) => { path: string; body: unknown };
  drained: (what: string) => Promise<unknown>;
  stopWorkers: () => Promise<void>;
  queues: EventQueues;
}): Promise<Backlog> {
  const ids: string[] = [];
  await drive(o.port, o.headers, o.count, o.concurrency, o.contextCall, (_i, status, body) => {
    if (status === 200) ids.push(requestIdOf(body));
  });
  await o.drained('the decisions of the issued requestIds to be applied');
  await o.stopWorkers();
  const outcomeCall = (i: number) => ({
    path: '/v1/outcome',
    body: { requestId: ids[i], started: true, completed: i % 3 !== 0, satisfaction: (i % 5) / 4 },
  });
  const statuses = await drive(o.port, o.headers, ids.length, o.concurrency, outcomeCall);
  return { accepted: statuses[202] ?? 0, jobs: (await o.queues.counts()).pending, statuses };
}

export interface WorkerRound {
  workers: number;
  accepted: number;
  jobs: number;
  /** Outcomes applied per second, from the moment every worker could take jobs to an empty queue. */
  outcomesPerSec: number;
  seconds: number;
  check: { applied: number; interactions: number; versions: number; failed: number; delayed: number; exactlyOnce: boolean };
  cpuMsPerOutcome: Roles;
  cpuPercentOfOneCore: Roles;
}

/**
 * Starts `workerCount` workers on a backlog of `backlog.accepted` outcomes in `backlog.jobs`
 * jobs and times them until the queues are empty. The queues are paused until the workers have
 * shared out the partitions and each consumes its own, so that neither the time nor the CPU
 * counted includes a process starting up or a partition changing hands (with several workers,
 * the first would otherwise work on every partition while the others boot). `startWorkers`
 * starts them (and makes `snapshot` count their CPU); they are left running.
 */
/** What a timed round of workers on a backlog needs, warm (here) or cold (cold-start.ts). */
export interface BacklogTiming {
  db: Db;
  queues: EventQueues;
  backlog: Pick<Backlog, 'accepted' | 'jobs'>;
  workerCount: number;
  /** Spawns the workers (and makes `snapshot` count their CPU); they are left running. */
  startWorkers: (count: number) => Proc[];
  snapshot: () => CpuSnapshot;
  selfRole: string;
}

export async function timeBacklog(o: BacklogTiming): Promise<WorkerRound> {
  const before = await totals(o.db);
  await o.queues.pause();
  const workers = o.startWorkers(o.workerCount);
  await waitUntil('the workers to share out the queue partitions', 60_000, 20, async () => {
    mustBeRunning(...workers);
    return (await o.queues.settled(o.workerCount)) ? true : undefined;
  });
  const cpuBefore = o.snapshot();
  const t0 = performance.now();
  await o.queues.resume();
  await waitUntil('the outcome backlog to be applied', 600_000, 10, async () => {
    mustBeRunning(...workers);
    const c = await o.queues.counts();
    if (c.delayed > 0 || c.failed > 0) return true; // retries would wait in backoff: report them below
    return c.pending === 0 ? true : undefined;
  });
  const end = performance.now();
  const seconds = (end - t0) / 1000;
  const cpu = cpuPercent(cpuBefore, o.snapshot(), seconds, o.selfRole);
  const check = await exactlyOnceCheck(o.db, o.queues, before, o.backlog.accepted);
  return {
    workers: o.workerCount,
    accepted: o.backlog.accepted,
    jobs: o.backlog.jobs,
    outcomesPerSec: Math.round(check.applied / seconds),
    seconds: Math.round(seconds * 100) / 100,
    check,
    cpuMsPerOutcome: costPer({ cpu, seconds }, check.applied).cpuMsPerItem,
    cpuPercentOfOneCore: cpu,
  };
}

export type ExactlyOnceCheck = WorkerRound['check'];

/**
 * Whether the workers applied each of the `accepted` outcomes exactly once since `before`: as
 * many new outcome rows, interactions and outcome versions as outcomes, no job failed or delayed.
 */
export async function exactlyOnceCheck(db: Db, queues: EventQueues, before: Totals, accepted: number): Promise<ExactlyOnceCheck> {
  const after = await totals(db);
  const { failed, delayed } = await queues.counts();
  const applied = after.outcomes - before.outcomes;
  const interactions = after.interactions - before.interactions;
  const versions = after.versions - before.versions;
  const exactlyOnce = applied === accepted && interactions === accepted && versions === accepted && failed === 0 && delayed === 0;
  return { applied, interactions, versions, failed, delayed, exactlyOnce };
}
