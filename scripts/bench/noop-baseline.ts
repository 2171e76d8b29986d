import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS } from '../../shared/jobs/catalog';
import { costPer, cpuPercent, type CpuSnapshot, type Roles } from './cpu';
import { startProc, stopProc, waitUntil, mustBeRunning } from './processes';
import { paddedJobData, perSecond } from './worker-figures';

/**
 * bench:worker's baseline: what BullMQ alone does on this machine in the same run. As many jobs
 * as the round's backlog held, their data as many bytes as its jobs' on average, with our
 * outcome jobs' name, id form and options, go into one queue; then as many processes as the
 * round had workers, each a plain BullMQ Worker with a processor that does nothing
 * (scripts/bench/noop-worker.ts), are spawned and timed like the cold round: from the spawn to
 * an empty queue.
 */

export const NOOP_ROLE = 'no-op worker';
const NOOP_QUEUE = 'noop';
const ADD_CHUNK = 1000;

export interface NoopRound {
  processes: number;
  /** Jobs each no-op worker holds at once. */
  concurrency: number;
  jobs: number;
  /** Bytes of each job's data (the mean of the round's backlog). */
  jobBytes: number;
  jobsPerSec: number;
  seconds: number;
  /** Jobs that failed or wait in backoff (a no-op should leave none). */
  failed: number;
  cpuMsPerJob: Roles;
  cpuPercentOfOneCore: Roles;
}

export async function noopBaseline(o: {
  redis: Redis;
  env: NodeJS.ProcessEnv;
  /** The BullMQ prefix of its queue: apart from the events queues. */
  prefix: string;
  jobs: number;
  jobBytes: number;
  processes: number;
  concurrency: number;
  /** The bench's pids by role: the no-op workers are booked under NOOP_ROLE while they run. */
  roles: Record<string, number[]>;
  snapshot: () => CpuSnapshot;
  selfRole: string;
}): Promise<NoopRound> {
  const queue = new Queue(NOOP_QUEUE, { connection: o.redis, prefix: o.prefix });
  queue.on('error', () => undefined);
  try {
    await queue.obliterate({ force: true });
    const spec = JOBS.outcomes;
    for (let start = 0; start < o.jobs; start += ADD_CHUNK) {
      const chunk = Array.from({ length: Math.min(ADD_CHUNK, o.jobs - start) }, (_, k) => {
        const data = paddedJobData((start + k).toString(16).padStart(16, '0'), o.jobBytes);
        return { name: 'outcomes', data, opts: { ...spec.options, jobId: spec.jobId(data) } };
      });
      await queue.addBulk(chunk);
    }
    const remaining = async () => {
      const c = await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed', 'failed');
      return { pending: (c.wait ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0), failed: (c.delayed ?? 0) + (c.failed ?? 0) };
    };
    const queued = (await remaining()).pending;
    if (queued !== o.jobs) throw new Error(`the no-op queue holds ${queued} jobs, not ${o.jobs}`);

    const env = {
      ...o.env,
      NOOP_QUEUE,
      NOOP_PREFIX: o.prefix,
      NOOP_CONCURRENCY: String(o.concurrency),
    };
    const cpuBefore = o.snapshot();
    const t0 = performance.now();
    const workers = Array.from({ length: o.processes }, () => startProc(NOOP_ROLE, [path.join(__dirname, 'noop-worker.js')], env));
    o.roles[NOOP_ROLE] = workers.map((w) => w.child.pid!);
    const left = await waitUntil('the no-op workers to empty their queue', 600_000, 10, async () => {
      mustBeRunning(...workers);
      const r = await remaining();
      return r.pending === 0 || r.failed > 0 ? r : undefined;
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuPercent(cpuBefore, o.snapshot(), seconds, o.selfRole);
    await Promise.all(workers.map((w) => stopProc(w)));
    o.roles[NOOP_ROLE] = [];
    return {
      processes: o.processes,
      concurrency: o.concurrency,
      jobs: o.jobs,
      jobBytes: o.jobBytes,
      jobsPerSec: perSecond(o.jobs - left.pending, seconds),
      seconds: Math.round(seconds * 100) / 100,
      failed: left.failed,
      cpuMsPerJob: costPer({ cpu, seconds }, o.jobs).cpuMsPerItem,
      cpuPercentOfOneCore: cpu,
    };
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}
