import { performance } from 'node:perf_hooks';
import { costPer, cpuPercent, pidCpuPercent, type Roles } from './cpu';
import { rss, type Rss } from './memory';
import { mustBeRunning, waitUntil } from './processes';
import { cpuMsPerItem, perSecond } from './worker-figures';
import { exactlyOnceCheck, totals, type BacklogTiming, type ExactlyOnceCheck } from './worker-backlog';

/**
 * bench:worker's headline: W worker processes started cold on a backlog, the clock and the CPU
 * count starting when they are spawned, with nothing paused: their start-up, joining the group
 * and sharing out the partitions (docs/adr/0015-worker-partition-ownership.md) are part of the
 * time, as they are when a deployment restarts its workers behind a queue that grew meanwhile.
 */

export interface ColdRound {
  workers: number;
  accepted: number;
  jobs: number;
  /** Outcomes applied per second, from the spawn of the workers to empty queues. */
  outcomesPerSec: number;
  jobsPerSec: number;
  seconds: number;
  check: ExactlyOnceCheck;
  /** By role: the worker processes summed, Postgres, Redis, the bench. */
  cpuMsPerOutcome: Roles;
  cpuPercentOfOneCore: Roles;
  /** Each worker process on its own, in the order they were spawned. */
  perWorker: Array<{ pid: number; cpuMsPerOutcome: number; cpuPercentOfOneCore: number }>;
  /** The single process (or Postgres, all its backends) that used the most of a core. */
  busiest: { process: string; cpuPercentOfOneCore: number };
  /** Resident memory of the workers once the backlog was applied. */
  rssAfter: Rss;
}

export async function timeColdStart(o: BacklogTiming): Promise<ColdRound> {
  const before = await totals(o.db);
  const cpuBefore = o.snapshot();
  const t0 = performance.now();
  const workers = o.startWorkers(o.workerCount);
  await waitUntil('the outcome backlog to be applied', 600_000, 10, async () => {
    mustBeRunning(...workers);
    const c = await o.queues.counts();
    if (c.delayed > 0 || c.failed > 0) return true; // retries would wait in backoff: the check reports them
    return c.pending === 0 ? true : undefined;
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpuAfter = o.snapshot();
  const rssAfter = rss(workers.map((w) => w.child.pid!));
  const cpu = cpuPercent(cpuBefore, cpuAfter, seconds, o.selfRole);
  const check = await exactlyOnceCheck(o.db, o.queues, before, o.backlog.accepted);
  const pids = workers.map((w) => w.child.pid!);
  const perWorker = pidCpuPercent(cpuBefore, cpuAfter, seconds, pids).map((pct, i) => ({
    pid: pids[i]!,
    cpuMsPerOutcome: cpuMsPerItem(pct, seconds, check.applied),
    cpuPercentOfOneCore: pct,
  }));
  const candidates = [
    ...perWorker.map((w, i) => ({ process: `worker ${i + 1}`, cpuPercentOfOneCore: w.cpuPercentOfOneCore })),
    { process: 'postgres (all backends)', cpuPercentOfOneCore: cpu.postgres ?? 0 },
    { process: 'redis', cpuPercentOfOneCore: cpu.redis ?? 0 },
  ];
  const busiest = candidates.reduce((a, b) => (b.cpuPercentOfOneCore > a.cpuPercentOfOneCore ? b : a));
  return {
    workers: o.workerCount,
    accepted: o.backlog.accepted,
    jobs: o.backlog.jobs,
    outcomesPerSec: perSecond(check.applied, seconds),
    jobsPerSec: perSecond(o.backlog.jobs, seconds),
    seconds: Math.round(seconds * 100) / 100,
    check,
    cpuMsPerOutcome: costPer({ cpu, seconds }, check.applied).cpuMsPerItem,
    cpuPercentOfOneCore: cpu,
    perWorker,
    busiest,
    rssAfter,
  };
}
