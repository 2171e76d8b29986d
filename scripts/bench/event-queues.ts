import { Queue } from 'bullmq';
import type { RedisKeys } from '../../shared/redis/key-names';
import { loadCliConfig } from '../../shared/config/config';
import { EVENTS_QUEUE, outcomeBatchJobSchema } from '../../shared/jobs/catalog';
import { assignPartitions } from '../../shared/jobs/partition-assignment';
import { WorkerGroup, formatPartitions } from '../../shared/jobs/worker-group.repository';
import { keysFor, type RedisClient } from '../../shared/redis/redis';
import { decisionLogSent, mustBeRunning, waitUntil, type Proc } from './processes';

/** The keys the bench's api and workers use with `env` (QUEUE_PARTITIONS among them). */
export const keysOf = (env: NodeJS.ProcessEnv): RedisKeys => keysFor(loadCliConfig(env));

export interface QueueCounts {
  /** Jobs waiting or being worked on. */
  pending: number;
  delayed: number;
  failed: number;
}

/**
 * Every events queue of a bench's deployment — one per partition — read,
 * paused and resumed as one, and the workers' group, to know when they have shared the
 * partitions out (docs/adr/0015-worker-partition-ownership.md).
 */
export class EventQueues {
  readonly queues: Queue[];
  private readonly group: WorkerGroup;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    this.queues = keys.queuePrefixes.map((prefix) => new Queue(EVENTS_QUEUE, { connection: redis, prefix }));
    for (const queue of this.queues) queue.on('error', () => undefined);
    this.group = new WorkerGroup(redis, keys);
  }

  async counts(): Promise<QueueCounts> {
    const all = await Promise.all(this.queues.map((queue) => queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'failed')));
    const sum = (state: string) => all.reduce((n, c) => n + (c[state] ?? 0), 0);
    return { pending: sum('wait') + sum('prioritized') + sum('active'), delayed: sum('delayed'), failed: sum('failed') };
  }

  /** Waits until `workers` have applied every queued job, the decisions the API still holds included; a failed job ends the run. */
  async drained(what: string, workers: readonly Proc[]): Promise<void> {
    await decisionLogSent();
    await waitUntil(what, 300_000, 100, async () => {
      mustBeRunning(...workers);
      const c = await this.counts();
      if (c.failed > 0) throw new Error(`${c.failed} jobs failed in the worker: ${workers.map((w) => w.output()).join('\n')}`);
      return c.pending + c.delayed === 0 ? true : undefined;
    });
  }

  /** The requestIds of the outcomes waiting in the queues' `outcomes` jobs (the backlog, counted in outcomes). */
  async queuedOutcomeIds(): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const queue of this.queues) {
      for (const job of await queue.getJobs(['waiting', 'prioritized', 'delayed'])) {
        const batch = job.name === 'outcomes' ? outcomeBatchJobSchema.safeParse(job.data) : undefined;
        for (const outcome of batch?.success ? batch.data.outcomes : []) ids.add(outcome.requestId);
      }
    }
    return ids;
  }

  /**
   * The data of up to `perQueue` waiting outcome jobs of each queue, as BullMQ stores it (the
   * JSON of `job.data`), in bytes: what the no-op baseline's jobs are sized after.
   */
  async sampleOutcomeJobBytes(perQueue: number): Promise<number[]> {
    const sizes: number[] = [];
    for (const queue of this.queues) {
      for (const job of await queue.getJobs(['waiting', 'prioritized'], 0, perQueue - 1)) {
        if (job.name === 'outcomes') sizes.push(Buffer.byteLength(JSON.stringify(job.data)));
      }
    }
    return sizes;
  }

  async pause(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.pause()));
  }

  async resume(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.resume()));
  }

  /**
   * Whether `workers` workers are in the group, each consuming exactly the partitions the
   * assignment gives it (as it reported at its last heartbeat), and every queue has exactly one
   * BullMQ worker connected: nobody is still starting up or handing a partition over.
   */
  async settled(workers: number): Promise<boolean> {
    const { members, partitions } = await this.group.read();
    if (members.length !== workers) return false;
    const assigned = assignPartitions(
      members.map((member) => member.id),
      this.keys.queuePrefixes.length,
    );
    for (const [id, wanted] of assigned) if (formatPartitions(partitions.get(id) ?? []) !== formatPartitions(wanted)) return false;
    const connected = await Promise.all(this.queues.map((queue) => queue.getWorkersCount()));
    return connected.every((count) => count === 1);
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close()));
  }
}
