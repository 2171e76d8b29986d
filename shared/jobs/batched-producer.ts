import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS, type DecisionJob, type OutcomeJob, type ProducedJobName } from './catalog';

/** The item type each batch job carries. */
interface BatchItems {
  decisions: DecisionJob;
  outcomes: OutcomeJob;
}

interface OpenBatch<N extends ProducedJobName> {
  batchId: string;
  items: Array<BatchItems[N]>;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** Most items one job carries; a full batch is enqueued at once and the next one opened. */
export const MAX_BATCH_ITEMS = 256;

/**
 * Group commit for the API's jobs (docs/adr/0010-group-commit.md): every decision (or outcome)
 * added in one event-loop turn joins one open batch, enqueued as a single job with one Redis
 * call. Each caller's promise settles when that job is durably in Redis, so a caller still
 * answers only after its own item was enqueued.
 */
export class BatchedProducer {
  private readonly queues = new Map<string, Queue>();
  private readonly open: { [N in ProducedJobName]?: OpenBatch<N> } = {};
  private scheduled = false;

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly maxBatch = MAX_BATCH_ITEMS,
  ) {}

  queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix, skipWaitingForReady: true });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Adds one item to the open batch of `name`. `build` runs synchronously with that batch's id
   * (a decision's requestId carries it). Resolves once the batch's job is in Redis.
   */
  add<N extends ProducedJobName>(name: N, build: (batchId: string) => BatchItems[N]): Promise<void> {
    const batch = this.openBatch(name);
    const item = build(batch.batchId);
    return new Promise((resolve, reject) => {
      batch.items.push(item);
      batch.waiters.push({ resolve, reject });
      if (batch.items.length >= this.maxBatch) this.flushBatch(name);
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private openBatch<N extends ProducedJobName>(name: N): OpenBatch<N> {
    let batch = this.open[name] as OpenBatch<N> | undefined;
    if (!batch) {
      batch = { batchId: randomBytes(8).toString('hex'), items: [], waiters: [] };
      (this.open as Record<N, OpenBatch<N>>)[name] = batch;
    }
    return batch;
  }

  private flush(): void {
    this.scheduled = false;
    this.flushBatch('decisions');
    this.flushBatch('outcomes');
  }

  private flushBatch(name: ProducedJobName): void {
    const batch = this.open[name];
    if (!batch) return;
    delete this.open[name];
    const spec = JOBS[name];
    const data =
      name === 'decisions' ? { batchId: batch.batchId, decisions: batch.items } : { batchId: batch.batchId, outcomes: batch.items };
    this.queue(spec.queue)
      .add(name, data, { ...spec.options, jobId: spec.jobId(batch) })
      .then(
        () => batch.waiters.forEach((waiter) => waiter.resolve()),
        (error: unknown) => batch.waiters.forEach((waiter) => waiter.reject(error)),
      );
  }

  async close(): Promise<void> {
    this.flush();
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
