import { assignPartitions } from '../shared/jobs/partition-assignment';
import { compareStrings } from '../shared/util/compare';
import { formatPartitions, type WorkerGroup } from '../shared/jobs/worker-group.repository';
import type { Logger } from '../shared/logger/logger';
import type { WorkerMetrics } from '../shared/metrics/metrics';

/** A running consumer of one events queue (a BullMQ Worker and its connection). */
export interface QueueConsumer {
  /** Jobs it may hold at once; changed in place when the share changes. */
  concurrency: number;
  /** Resolves once it is connected and fetching. */
  ready(): Promise<void>;
  /** Stops fetching and resolves once the jobs it holds are settled. */
  close(): Promise<void>;
}

export interface PartitionConsumersOptions {
  /** This worker's id in the group: unique per running instance. */
  workerId: string;
  group: WorkerGroup;
  /** The BullMQ prefix of each event-queue partition, by partition number. */
  partitionPrefixes: readonly string[];
  /** Jobs held at once over all the queues this worker consumes (WORKER_CONCURRENCY). */
  concurrency: number;
  heartbeatMs: number;
  timeoutMs: number;
  consume(prefix: string, concurrency: number): QueueConsumer;
  logger: Logger;
  metrics: Pick<WorkerMetrics, 'partitionsAssigned'>;
}

/**
 * Consumes this worker's share of the event-queue partitions
 * (docs/adr/0015-worker-partition-ownership.md). Every heartbeat reports the partitions consumed
 * and returns the live workers; from them the assignment gives this worker its partitions, and
 * the consumers follow it: one starts for each partition gained, and one closes — after the jobs
 * it holds are applied — for each partition lost. While a partition changes hands both workers
 * may briefly consume it, which costs contention, not correctness (docs/adr/0002-exactly-once-outcomes.md).
 */
export class PartitionConsumers {
  private readonly running = new Map<string, QueueConsumer>();
  /** The partitions consumed now, as reported at the next heartbeat. */
  private owned: number[] = [];
  private wanted: number[] = [];
  private members = 0;
  private lastMembers = '';
  private reconciling: Promise<void> = Promise.resolve();
  private beating: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** A heartbeat is on its way; `beatAgain`: the group changed meanwhile, beat again once it is back. */
  private inBeat = false;
  private beatAgain = false;
  /** This worker has told the group it joined. */
  private announced = false;
  private stopped = false;
  private heartbeatFailing = false;
  /** A reconciliation failed: the next heartbeat runs one even if the members are the same. */
  private retry = false;
  private settleFirst!: () => void;
  /** Resolves once the first assignment's consumers are ready. */
  readonly joined = new Promise<void>((resolve) => (this.settleFirst = resolve));

  constructor(private readonly o: PartitionConsumersOptions) {}

  start(): void {
    this.beat();
  }

  /** The partitions this worker consumes now. */
  partitions(): number[] {
    return [...this.owned];
  }

  /**
   * Stops heartbeats and fetching, and leaves the group so that the other workers take its
   * partitions at their next heartbeat instead of after the timeout; resolves once every
   * consumer's held jobs are settled (the caller drains the batcher meanwhile).
   */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.beating;
    await this.reconciling;
    const closing = Promise.all([...this.running.values()].map((consumer) => consumer.close()));
    this.running.clear();
    await this.o.group
      .leave(this.o.workerId)
      .catch((error: unknown) =>
        this.o.logger.warn({ err: error }, 'could not leave the worker group: its partitions move on its timeout'),
      );
    await closing;
    this.owned = [];
    this.o.metrics.partitionsAssigned(0, 0);
  }

  /**
   * Another worker joined or left (its announcement): beats now rather than at the next interval,
   * so that workers started together share the partitions out within a round trip.
   */
  groupChanged(): void {
    if (this.stopped) return;
    if (this.inBeat) return void (this.beatAgain = true);
    if (this.timer) clearTimeout(this.timer);
    this.beat();
  }

  private beat(): void {
    this.inBeat = true;
    this.beating = this.heartbeat().finally(() => {
      this.inBeat = false;
      if (this.stopped) return;
      const again = this.beatAgain;
      this.beatAgain = false;
      this.timer = setTimeout(() => this.beat(), again ? 0 : this.o.heartbeatMs);
    });
  }

  private async heartbeat(): Promise<void> {
    let members: string[];
    try {
      members = await this.o.group.heartbeat(this.o.workerId, this.owned, this.o.timeoutMs);
    } catch (error) {
      // Keeps consuming what it has: Redis is shared, so a worker that cannot beat cannot fetch either.
      if (!this.heartbeatFailing) this.o.logger.warn({ err: error }, 'worker heartbeat failed; keeping the partitions it has');
      this.heartbeatFailing = true;
      return;
    }
    if (this.heartbeatFailing) this.o.logger.info('worker heartbeat works again');
    this.heartbeatFailing = false;
    if (!this.announced) {
      this.announced = true;
      // Unannounced, the others see this worker at their next heartbeat (up to an interval later).
      this.o.group.announceChange().catch(() => undefined);
    }
    // Sorted: the set is ordered by last-seen time, which changes with every beat.
    const key = [...members].sort(compareStrings).join('\u0000');
    if ((key === this.lastMembers && !this.retry) || this.stopped) return;
    this.lastMembers = key;
    this.retry = false;
    this.members = members.length;
    this.wanted = assignPartitions(members, this.o.partitionPrefixes.length).get(this.o.workerId) ?? [];
    // One reconciliation at a time; the latest assignment wins.
    this.reconciling = this.reconciling
      .then(() => this.reconcile())
      .catch((error: unknown) => {
        this.retry = true;
        this.o.logger.error({ err: error }, 'could not follow the partition assignment; trying again at the next heartbeat');
      });
  }

  private async reconcile(): Promise<void> {
    if (this.stopped) return;
    const wanted = this.wanted;
    const prefixes = wanted.map((partition) => this.o.partitionPrefixes[partition]!);
    const shares = shareOut(this.o.concurrency, prefixes.length);
    const stopping = [...this.running.keys()].filter((prefix) => !prefixes.includes(prefix));
    const starting: QueueConsumer[] = [];
    prefixes.forEach((prefix, i) => {
      const consumer = this.running.get(prefix);
      if (consumer) consumer.concurrency = shares[i]!;
      else {
        const started = this.o.consume(prefix, shares[i]!);
        this.running.set(prefix, started);
        starting.push(started);
      }
    });
    const closing = stopping.map((prefix) => {
      const consumer = this.running.get(prefix)!;
      this.running.delete(prefix);
      return consumer.close();
    });
    await Promise.all([...closing, ...starting.map((consumer) => consumer.ready())]);
    const changed = formatPartitions(this.owned) !== formatPartitions(wanted);
    this.owned = wanted;
    this.o.metrics.partitionsAssigned(wanted.length, this.members);
    if (changed) {
      this.o.logger.info({ workerId: this.o.workerId, partitions: wanted, workers: this.members }, 'event-queue partitions assigned');
    }
    this.settleFirst();
  }
}

/** `total` jobs over `parts` queues, as evenly as whole numbers allow, at least one each. */
export function shareOut(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.max(1, Math.floor(total / parts) + (i < total % parts ? 1 : 0)));
}
