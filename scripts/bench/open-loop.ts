/**
 * The schedule of an open-loop load run: request i is due `i / rate` seconds after the start,
 * whatever happened to the requests before it, and its latency runs from that due time. A
 * client that falls behind (a busy event loop, every socket taken) therefore adds its delay to
 * the latencies instead of hiding it — measuring from the send time would leave out exactly
 * the waits a slow server causes (coordinated omission).
 */
export class OpenLoopSchedule {
  constructor(
    /** When request 0 is due (ms, the clock of `performance.now()`). */
    readonly startMs: number,
    /** Requests per second. */
    readonly rate: number,
    /** Requests in the run. */
    readonly total: number,
  ) {
    if (!(rate > 0) || !Number.isInteger(total) || total < 0) throw new Error('an open-loop schedule needs rate > 0 and a whole total');
  }

  /** When request `i` is due. */
  dueAt(i: number): number {
    return this.startMs + (i * 1000) / this.rate;
  }

  /** How many requests are due at `nowMs` (request 0 is due at the start itself), at most `total`. */
  dueBy(nowMs: number): number {
    if (nowMs < this.startMs) return 0;
    return Math.min(this.total, Math.floor(((nowMs - this.startMs) * this.rate) / 1000) + 1);
  }

  /** The latency of request `i` answered at `answeredAtMs`, counted from when it was due. */
  latency(i: number, answeredAtMs: number): number {
    return answeredAtMs - this.dueAt(i);
  }

  /** When the last request is due. */
  get endMs(): number {
    return this.total === 0 ? this.startMs : this.dueAt(this.total - 1);
  }
}
