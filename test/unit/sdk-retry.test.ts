import { CosConnectionError, CosError, type CosErrorCode } from '../../sdk/src/errors';
import { errorFromResponse } from '../../sdk/src/response';
import { DEFAULT_RETRY_POLICY, backoff, parseRetryAfter, retryDelay } from '../../sdk/src/retry';

/** The SDK's retry rules as pure functions: which failures are retried, and after how long. */
const policy = { ...DEFAULT_RETRY_POLICY, maxRetries: 5, baseDelay: 100, maxDelay: 1000, maxRetryAfter: 60_000, budget: 30_000 };
const failure = (statusCode: number, code: CosErrorCode, retryAfter?: number) =>
  new CosError({ code, message: 'm', statusCode, retryAfter, attempts: 1 });
const connectionFailure = (timedOut: boolean) => new CosConnectionError('m', { timedOut, attempts: 1 });
const highest = () => 0.999999;

describe('backoff', () => {
  it('is full jitter: uniform from 0 up to a ceiling that doubles per retry from baseDelay and stops at maxDelay', () => {
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoff(retry, policy, () => 0))).toEqual([0, 0, 0, 0, 0, 0]);
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoff(retry, policy, highest))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoff(3, policy, () => 0.5)).toBe(200);
  });
});

describe('retryDelay', () => {
  it('waits Retry-After plus the jittered backoff on a 429: never sooner, and not all clients at once', () => {
    expect(retryDelay(failure(429, 'RATE_LIMIT_EXCEEDED', 1), 1, policy, () => 0)).toBe(1000);
    expect(retryDelay(failure(429, 'RATE_LIMIT_EXCEEDED', 1), 1, policy, highest)).toBe(1099);
    expect(retryDelay(failure(429, 'RATE_LIMIT_EXCEEDED', 7), 4, policy, highest)).toBe(7799);
    // Clients refused in the same instant come back spread over the backoff, none before Retry-After.
    const waits = Array.from({ length: 50 }, () => retryDelay(failure(429, 'RATE_LIMIT_EXCEEDED', 1), 2, policy)!);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    expect(new Set(waits).size).toBeGreaterThan(10);
  });

  it('hands a 429 whose Retry-After is longer than maxRetryAfter (a spent monthly quota) back at once', () => {
    expect(retryDelay(failure(429, 'RATE_LIMIT_EXCEEDED', 86_400), 1, policy)).toBeNull();
  });

  it('backs off on a 429 without Retry-After', () => {
    expect(retryDelay(failure(429, 'UNEXPECTED_RESPONSE'), 2, policy, highest)).toBe(199);
  });

  it('backs off on 503, on 502/504 from a proxy, on connection failures and on timeouts, never sooner than a Retry-After', () => {
    expect(retryDelay(failure(503, 'SERVICE_UNAVAILABLE', 1), 1, policy, highest)).toBe(1000);
    expect(retryDelay(failure(503, 'SERVICE_UNAVAILABLE'), 1, policy, highest)).toBe(99);
    expect(retryDelay(failure(502, 'UNEXPECTED_RESPONSE'), 2, policy, highest)).toBe(199);
    expect(retryDelay(failure(504, 'UNEXPECTED_RESPONSE'), 3, policy, highest)).toBe(399);
    expect(retryDelay(connectionFailure(false), 1, policy, highest)).toBe(99);
    expect(retryDelay(connectionFailure(true), 1, policy, highest)).toBe(99);
  });

  it('retries 409 IDEMPOTENCY_KEY_IN_USE after Retry-After plus the jittered backoff, within the budget', () => {
    expect(retryDelay(failure(409, 'IDEMPOTENCY_KEY_IN_USE', 1), 1, policy, () => 0)).toBe(1000);
    expect(retryDelay(failure(409, 'IDEMPOTENCY_KEY_IN_USE', 1), 3, policy, highest)).toBe(1399);
    expect(retryDelay(failure(409, 'IDEMPOTENCY_KEY_IN_USE'), 2, policy, highest)).toBe(199);
    expect(retryDelay(failure(409, 'IDEMPOTENCY_KEY_IN_USE', 1), 1, policy, highest, 28_900)).toBe(1099);
    expect(retryDelay(failure(409, 'IDEMPOTENCY_KEY_IN_USE', 1), 1, policy, highest, 28_902)).toBeNull();
    expect(retryDelay(failure(409, 'IDEMPOTENCY_KEY_IN_USE', 1), 6, policy)).toBeNull();
  });

  it('never retries other 4xx answers, nor 500', () => {
    const final: Array<[number, CosErrorCode]> = [
      [400, 'VALIDATION_ERROR'],
      [400, 'INVALID_JSON'],
      [401, 'UNAUTHORIZED'],
      [403, 'FORBIDDEN'],
      [404, 'USER_NOT_FOUND'],
      [405, 'METHOD_NOT_ALLOWED'],
      [409, 'OUTCOME_CONFLICT'],
      [409, 'IDEMPOTENCY_KEY_REUSED'],
      [410, 'OUTCOME_WINDOW_CLOSED'],
      [413, 'PAYLOAD_TOO_LARGE'],
      [415, 'UNSUPPORTED_MEDIA_TYPE'],
      [500, 'INTERNAL_ERROR'],
    ];
    for (const [status, code] of final) expect(retryDelay(failure(status, code), 1, policy)).toBeNull();
  });

  it('stops after maxRetries retries', () => {
    expect(retryDelay(failure(503, 'SERVICE_UNAVAILABLE'), 5, policy)).not.toBeNull();
    expect(retryDelay(failure(503, 'SERVICE_UNAVAILABLE'), 6, policy)).toBeNull();
    expect(retryDelay(connectionFailure(true), 6, policy)).toBeNull();
  });

  it('keeps retrying an unavailable service while the call stays within its budget, then stops', () => {
    expect(retryDelay(failure(503, 'SERVICE_UNAVAILABLE', 1), 2, policy, highest, 28_000)).toBe(1000);
    expect(retryDelay(failure(503, 'SERVICE_UNAVAILABLE', 1), 2, policy, highest, 29_500)).toBeNull();
    expect(retryDelay(connectionFailure(false), 2, policy, highest, 29_900)).toBeNull();
    // The defaults bridge a Redis restart: 10 retries, 30 s.
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ maxRetries: 10, budget: 30_000 });
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('1', now)).toBe(1);
    expect(parseRetryAfter(' 120 ', now)).toBe(120);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});

describe('errorFromResponse', () => {
  const received = (statusCode: number, text: string, headers: Record<string, string> = {}) => ({
    statusCode,
    headers: new Headers(headers),
    text,
    requestId: 'rid-1',
    attempt: 2,
  });

  it("carries the envelope's code, message and details, X-Request-Id and the attempt count", () => {
    const body = { error: { code: 'USER_NOT_FOUND', message: 'No profile for user "u"', statusCode: 404 } };
    const error = errorFromResponse(received(404, JSON.stringify(body)));
    expect(error).toMatchObject({
      code: 'USER_NOT_FOUND',
      statusCode: 404,
      message: 'No profile for user "u"',
      requestId: 'rid-1',
      attempts: 2,
    });
  });

  it("takes retryAfter from the Retry-After header, else from the 429 body's details.retryAfter", () => {
    const details = { limit: 10, window: '1s', retryAfter: 3, scope: 'second' };
    const text = JSON.stringify({ error: { code: 'RATE_LIMIT_EXCEEDED', message: 'm', statusCode: 429, details } });
    expect(errorFromResponse(received(429, text, { 'Retry-After': '1' })).retryAfter).toBe(1);
    expect(errorFromResponse(received(429, text)).retryAfter).toBe(3);
    expect(errorFromResponse(received(429, text)).details).toEqual(details);
  });

  it("carries the body's traceId and docUrl; without them, traceId is the answer's X-Request-Id", () => {
    const docUrl = 'https://cos.example.com/docs#error-USER_NOT_FOUND';
    const full = { error: { code: 'USER_NOT_FOUND', message: 'm', statusCode: 404, traceId: 'trace-9', docUrl } };
    expect(errorFromResponse(received(404, JSON.stringify(full)))).toMatchObject({ traceId: 'trace-9', docUrl, requestId: 'rid-1' });
    const bare = { error: { code: 'USER_NOT_FOUND', message: 'm', statusCode: 404 } };
    const error = errorFromResponse(received(404, JSON.stringify(bare)));
    expect(error.traceId).toBe('rid-1');
    expect(error.docUrl).toBeUndefined();
    // Not the envelope: still the exchange's id, to find it in the logs.
    expect(errorFromResponse(received(502, '<html>Bad gateway</html>')).traceId).toBe('rid-1');
  });

  it('answers anything but the envelope (a proxy page) with UNEXPECTED_RESPONSE and the status', () => {
    expect(errorFromResponse(received(502, '<html>Bad gateway</html>'))).toMatchObject({ code: 'UNEXPECTED_RESPONSE', statusCode: 502 });
  });

  it('keeps a code this SDK does not know (a newer service), with its message and details', () => {
    const unknown = JSON.stringify({
      error: { code: 'SOMETHING_NEW', message: 'A newer refusal', statusCode: 400, details: { hint: 'h' } },
    });
    expect(errorFromResponse(received(400, unknown))).toMatchObject({
      code: 'SOMETHING_NEW',
      message: 'A newer refusal',
      statusCode: 400,
      details: { hint: 'h' },
    });
  });
});
