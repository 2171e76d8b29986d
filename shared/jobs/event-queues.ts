import { Queue } from 'bullmq';
import type { RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';
import { JOBS, type DecisionBatchJob, type OutcomeBatchJob, type ProducedJobName } from './catalog';

/** The payload of each job the API produces. */
export interface ProducedJobs {
  decisions: DecisionBatchJob;
  outcomes: OutcomeBatchJob;
}

/** Replicas a job must reach before it counts as enqueued (Redis WAIT); 0: none. */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
}

/**
 * The API's side of the events queue: one BullMQ Queue per partition
 * (docs/adr/0014-redis-cluster-partitions.md), a job added to its user's partition with the
 * catalog's options and dedup id.
 */
export class EventQueues {
  private readonly queues = new Map<number, Queue>();

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** The events-queue partition of a user. */
  partitionOf(userHash: string): number {
    return this.keys.queuePartition(userHash);
  }

  queue(partition: number): Queue {
    let queue = this.queues.get(partition);
    if (!queue) {
      const spec = JOBS.decisions;
      queue = new Queue(spec.queue, {
        connection: this.connection,
        prefix: this.keys.queuePrefixes[partition]!,
        skipWaitingForReady: true,
      });
      queue.on('error', () => undefined);
      this.queues.set(partition, queue);
    }
    return queue;
  }

  /**
   * Adds one job to a partition; with a replica wait, resolves once that many replicas of the
   * partition's master hold it or the wait's timeout has passed (docs/SCALING.md#redis).
   */
  async add<N extends ProducedJobName>(name: N, data: ProducedJobs[N], partition: number, wait?: ReplicaWait): Promise<void> {
    const spec = JOBS[name];
    const queue = this.queue(partition);
    await queue.add(name, data, { ...spec.options, jobId: spec.jobId(data) });
    // WAIT counts a connection's writes (BullMQ uses ours), so it goes, in a pipeline keyed by
    // the queue, to the master the job was written to.
    if (wait && wait.replicas > 0) await this.connection.pipeline().exists(queue.keys.id!).wait(wait.replicas, wait.timeoutMs).exec();
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
