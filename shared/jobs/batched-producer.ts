import { randomBytes } from 'node:crypto';
import type { OutcomeJob } from './catalog';
import type { EventQueues, ReplicaWait } from './event-queues';

interface OpenBatch {
  partition: number;
  batchId: string;
  items: OutcomeJob[];
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** Most items one job carries; a full batch is enqueued at once and the next one opened. */
export const MAX_BATCH_ITEMS = 256;

/**
 * The least time from a partition's job that carried more than one outcome to its next job,
 * unless that batch is full.
 */
export const MIN_JOB_SPACING_MS = 8;

/**
 * Group commit of accepted outcomes (docs/adr/0010-group-commit.md): every outcome added in one
 * event-loop turn for one queue partition joins one open batch, enqueued as a single job with
 * one Redis call. While a partition's job is on its way to Redis, its next batch waits for it
 * and keeps growing, so under load a job carries what arrived during a round trip rather than
 * during one turn; while outcomes arrive together, a partition also sends at most one job per
 * `MIN_JOB_SPACING_MS`, since a job costs Redis and the worker the same whatever it carries. A
 * partition whose last job carried one outcome, or that sent nothing in that time, sends at the
 * end of the turn: a lone outcome, or a client posting one at a time, waits no longer. Each
 * caller's promise settles when its batch's job is durably in Redis, so a 202 is still answered
 * only after its own outcome was enqueued. A user's outcomes always go to the user's partition
 * (docs/adr/0014-redis-cluster-partitions.md).
 */
export class BatchedProducer {
  private readonly open = new Map<number, OpenBatch>();
  /** Jobs on their way to Redis, by partition. */
  private readonly sending = new Map<number, number>();
  /** When each partition last sent a job (`performance.now()`, which no clock change moves), and how many outcomes it carried. */
  private readonly lastSent = new Map<number, { at: number; items: number }>();
  /** Partitions whose open batch waits for its spacing to end. */
  private readonly spacing = new Map<number, NodeJS.Timeout>();
  private scheduled = false;

  constructor(
    private readonly queues: Pick<EventQueues, 'add' | 'partitionOf'>,
    private readonly maxBatch = MAX_BATCH_ITEMS,
    private readonly wait: ReplicaWait = { replicas: 0, timeoutMs: 0 },
  ) {}

  /** Adds the outcome of user `userHash` to its partition's open batch; resolves once the batch's job is in Redis. */
  add(userHash: string, item: OutcomeJob): Promise<void> {
    const batch = this.openBatch(this.queues.partitionOf(userHash));
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

  private openBatch(partition: number): OpenBatch {
    let batch = this.open.get(partition);
    if (!batch) {
      batch = { partition, batchId: randomBytes(8).toString('hex'), items: [], waiters: [] };
      this.open.set(partition, batch);
    }
    return batch;
  }

  /**
   * The end of a turn: sends each open batch whose partition may send (the others go when their
   * job lands or their spacing ends); `evenHeld` sends them all.
   */
  private flush(evenHeld = false): void {
    this.scheduled = false;
    for (const batch of [...this.open.values()])
      if (evenHeld) this.flushBatch(batch);
      else this.sendWhenFree(batch);
  }

  /** Sends `batch` now if its partition has no job in flight and its spacing is over, else arranges for later. */
  private sendWhenFree(batch: OpenBatch): void {
    const { partition } = batch;
    if (this.sending.has(partition) || this.spacing.has(partition)) return;
    const last = this.lastSent.get(partition);
    const wait = last && last.items > 1 ? last.at + MIN_JOB_SPACING_MS - performance.now() : 0;
    if (wait <= 0) return this.flushBatch(batch);
    this.spacing.set(
      partition,
      setTimeout(() => {
        this.spacing.delete(partition);
        const next = this.open.get(partition);
        if (next && !this.sending.has(partition)) this.flushBatch(next);
      }, wait),
    );
  }

  private flushBatch(batch: OpenBatch): void {
    const { partition } = batch;
    if (this.open.get(partition) !== batch) return;
    this.open.delete(partition);
    this.lastSent.set(partition, { at: performance.now(), items: batch.items.length });
    const timer = this.spacing.get(partition);
    if (timer) clearTimeout(timer);
    this.spacing.delete(partition);
    this.sending.set(partition, (this.sending.get(partition) ?? 0) + 1);
    const landed = () => {
      const left = this.sending.get(partition)! - 1;
      if (left > 0) return void this.sending.set(partition, left);
      this.sending.delete(partition);
      const next = this.open.get(partition);
      if (next) this.sendWhenFree(next);
    };
    void this.queues
      .add('outcomes', { batchId: batch.batchId, outcomes: batch.items }, partition, this.wait)
      .then(
        () => batch.waiters.forEach((waiter) => waiter.resolve()),
        (error: unknown) => batch.waiters.forEach((waiter) => waiter.reject(error)),
      )
      .finally(landed);
  }

  /** Sends what is open, held back or not (its callers are answered as usual). */
  close(): void {
    this.flush(true);
  }
}
