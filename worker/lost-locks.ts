import type { Logger } from '../shared/logger/logger';

/** BullMQ's errors for a job whose lock expired while its worker held it. */
const LOST_LOCK = /^(Missing lock for job|Lock mismatch for job|could not renew lock for job)/;

/** How often at most the lost locks are reported. */
const REPORT_EVERY_MS = 10_000;

/**
 * Lost job locks, reported as a count at most every 10 s instead of a line per job. A lock is
 * lost when the worker could not renew it in time — Redis away or frozen longer than the lock, or
 * an event loop stalled as long — and the stalled-job check then hands the job out again; it is
 * applied once however often it runs (docs/adr/0002-exactly-once-outcomes.md), so each loss is
 * no news, but many in a row are.
 */
export class LostLocks {
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Locks lost since the process started. */
  total = 0;

  constructor(private readonly logger: Logger) {}

  /** Whether `error` is a lost lock (then counted, and reported with the others). */
  take(error: Error): boolean {
    if (!LOST_LOCK.test(error.message)) return false;
    this.count++;
    this.total++;
    this.timer ??= setTimeout(() => this.report(), REPORT_EVERY_MS);
    this.timer.unref();
    return true;
  }

  private report(): void {
    this.timer = null;
    if (this.count === 0) return;
    this.logger.warn(
      { lostLocks: this.count, withinMs: REPORT_EVERY_MS },
      'job locks lost: their jobs run again and are applied once (Redis was away or slow longer than a lock, or the worker stalled)',
    );
    this.count = 0;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.report();
  }
}
