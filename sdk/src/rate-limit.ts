/** A live key's rate-limit state, from the `X-RateLimit-*` headers of a response. */
export interface RateLimit {
  /** Requests allowed per second (on a monthly refusal: the monthly quota). */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Unix epoch seconds when the window resets. */
  reset: number;
}

/** Test keys are unlimited and their responses carry no headers: undefined. */
export function readRateLimit(headers: Headers): RateLimit | undefined {
  const limit = headers.get('x-ratelimit-limit');
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset');
  if (limit === null || remaining === null || reset === null) return undefined;
  const state = { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
  return Object.values(state).every(Number.isFinite) ? state : undefined;
}
