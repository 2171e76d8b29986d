import { assignPartitions } from '../shared/jobs/partition-assignment';
import { compareStrings } from '../shared/util/compare';
import { formatPartitions, type WorkerGroup } from '../shared/jobs/worker-group.repository';
import type { Logger } from '../shared/logger/logger';
import type { WorkerMetrics } from '../shared/metrics/metrics';

/** A running consumer of one events queue (a BullMQ Worker and its connection). */
export interface QueueConsumer {
  /** Jobs it may hold at once; changed in place when the share or its partition's backlog changes. */
  concurrency: number;
  /** Jobs waiting in its partition, not yet taken by any worker. */
  waiting(): Promise<number>;
  /** Resolves once it is connected and fetching. */
  ready(): Promise<void>;
  /** Stops fetching and resolves once the jobs it holds are settled. */
  close(): Promise<void>;
}

export interface PartitionConsumersOptions {
  /** This worker's id in the group: unique per running instance. */
  workerId: string;
  group: Pick<WorkerGroup, 'heartbeat' | 'leave' | 'announceChange'>;
  /** The BullMQ prefix of each event-queue partition, by partition number. */
  partitionPrefixes: readonly string[];
  /** Jobs held at once over all the queues this worker consumes (WORKER_CONCURRENCY; shared out, at least one each). */
  concurrency: number;
  heartbeatMs: number;
  timeoutMs: number;
  /** How often each consumer's jobs in hand are fitted to its partition's backlog (heldJobs). */
  fitMs?: number;
  consume(prefix: string, concurrency: number): QueueConsumer;
  logger: Logger;
  metrics: Pick<WorkerMetrics, 'partitionsAssigned'>;
}

/** The fewest jobs a consumer may hold while its partition has (almost) no backlog. */
export const MIN_HELD_JOBS = 16;
/** Jobs waiting in a partition from which it has a backlog, drained fastest in big batches. */
export const BACKLOG_JOBS = 64;
/** How often a worker fits its consumers' jobs in hand (PartitionConsumers.fit). */
export const FIT_INTERVAL_MS = 250;

/**
 * The jobs a consumer may hold: its whole share of WORKER_CONCURRENCY while BACKLOG_JOBS or more
 * wait in its partition, MIN_HELD_JOBS (or the share, if smaller) otherwise. BullMQ's Worker
 * fetches jobs one at a time and hands them to the processor only once a fetch finds none or it
 * holds `concurrency` jobs; when jobs arrive as fast as it fetches (one fetch per event-loop
 * turn), only the second ends a run, so a whole share held a steady stream of outcomes back for
 * seconds. A backlog keeps the whole share: the big batches that drain it fastest
 * (docs/adr/0015-worker-partition-ownership.md).
 */
export const heldJobs = (waiting: number, share: number): number => (waiting >= BACKLOG_JOBS ? share : Math.min(share, MIN_HELD_JOBS));

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
  /** Each running consumer's share of WORKER_CONCURRENCY, the most heldJobs gives it. */
  private readonly shares = new Map<string, number>();
  private fitTimer: NodeJS.Timeout | null = null;
  private fitting = false;
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
    this.fitTimer = setInterval(() => void this.fit(), this.o.fitMs ?? FIT_INTERVAL_MS);
    this.fitTimer.unref();
  }

  /**
   * Fits each consumer's jobs in hand to its partition's backlog (heldJobs). A count that cannot
   * be read (Redis away) leaves the consumer as it is.
   */
  async fit(): Promise<void> {
    if (this.fitting || this.stopped) return;
    this.fitting = true;
    try {
      await Promise.all(
        [...this.running].map(async ([prefix, consumer]) => {
          const waiting = await consumer.waiting().catch(() => null);
          const share = this.shares.get(prefix);
          if (waiting === null || share === undefined || this.running.get(prefix) !== consumer) return;
          const held = heldJobs(waiting, share);
          if (consumer.concurrency !== held) consumer.concurrency = held;
        }),
      );
    } finally {
      this.fitting = false;
    }
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
    if (this.fitTimer) clearInterval(this.fitTimer);
    await this.beating;
    await this.reconciling;
    const closing = Promise.all([...this.running.values()].map((consumer) => consumer.close()));
    this.running.clear();
    this.shares.clear();
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
      this.shares.set(prefix, shares[i]!);
      if (consumer) consumer.concurrency = Math.min(consumer.concurrency, shares[i]!);
      else {
        const started = this.o.consume(prefix, shares[i]!);
        this.running.set(prefix, started);
        starting.push(started);
      }
    });
    const closing = stopping.map((prefix) => {
      const consumer = this.running.get(prefix)!;
      this.running.delete(prefix);
      this.shares.delete(prefix);
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
