import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import type { RedisKeys } from '../cache/keys';
import type { RedisClient } from '../redis/redis';
import { JOBS, type DecisionJob, type OutcomeJob, type ProducedJobName } from './catalog';

/** The item type each batch job carries. */
interface BatchItems {
  decisions: DecisionJob;
  outcomes: OutcomeJob;
}

interface OpenBatch<N extends ProducedJobName> {
  name: N;
  partition: number;
  batchId: string;
  items: Array<BatchItems[N]>;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** Most items one job carries; a full batch is enqueued at once and the next one opened. */
export const MAX_BATCH_ITEMS = 256;

/** Replicas a batch must reach before its requests are answered (Redis WAIT); 0: none. */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
}

/**
 * Group commit for the API's jobs (docs/adr/0010-group-commit.md): every decision (or outcome)
 * added in one event-loop turn for one queue partition joins one open batch, enqueued as a
 * single job with one Redis call. Each caller's promise settles when that job is durably in
 * Redis, so a caller still answers only after its own item was enqueued. A user's items always
 * go to the user's partition (docs/adr/0014-redis-cluster-partitions.md).
 */
export class BatchedProducer {
  private readonly queues = new Map<string, Queue>();
  private readonly open = new Map<string, OpenBatch<ProducedJobName>>();
  private scheduled = false;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
    private readonly maxBatch = MAX_BATCH_ITEMS,
    private readonly wait: ReplicaWait = { replicas: 0, timeoutMs: 0 },
  ) {}

  queue(name: string, partition = 0): Queue {
    const prefix = this.keys.queuePrefixes[partition]!;
    let queue = this.queues.get(`${prefix}:${name}`);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix, skipWaitingForReady: true });
      queue.on('error', () => undefined);
      this.queues.set(`${prefix}:${name}`, queue);
    }
    return queue;
  }

  /**
   * Adds one item of the user `userHash` to the open batch of `name` in the user's partition.
   * `build` runs synchronously with that batch's id (a decision's requestId carries it).
   * Resolves once the batch's job is in Redis.
   */
  add<N extends ProducedJobName>(name: N, userHash: string, build: (batchId: string) => BatchItems[N]): Promise<void> {
    const batch = this.openBatch(name, this.keys.queuePartition(userHash));
    const item = build(batch.batchId);
    return new Promise((resolve, reject) => {
      batch.items.push(item);
      batch.waiters.push({ resolve, reject });
      if (batch.items.length >= this.maxBatch) this.flushBatch(batch);
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private openBatch<N extends ProducedJobName>(name: N, partition: number): OpenBatch<N> {
    const key = `${name}:${partition}`;
    let batch = this.open.get(key) as OpenBatch<N> | undefined;
    if (!batch) {
      batch = { name, partition, batchId: randomBytes(8).toString('hex'), items: [], waiters: [] };
      this.open.set(key, batch as OpenBatch<ProducedJobName>);
    }
    return batch;
  }

  private flush(): void {
    this.scheduled = false;
    for (const batch of [...this.open.values()]) this.flushBatch(batch);
  }

  private flushBatch(batch: OpenBatch<ProducedJobName>): void {
    const { name, partition } = batch;
    if (this.open.get(`${name}:${partition}`) !== batch) return;
    this.open.delete(`${name}:${partition}`);
    const spec = JOBS[name];
    const data =
      name === 'decisions' ? { batchId: batch.batchId, decisions: batch.items } : { batchId: batch.batchId, outcomes: batch.items };
    const queue = this.queue(spec.queue, partition);
    queue
      .add(name, data, { ...spec.options, jobId: spec.jobId(batch) })
      .then(() => this.replicated(queue))
      .then(
        () => batch.waiters.forEach((waiter) => waiter.resolve()),
        (error: unknown) => batch.waiters.forEach((waiter) => waiter.reject(error)),
      );
  }

  /**
   * With a replica wait, the batch is answered once that many replicas of its partition's master
   * hold it, or the wait's timeout has passed (docs/SCALING.md#redis). WAIT counts a
   * connection's writes (BullMQ uses ours), so it goes, in a pipeline keyed by the queue, to the
   * master the job was written to.
   */
  private async replicated(queue: Queue): Promise<void> {
    if (this.wait.replicas === 0) return;
    await this.connection.pipeline().exists(queue.keys.id!).wait(this.wait.replicas, this.wait.timeoutMs).exec();
  }

  async close(): Promise<void> {
    this.flush();
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
