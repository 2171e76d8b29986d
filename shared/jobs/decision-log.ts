import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger/logger';
import type { DecisionBatchJob, DecisionJob } from './catalog';
import type { EventQueues } from './event-queues';

export interface DecisionLogOptions {
  /** How long the first decision of a batch waits for others before the batch is sent. */
  flushMs: number;
  /** A partition's batch is sent as soon as it holds this many. */
  maxBatch: number;
  /**
   * Bytes of decisions held (waiting, or failed to send) beyond which new ones are not logged:
   * a decision is about 1 KB, more with its request's metadata (up to 8 KiB).
   */
  maxHeldBytes: number;
  /** Wait before a batch that failed to reach Redis is sent again. */
  retryMs: number;
}

export const DECISION_LOG_DEFAULTS: DecisionLogOptions = { flushMs: 100, maxBatch: 256, maxHeldBytes: 64 * 1024 * 1024, retryMs: 1000 };

/** A decision's size in memory and in its job, without its metadata. */
const DECISION_BYTES = 1024;
/** The longest a failing send stays silent in the log: one line per streak, then one every so often. */
const WARN_EVERY_MS = 30_000;

/**
 * The log of context decisions, written behind the answers (docs/adr/0010-group-commit.md): a
 * context call records its decision here and answers at once; the decisions of each queue
 * partition are sent as one `decisions` job when the first has waited `flushMs` or the batch is
 * full. Nobody waits for a logged decision — its requestId carries what its outcome learns from
 * — so a batch that cannot reach Redis is kept and sent again (under the same job id, so a send
 * that did land is not queued twice while BullMQ keeps the first; the worker stores a decision
 * once however often it comes), up to `maxHeldBytes`; past that, or when the process dies
 * first, those decisions' log rows are lost, never an outcome.
 */
export class DecisionLog {
  private readonly open = new Map<number, DecisionJob[]>();
  private readonly sending = new Set<Promise<void>>();
  /** Batches waiting to be sent again, with their timers. */
  private readonly retries = new Map<DecisionBatchJob, { partition: number; timer: NodeJS.Timeout }>();
  private timer: NodeJS.Timeout | null = null;
  private closing = false;
  private lastWarnAt = -Infinity;
  /** Estimated bytes of each decision held, to release them as their batch lands. */
  private readonly sizes = new WeakMap<DecisionJob, number>();
  /** Decisions recorded and not yet in Redis, and their estimated bytes. */
  held = 0;
  heldBytes = 0;
  /** Decisions not logged: the bound was reached, or a send still failed at close. */
  dropped = 0;
  /** Batches sent to Redis. */
  batchesSent = 0;

  constructor(
    private readonly queues: EventQueues,
    private readonly logger: Logger,
    private readonly options: DecisionLogOptions = DECISION_LOG_DEFAULTS,
  ) {}

  /** Batches refused by Redis, waiting to be sent again. */
  get retrying(): number {
    return this.retries.size;
  }

  /** Records one decision of user `userHash`; never waits and never throws. */
  record(userHash: string, decision: DecisionJob): void {
    const { metadata } = decision.context;
    const bytes = DECISION_BYTES + (metadata ? Buffer.byteLength(JSON.stringify(metadata)) : 0);
    if (this.heldBytes + bytes > this.options.maxHeldBytes) {
      if (this.dropped++ % 1000 === 0)
        this.logger.error({ held: this.held, heldBytes: this.heldBytes, dropped: this.dropped }, 'decision log full: decisions not logged');
      return;
    }
    if (metadata) this.sizes.set(decision, bytes);
    const partition = this.queues.partitionOf(userHash);
    let batch = this.open.get(partition);
    if (!batch) this.open.set(partition, (batch = []));
    batch.push(decision);
    this.held++;
    this.heldBytes += bytes;
    if (batch.length >= this.options.maxBatch) this.send(partition);
    else if (!this.timer && !this.closing) {
      this.timer = setTimeout(() => this.flush(), this.options.flushMs);
      this.timer.unref();
    }
  }

  private flush(): void {
    this.timer = null;
    for (const partition of [...this.open.keys()]) this.send(partition);
  }

  private send(partition: number): void {
    const decisions = this.open.get(partition);
    this.open.delete(partition);
    if (decisions && decisions.length > 0) this.deliver(partition, { batchId: randomBytes(8).toString('hex'), decisions });
  }

  private deliver(partition: number, job: DecisionBatchJob): void {
    const sent = this.queues.add('decisions', job, partition).then(
      () => {
        this.release(job);
        this.batchesSent++;
      },
      (error: unknown) => {
        if (this.closing) {
          this.release(job);
          this.dropped += job.decisions.length;
          this.logger.error(
            { err: error, decisions: job.decisions.length },
            'decisions not logged: Redis did not take them before shutdown',
          );
          return;
        }
        const now = Date.now();
        if (now - this.lastWarnAt >= WARN_EVERY_MS) {
          this.lastWarnAt = now;
          this.logger.warn(
            { err: error, held: this.held, retrying: this.retries.size + 1 },
            'decision batches not sent; retrying every second',
          );
        }
        const timer = setTimeout(() => {
          this.retries.delete(job);
          this.deliver(partition, job);
        }, this.options.retryMs);
        timer.unref();
        this.retries.set(job, { partition, timer });
      },
    );
    const tracked = sent.finally(() => this.sending.delete(tracked));
    this.sending.add(tracked);
  }

  /** Forgets a batch's decisions once Redis has them (or they are given up). */
  private release(job: DecisionBatchJob): void {
    this.held -= job.decisions.length;
    for (const decision of job.decisions) this.heldBytes -= this.sizes.get(decision) ?? DECISION_BYTES;
  }

  /** Sends every open batch now and waits until each send has landed or failed (a failed one is retried later). */
  async sendNow(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
    while (this.sending.size > 0) await Promise.all([...this.sending]);
  }

  /** Sends everything held, a failed batch once more, and waits until Redis has it or refused it. */
  async close(): Promise<void> {
    await this.sendNow();
    this.closing = true;
    for (const [job, { partition, timer }] of this.retries) {
      clearTimeout(timer);
      this.deliver(partition, job);
    }
    this.retries.clear();
    await this.sendNow();
  }
}
