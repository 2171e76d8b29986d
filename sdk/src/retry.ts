import { CosConnectionError, CosError } from './errors';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Ceiling (ms) of the first backoff; it doubles at every retry. */
  baseDelay: number;
  /** Largest backoff ceiling (ms). */
  maxDelay: number;
  /**
   * Longest `Retry-After` (ms) worth waiting for. A longer one (a spent monthly quota is
   * refused until the 1st) is handed to the caller at once instead of blocking it.
   */
  maxRetryAfter: number;
  /**
   * Longest time (ms) a call keeps retrying an unavailable service (503, 502, 504, no answer),
   * counted from its first attempt: long enough to bridge a restart of the service's Redis.
   */
  budget: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 10,
  baseDelay: 500,
  maxDelay: 8_000,
  maxRetryAfter: 60_000,
  budget: 30_000,
};

/** Answers that mean "not now" rather than "not this request": the service or a proxy in front of it is unavailable. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/**
 * Milliseconds to wait before retry number `retry` (1 for the first retry) after `failure`, or
 * null when it must not be retried; `elapsed` is the time since the call's first attempt. Every
 * call of the API is safe to repeat (a POST's attempts share one `Idempotency-Key`, so the
 * service runs it once and answers the others with its stored answer; the other methods are
 * idempotent), so connection failures and timeouts are retried too. Other 4xx answers are
 * final: repeating the same request cannot change them.
 *
 * - 429: `Retry-After` plus a full-jitter backoff — never sooner than the service asked, and
 *   clients refused together do not all come back in the same instant; null when `Retry-After`
 *   is longer than `maxRetryAfter`.
 * - 409 `IDEMPOTENCY_KEY_IN_USE` (an earlier attempt of the call is still running): `Retry-After`
 *   plus the backoff, while the call stays within `budget`; by then that attempt has an answer
 *   to replay. 409 `IDEMPOTENCY_KEY_REUSED` (the key came with another request) is final.
 * - 503, 502, 504, no answer: the longer of `Retry-After` and the backoff, while the call stays
 *   within `budget`.
 */
export function retryDelay(
  failure: CosError | CosConnectionError,
  retry: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
  elapsed = 0,
): number | null {
  if (retry > policy.maxRetries) return null;
  const jitter = backoff(retry, policy, random);
  if (failure instanceof CosError && failure.statusCode === 429) {
    const asked = (failure.retryAfter ?? 0) * 1000;
    return asked <= policy.maxRetryAfter ? asked + jitter : null;
  }
  if (failure instanceof CosError && failure.statusCode === 409 && failure.code === 'IDEMPOTENCY_KEY_IN_USE') {
    const wait = (failure.retryAfter ?? 0) * 1000 + jitter;
    return elapsed + wait <= policy.budget ? wait : null;
  }
  if (failure instanceof CosError && !TRANSIENT_STATUSES.has(failure.statusCode)) return null;
  const wait = Math.max((failure instanceof CosError ? (failure.retryAfter ?? 0) : 0) * 1000, jitter);
  return elapsed + wait <= policy.budget ? wait : null;
}

/**
 * Exponential backoff with full jitter: uniform in [0, min(maxDelay, baseDelay · 2^(retry−1))],
 * so clients that failed together do not come back together.
 */
export function backoff(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(policy.maxDelay, policy.baseDelay * 2 ** (retry - 1)));
}

/** Seconds from a `Retry-After` header: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
