import net from 'node:net';
import { CosClient, CosConnectionError, CosError, type RetryInfo } from '../../sdk/src';
import { freePort } from '../../scripts/local-services';
import { startHarness, type Harness } from '../support/harness';
import { recordingFetch, type RecordedAttempt } from '../support/recording-fetch';

/**
 * The SDK's retries against refusals and outages produced for real: a live starter key past its
 * 10 requests per second, a spent monthly quota, an API whose Redis is down, a closed port and a
 * server that never answers.
 */
let h: Harness;
let baseUrl: string;
let down: Harness;
let downUrl: string;
let now: number | null = null;
beforeAll(async () => {
  h = await startHarness({}, { clock: () => now ?? Date.now() });
  baseUrl = await h.listen();
  down = await startHarness({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  downUrl = await down.listen();
});
afterAll(async () => {
  await h.close();
  await down.close();
});
afterEach(() => {
  now = null;
});

/** Attempts grouped by call: the SDK sends the same X-Request-Id with every attempt of a call. */
function callsOf(attempts: RecordedAttempt[]): Map<string | null, RecordedAttempt[]> {
  const calls = new Map<string | null, RecordedAttempt[]>();
  for (const attempt of attempts) calls.set(attempt.callId, [...(calls.get(attempt.callId) ?? []), attempt]);
  return calls;
}
const windowEnd = (attempt: RecordedAttempt) => Number(attempt.headers!.get('x-ratelimit-reset'));

describe('429 RATE_LIMIT_EXCEEDED', () => {
  it('retries a starter key hammered past 10 requests/s, each time after Retry-After, until every call succeeds', async () => {
    const recorder = recordingFetch();
    const retries: RetryInfo[] = [];
    const apiKey = await h.key('sdk-hammer', 'live');
    const client = new CosClient({ apiKey, baseUrl, fetch: recorder.fetch, maxRetries: 10, onRetry: (info) => retries.push(info) });
    const burst = 25;
    const hammer = (round: number) =>
      Promise.all(
        Array.from({ length: burst }, (_, i) =>
          client.context({ userId: `sdk-hammer-${round}-${i}`, task: 'Answer email', complexity: 'low' }),
        ),
      );
    const refused = () => recorder.attempts.filter((attempt) => attempt.status === 429);

    // Bursts of 25 concurrent calls until the limiter has refused some: on a loaded machine one
    // burst may reach it spread over three windows of 10.
    let calls = 0;
    for (let round = 0; round < 5 && refused().length < 5; round++) {
      const answers = await hammer(round);
      expect(answers.every((answer) => answer.requestId.startsWith('req_'))).toBe(true);
      calls += burst;
    }

    expect(refused().length).toBeGreaterThanOrEqual(5);
    expect(recorder.attempts).toHaveLength(calls + refused().length);
    expect(retries).toHaveLength(refused().length);
    for (const retry of retries) {
      expect(retry.error).toBeInstanceOf(CosError);
      expect(retry.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', statusCode: 429, retryAfter: 1 });
      // Retry-After, plus a jittered share of the backoff (default base 500 ms, doubling).
      expect(retry.delay).toBeGreaterThanOrEqual(1000);
      expect(retry.delay).toBeLessThan(1000 + Math.min(8000, 500 * 2 ** (retry.attempt - 1)));
    }
    // Each call's attempts: 429s, then a 200; every retry reached the limiter in a later window
    // than the refusal before it, which it could only do by waiting.
    const byCall = callsOf(recorder.attempts);
    expect(byCall.size).toBe(calls);
    for (const attempts of byCall.values()) {
      expect(attempts.map((attempt) => attempt.status)).toEqual([...attempts.slice(1).map(() => 429), 200]);
      for (let i = 1; i < attempts.length; i++) expect(windowEnd(attempts[i]!)).toBeGreaterThan(windowEnd(attempts[i - 1]!));
    }
  });

  it('hands back a spent monthly quota at once: its Retry-After (until the 1st) is longer than worth waiting', async () => {
    now = Date.parse('2026-11-15T12:00:00Z');
    const issued = await h.keys.create({ account: 'sdk-quota', environment: 'live' });
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId: issued.accountId, month: '2026-11' }), '100000');
    const recorder = recordingFetch();
    const client = new CosClient({ apiKey: issued.key, baseUrl, fetch: recorder.fetch });

    const error = await client.getProfile('sdk-quota-user').catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(CosError);
    expect(error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      statusCode: 429,
      retryAfter: 15.5 * 86_400,
      attempts: 1,
      details: { scope: 'month', limit: 100_000 },
      rateLimit: { limit: 100_000, remaining: 0 },
    });
    expect(recorder.attempts).toHaveLength(1);
  });
});

describe('503 SERVICE_UNAVAILABLE and no answer at all', () => {
  it('retries an API whose Redis is down, never sooner than its Retry-After, then throws the typed error', async () => {
    const recorder = recordingFetch();
    const retries: RetryInfo[] = [];
    const apiKey = await down.key('sdk-down', 'test');
    const retry = { baseDelay: 40, maxDelay: 100 };
    const client = new CosClient({
      apiKey,
      baseUrl: downUrl,
      fetch: recorder.fetch,
      maxRetries: 3,
      retry,
      onRetry: (info) => retries.push(info),
    });

    const error = await client.context({ userId: 'sdk-down', task: 'Plan', complexity: 'low' }).catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(CosError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, retryAfter: 1, attempts: 4 });
    expect(recorder.attempts.map((attempt) => attempt.status)).toEqual([503, 503, 503, 503]);
    expect(callsOf(recorder.attempts).size).toBe(1);
    expect((error as CosError).requestId).toBe(recorder.attempts[0]!.callId);
    expect(retries.map((info) => info.attempt)).toEqual([1, 2, 3]);
    // The longer of its Retry-After (1 s) and the jittered backoff (under 100 ms here).
    retries.forEach((info) => {
      expect(info.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(info.delay).toBe(1000);
    });
  });

  it('stops waiting and attempting as soon as the caller aborts', async () => {
    const recorder = recordingFetch();
    const apiKey = await down.key('sdk-abort', 'test');
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const client = new CosClient({ apiKey, baseUrl: downUrl, fetch: recorder.fetch, onRetry: () => controller.abort(reason) });

    await expect(client.getProfile('sdk-abort', { signal: controller.signal })).rejects.toBe(reason);
    expect(recorder.attempts).toHaveLength(1);
  });

  it('retries a refused connection, then throws CosConnectionError', async () => {
    const recorder = recordingFetch();
    const client = new CosClient({
      apiKey: 'cos_sk_test_x',
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      fetch: recorder.fetch,
      retry: { baseDelay: 10 },
    });

    const error = await client.getProfile('sdk-closed').catch((failure: unknown) => failure);

    // The default 10 retries, well within the 30 s budget at this backoff.
    expect(error).toBeInstanceOf(CosConnectionError);
    expect(error).toMatchObject({ timedOut: false, attempts: 11 });
    expect(recorder.attempts).toHaveLength(11);
  });

  it('times out an attempt that gets no answer, retries it, then throws CosConnectionError with timedOut', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const recorder = recordingFetch();
    const client = new CosClient({
      apiKey: 'cos_sk_test_x',
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: recorder.fetch,
      timeout: 200,
      maxRetries: 1,
      retry: { baseDelay: 10 },
    });

    const error = await client.getProfile('sdk-silent').catch((failure: unknown) => failure);
    sockets.forEach((socket) => socket.destroy());
    silent.close();

    expect(error).toBeInstanceOf(CosConnectionError);
    expect(error).toMatchObject({ timedOut: true, attempts: 2 });
    expect(recorder.attempts).toHaveLength(2);
  });
});
