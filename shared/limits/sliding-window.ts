/**
 * The per-second limit is a sliding log: a request at time `now` is admitted when fewer than
 * `limit` requests were admitted in (now − 1 s, now] (docs/adr/0005-rate-limiter.md). Times
 * are epoch microseconds, the precision of Redis `TIME`. These functions turn the log's state
 * into what the X-RateLimit-* and Retry-After headers say.
 */
export const WINDOW_MICROS = 1_000_000;

export interface WindowState {
  limit: number;
  /** Requests admitted in the last second, including this one if it was admitted. */
  counted: number;
  /** When the oldest of them was admitted; ignored when `counted` is 0. */
  oldestMicros: number;
  nowMicros: number;
}

const ceilSeconds = (micros: number) => Math.ceil(micros / WINDOW_MICROS);

/** How many more requests would be admitted right now. */
export const remaining = (state: WindowState): number => Math.max(0, state.limit - state.counted);

/**
 * Unix epoch seconds, rounded up, when the oldest request of the last second leaves the window
 * and Remaining grows by one; the current time (rounded up) when none is counted.
 */
export const resetAt = (state: WindowState): number =>
  ceilSeconds(state.counted > 0 ? state.oldestMicros + WINDOW_MICROS : state.nowMicros);

/** Whole seconds (at least 1) after which a refused request would be admitted. */
export const retryAfter = (state: WindowState): number => Math.max(1, ceilSeconds(state.oldestMicros + WINDOW_MICROS - state.nowMicros));
