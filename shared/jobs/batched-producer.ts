import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS, type JobPayload, type ProducedJobName } from './catalog';

interface Pending {
  name: ProducedJobName;
  data: unknown;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Enqueues catalog jobs, coalescing every add made in the same event-loop turn into one
 * `addBulk` round trip. Concurrent HTTP requests therefore share Redis writes, and each caller
 * still learns whether its own job was durably enqueued.
 */
export class BatchedProducer {
  private readonly queues = new Map<string, Queue>();
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly maxBatch = 500,
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

  add<N extends ProducedJobName>(name: N, data: JobPayload<N>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ name, data, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const byQueue = new Map<string, Pending[]>();
    for (const item of batch) {
      const queueName = JOBS[item.name].queue;
      byQueue.set(queueName, [...(byQueue.get(queueName) ?? []), item]);
    }
    for (const [queueName, items] of byQueue) {
      const jobs = items.map((item) => {
        const spec = JOBS[item.name];
        return { name: item.name, data: item.data, opts: { ...spec.options, jobId: spec.jobId(item.data as never) } };
      });
      this.queue(queueName)
        .addBulk(jobs)
        .then(
          () => items.forEach((item) => item.resolve()),
          (error: unknown) => items.forEach((item) => item.reject(error)),
        );
    }
  }

  async close(): Promise<void> {
    this.flush();
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
