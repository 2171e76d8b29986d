import { findAccount, setRestricted } from '../../shared/accounts/account.repository';
import { bearer, eventually, eventuallyEqual, startHarness, type Harness } from '../support/harness';

/**
 * Limits through the real API and Redis. The clock is injected: the limiter's window and the
 * month follow `now`, so requests are placed at chosen instants instead of racing real time.
 */
let h: Harness;
let now: number | null = null;
const clock = () => now ?? Date.now();
beforeAll(async () => {
  h = await startHarness({}, { clock });
});
afterAll(() => h.close());
afterEach(() => {
  now = null;
});

async function liveKey(account: string, plan: 'starter' | 'pro' | 'enterprise' = 'starter', rps?: number) {
  const issued = await h.keys.create({ account, environment: 'live', rateLimitRps: rps ?? null });
  await h.env.db.updateTable('accounts').set({ plan }).where('name', '=', account).execute();
  return issued;
}

const SECOND = Date.UTC(2026, 7, 20, 9); // a whole epoch second, in ms
const EPOCH_SECOND = SECOND / 1000;
const get = (key: string) => h.http().get('/v1/profile/nobody').set(bearer(key));

/** Sends `count` requests one after another at the instant `at` (ms); returns the responses. */
async function burst(key: string, at: number, count: number) {
  now = at;
  const responses = [];
  for (let i = 0; i < count; i++) responses.push(await get(key));
  return responses;
}

describe('per-second rate limit (live keys)', () => {
  it.each([
    ['starter', 'starter', undefined, 10],
    ['an enterprise key with --rps 50', 'enterprise', 50, 50],
  ] as const)('admits exactly the limit within one second for %s and refuses the next with 429', async (_name, plan, rps, limit) => {
    const { key } = await liveKey(`rl-exact-${limit}`, plan, rps);
    const admitted = await burst(key, SECOND + 300, limit);
    expect(admitted.map((r) => r.status)).toEqual(Array(limit).fill(404));
    expect(admitted.map((r) => Number(r.headers['x-ratelimit-remaining']))).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
    expect(admitted.every((r) => r.headers['x-ratelimit-limit'] === String(limit))).toBe(true);
    const [next] = await burst(key, SECOND + 1299, 1);
    expect(next!.status).toBe(429);
    expect(next!.body.error.details).toEqual({ limit, window: '1s', retryAfter: 1, scope: 'second' });
    // One second after the burst its slots are free again.
    expect((await burst(key, SECOND + 1300, limit + 1)).map((r) => r.status)).toEqual([...Array(limit).fill(404), 429]);
  });

  it('counts any one-second span, not fixed windows: the limit used just before a boundary blocks the time after it', async () => {
    const { key } = await liveKey('rl-boundary');
    expect((await burst(key, SECOND + 950, 10)).every((r) => r.status === 404)).toBe(true);
    const afterBoundary = await burst(key, SECOND + 1050, 10); // fixed windows would admit these
    expect(afterBoundary.map((r) => r.status)).toEqual(Array(10).fill(429));
    expect(afterBoundary[0]!.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 2)); // slots free at +1.95 s
    expect((await burst(key, SECOND + 1949, 1))[0]!.status).toBe(429);
    expect((await burst(key, SECOND + 1950, 11)).map((r) => r.status)).toEqual([...Array(10).fill(404), 429]);
  });

  it('sends X-RateLimit headers on every live response and a full 429 body with Retry-After', async () => {
    const { key, id } = await liveKey('rl-headers', 'starter', 2);
    const [first, second] = await burst(key, SECOND + 250, 2);
    expect(first!.headers['x-ratelimit-limit']).toBe('2');
    expect(first!.headers['x-ratelimit-remaining']).toBe('1');
    expect(second!.headers['x-ratelimit-remaining']).toBe('0');
    // The oldest request of the last second leaves at +1.25 s: Reset is that second rounded up.
    expect(first!.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 2));
    expect(second!.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 2));
    const [third] = await burst(key, SECOND + 900, 1);
    expect(third!.status).toBe(429);
    expect(third!.headers['retry-after']).toBe('1');
    expect(third!.headers['x-ratelimit-limit']).toBe('2');
    expect(third!.headers['x-ratelimit-remaining']).toBe('0');
    expect(third!.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 2));
    expect(third!.body).toEqual({
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        message: expect.any(String),
        statusCode: 429,
        traceId: third!.headers['x-request-id'],
        docUrl: '/docs#error-rate_limit_exceeded',
        details: { limit: 2, window: '1s', retryAfter: 1, scope: 'second' },
      },
    });
    // Retry-After is truthful: one second after the refusal a request is admitted.
    expect((await burst(key, SECOND + 1900, 1))[0]!.status).toBe(404);
    const usage = await h.env.usage('2026-08-20', id);
    expect(usage[`${id}|profile.get|429`]).toBe('1');
  });

  it('applies plan limits: pro 100/s, enterprise 1000/s by default, a key override wins', async () => {
    expect((await get((await liveKey('rl-pro', 'pro')).key)).headers['x-ratelimit-limit']).toBe('100');
    expect((await get((await liveKey('rl-ent', 'enterprise')).key)).headers['x-ratelimit-limit']).toBe('1000');
    expect((await get((await liveKey('rl-ent-override', 'enterprise', 250)).key)).headers['x-ratelimit-limit']).toBe('250');
  });

  it('checks the limit after auth and before the body: an invalid body over the limit is 429', async () => {
    const { key } = await liveKey('rl-order', 'starter', 1);
    expect((await burst(key, SECOND, 1))[0]!.status).toBe(404);
    const res = await h.http().post('/v1/context').set(bearer(key)).set('Content-Type', 'application/json').send('{bad');
    expect(res.status).toBe(429);
  });

  it('limits context calls, whose check rides with the profile read, exactly as any other endpoint', async () => {
    const { key } = await liveKey('rl-context', 'starter', 3);
    now = SECOND + 100;
    const call = (userId: string) => h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call(`rl-context-${i}`));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(answers[3]!.body.error.details).toEqual({ limit: 3, window: '1s', retryAfter: 1, scope: 'second' });
    // The refused call went no further: its user was never created.
    expect((await h.http().get('/v1/profile/rl-context-3').set(bearer(key))).status).toBe(429);
    now = SECOND + 1100;
    expect((await h.http().get('/v1/profile/rl-context-3').set(bearer(key))).status).toBe(404);
    // A body that fails validation is limited first too: 429 over the limit, 400 with the headers under it.
    now = SECOND + 1200;
    const invalid = () => h.http().post('/v1/context').set(bearer(key)).send({ task: 't' });
    const first = await invalid();
    expect(first.status).toBe(400);
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect((await invalid()).status).toBe(400);
    expect((await invalid()).status).toBe(429);
  });

  it('limits a replayed context call (Idempotency-Key) like any other: the replay counts, and over the limit it is a 429', async () => {
    const { key } = await liveKey('rl-replay', 'starter', 2);
    now = SECOND + 100;
    const call = () =>
      h.http().post('/v1/context').set(bearer(key)).set('Idempotency-Key', 'rl-replay-1').send({ userId: 'rl-replay', task: 't' });
    const first = await call();
    const replay = await call();
    const over = await call();
    expect([first.status, replay.status, over.status]).toEqual([200, 200, 429]);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect([first, replay].map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['1', '0']);
    expect(over.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(over.headers['idempotent-replayed']).toBeUndefined();
    // In the next second the key replays again.
    now = SECOND + 1200;
    expect((await call()).headers['idempotent-replayed']).toBe('true');
  });

  it('meters a context call whose profile read fails after the limiter admitted it as what it was answered', async () => {
    const { key, id } = await liveKey('rl-read-fails', 'starter', 100);
    const account = (await findAccount(h.env.db, 'rl-read-fails'))!;
    now = Date.UTC(2026, 6, 1, 12);
    // A value of the wrong type where the user's cached profile belongs: the read fails in Redis.
    await h.env.redis.set(h.env.keys.profile({ accountId: account.id, environment: 'live' }, 'broken'), 'not a hash');
    const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'broken', task: 't', complexity: 'low' });
    expect(res.status).toBe(500);
    expect(res.headers['x-ratelimit-limit']).toBe('100');
    await eventuallyEqual(() => h.env.usage('2026-07-01', id), { [`${id}|context|2xx`]: '0', [`${id}|context|5xx`]: '1' }, 5000);
  });

  it('sends X-RateLimit headers on live 403s without counting them against the limit', async () => {
    const { key } = await liveKey('rl-refused', 'starter', 2);
    const contextOnly = await h.keys.create({ account: 'rl-refused', environment: 'live', scopes: ['context'], rateLimitRps: 2 });
    now = SECOND + 400;
    const refused = await get(contextOnly.key);
    expect(refused.status).toBe(403);
    expect(refused.headers['x-ratelimit-limit']).toBe('2');
    expect(refused.headers['x-ratelimit-remaining']).toBe('2');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 1)); // nothing counted: now, rounded up
    const accepted = await h.http().post('/v1/context').set(bearer(contextOnly.key)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(accepted.status).toBe(200);
    expect(accepted.headers['x-ratelimit-remaining']).toBe('1');
    expect(accepted.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 2));
    const again = await get(contextOnly.key);
    expect(again.status).toBe(403);
    expect(again.headers['x-ratelimit-remaining']).toBe('1');
    expect(again.headers['x-ratelimit-reset']).toBe(String(EPOCH_SECOND + 2));

    await setRestricted(h.env.db, (await findAccount(h.env.db, 'rl-refused'))!.id, true);
    const restricted = await eventually(
      async () => {
        const res = await get(key);
        return res.status === 403 ? res : null;
      },
      2500,
      50,
    );
    expect(restricted.body.error.code).toBe('ACCOUNT_RESTRICTED');
    expect(restricted.headers['x-ratelimit-limit']).toBe('2');
    expect(restricted.headers['retry-after']).toBeUndefined();

    const testKey = await h.keys.create({ account: 'rl-refused-test', environment: 'test', scopes: ['context'] });
    const testRefused = await get(testKey.key);
    expect(testRefused.status).toBe(403);
    expect(testRefused.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('never limits test keys and sends them no rate-limit headers', async () => {
    const key = await h.key('rl-test-key', 'test');
    await h.env.db.updateTable('accounts').set({ plan: 'starter' }).where('name', '=', 'rl-test-key').execute();
    const responses = await Promise.all(Array.from({ length: 60 }, () => get(key)));
    expect(responses.every((r) => r.status === 404)).toBe(true);
    expect(responses.some((r) => r.headers['x-ratelimit-limit'] !== undefined)).toBe(false);
  });
});

describe('monthly quota (live keys)', () => {
  it('refuses past the quota with scope month until the 1st (UTC), then lets requests through again', async () => {
    const { key, accountId } = await liveKey('quota-starter');
    now = Date.UTC(2026, 10, 30, 23, 59, 30); // 30 s before December
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId, month: '2026-11' }), '100000');
    const refused = await get(key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toEqual({ limit: 100000, window: `${30 * 86400}s`, retryAfter: 30, scope: 'month' });
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-ratelimit-limit']).toBe('100000');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2026, 11, 1) / 1000));
    now = Date.UTC(2026, 11, 1, 0, 0, 1); // rolled over into December
    expect((await get(key)).status).toBe(404);
    expect(await h.env.redis.get(h.env.keys.monthlyCount({ accountId, month: '2026-12' }))).toBe('1');
  });

  it('sends the quota headers on a 403 once the quota is used up, without counting it', async () => {
    const contextOnly = await h.keys.create({ account: 'quota-refused', environment: 'live', scopes: ['context'] });
    now = Date.UTC(2027, 1, 27, 12); // 1.5 days before March
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId: contextOnly.accountId, month: '2027-02' }), '100000');
    const refused = await get(contextOnly.key);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(refused.headers['x-ratelimit-limit']).toBe('100000');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2027, 2, 1) / 1000));
    expect(refused.headers['retry-after']).toBeUndefined(); // retrying cannot turn a 403 into a success
    // The same key where it has the scope: 429 with Retry-After to the 1st.
    const limited = await h.http().post('/v1/context').set(bearer(contextOnly.key)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe(String(1.5 * 86_400));
    expect(limited.body.error.details).toEqual({ limit: 100000, window: `${28 * 86400}s`, retryAfter: 1.5 * 86_400, scope: 'month' });
    expect(limited.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2027, 2, 1) / 1000));
    expect(await h.env.redis.get(h.env.keys.monthlyCount({ accountId: contextOnly.accountId, month: '2027-02' }))).toBe('100000');
  });

  it('counts only accepted requests towards the quota; pro allows 1,000,000 and enterprise has none', async () => {
    const { key, accountId } = await liveKey('quota-pro', 'pro');
    now = Date.UTC(2027, 0, 15);
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId, month: '2027-01' }), '999999');
    expect((await get(key)).status).toBe(404);
    expect((await get(key)).status).toBe(429);
    expect(await h.env.redis.get(h.env.keys.monthlyCount({ accountId, month: '2027-01' }))).toBe('1000000');
    const enterprise = await liveKey('quota-ent', 'enterprise');
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId: enterprise.accountId, month: '2027-01' }), '50000000');
    expect((await get(enterprise.key)).status).toBe(404);
  });
});

describe('metering (live keys)', () => {
  it('counts each request per key, UTC day, endpoint and status class, 429s separately', async () => {
    const { key, id } = await liveKey('meter', 'starter', 1000);
    now = Date.UTC(2026, 5, 10, 12);
    const scoped = await h.keys.create({ account: 'meter', environment: 'live', scopes: ['context'] });
    for (let i = 0; i < 3; i++)
      expect(
        (
          await h
            .http()
            .post('/v1/context')
            .set(bearer(key))
            .send({ userId: `m${i}`, task: 't', complexity: 'low' })
        ).status,
      ).toBe(200);
    expect((await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'm', task: '', complexity: 'low' })).status).toBe(400);
    expect((await get(key)).status).toBe(404);
    expect((await get(scoped.key)).status).toBe(403);
    // Reclassification runs after the response: poll until it has landed.
    await eventuallyEqual(
      () => h.env.usage('2026-06-10', id, scoped.id),
      {
        [`${id}|context|2xx`]: '3',
        [`${id}|context|4xx`]: '1',
        [`${id}|profile.get|2xx`]: '0',
        [`${id}|profile.get|4xx`]: '1',
        [`${scoped.id}|profile.get|4xx`]: '1',
      },
      5000,
    );
    const testKey = await h.keys.create({ account: 'meter', environment: 'test' });
    await get(testKey.key);
    expect(Object.keys(await h.env.usage('2026-06-10', id, scoped.id, testKey.id))).toHaveLength(5);
    const account = (await findAccount(h.env.db, 'meter'))!;
    expect(account.plan).toBe('starter');
  });
});
