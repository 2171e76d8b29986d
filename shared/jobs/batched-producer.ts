import { randomBytes } from 'node:crypto';
import type { OutcomeJob } from './catalog';
import type { EventQueues, ReplicaWait } from './event-queues';

interface Batch {
  batchId: string;
  items: OutcomeJob[];
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** A partition's batch being filled, and how many of its batches are on their way to Redis. */
interface Partition {
  open: Batch | null;
  sending: number;
}

/** Most items one job carries; a full batch is enqueued at once and the next one opened. */
export const MAX_BATCH_ITEMS = 256;

/**
 * Group commit of accepted outcomes (docs/adr/0010-group-commit.md): the outcomes of a queue
 * partition gather in an open batch while the partition's previous batch is on its way to
 * Redis, and go as one job once it has landed (or at once when none is on its way, after the
 * current event-loop turn). Idle, an outcome waits for nothing but its own job; under load,
 * each partition has one job in flight and the next one fills meanwhile, so the number of jobs
 * follows the round trips, not the requests. Each caller's promise settles when its batch's job
 * is durably in Redis: a 202 is still answered only after its own outcome was enqueued. A
 * user's outcomes always go to the user's partition (docs/adr/0014-redis-cluster-partitions.md).
 */
export class BatchedProducer {
  private readonly partitions = new Map<number, Partition>();
  /** Partitions with an open batch and nothing in flight, to send after this turn. */
  private readonly ready = new Set<number>();
  private scheduled = false;

  constructor(
    private readonly queues: EventQueues,
    private readonly maxBatch = MAX_BATCH_ITEMS,
    private readonly wait: ReplicaWait = { replicas: 0, timeoutMs: 0 },
  ) {}

  /** Adds the outcome of user `userHash` to its partition's open batch; resolves once the batch's job is in Redis. */
  add(userHash: string, item: OutcomeJob): Promise<void> {
    const index = this.queues.partitionOf(userHash);
    let partition = this.partitions.get(index);
    if (!partition) this.partitions.set(index, (partition = { open: null, sending: 0 }));
    const batch = (partition.open ??= { batchId: randomBytes(8).toString('hex'), items: [], waiters: [] });
    return new Promise((resolve, reject) => {
      batch.items.push(item);
      batch.waiters.push({ resolve, reject });
      if (batch.items.length >= this.maxBatch) this.send(index, partition);
      else if (partition.sending === 0) this.sendAfterThisTurn(index);
    });
  }

  private sendAfterThisTurn(index: number): void {
    this.ready.add(index);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const ready of [...this.ready]) {
        this.ready.delete(ready);
        const partition = this.partitions.get(ready)!;
        if (partition.sending === 0) this.send(ready, partition);
      }
    });
  }

  private send(index: number, partition: Partition): void {
    const batch = partition.open;
    if (!batch) return;
    partition.open = null;
    partition.sending++;
    const landed = () => {
      partition.sending--;
      // What gathered meanwhile goes next.
      if (partition.sending === 0 && partition.open) this.sendAfterThisTurn(index);
    };
    this.queues.add('outcomes', { batchId: batch.batchId, outcomes: batch.items }, index, this.wait).then(
      () => {
        landed();
        for (const waiter of batch.waiters) waiter.resolve();
      },
      (error: unknown) => {
        landed();
        for (const waiter of batch.waiters) waiter.reject(error);
      },
    );
  }

  /** Sends what is open (its callers are answered as usual). */
  close(): void {
    for (const [index, partition] of this.partitions) this.send(index, partition);
  }
}
