import { Redis } from 'ioredis';
import { findAccount, setRestricted } from '../../shared/keys/account.repository';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

/** Limits through the real API and Redis, with an injectable clock for month edges. */
let h: Harness;
let now: number | null = null;
const clock = () => now ?? Date.now();
beforeAll(async () => {
  h = await startHarness({}, clock);
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

/** Waits until the start of a fresh Redis-time second, so a burst lands in one window. */
async function atFreshSecond(redis: Redis): Promise<void> {
  const [, micros] = await redis.time();
  await new Promise((r) => setTimeout(r, Math.max(0, 1000 - Number(micros) / 1000) + 20));
}

const get = (key: string) => h.http().get('/v1/profile/nobody').set(bearer(key));

describe('per-second rate limit (live keys)', () => {
  it('lets exactly the plan limit through in one window and refuses the rest with 429', async () => {
    const { key } = await liveKey('rl-starter');
    await atFreshSecond(h.env.redis);
    const responses = await Promise.all(Array.from({ length: 30 }, () => get(key)));
    const bySecond = new Map<string, number>();
    for (const res of responses) {
      const window = String(res.headers['x-ratelimit-reset']);
      if (res.status === 404) bySecond.set(window, (bySecond.get(window) ?? 0) + 1);
      else expect(res.status).toBe(429);
    }
    for (const allowed of bySecond.values()) expect(allowed).toBeLessThanOrEqual(10);
    expect([...bySecond.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(10);
    expect(responses.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(10);
  });

  it('sends X-RateLimit headers on every live response and a full 429 body with Retry-After', async () => {
    const { key, id } = await liveKey('rl-headers', 'starter', 2);
    await atFreshSecond(h.env.redis);
    const first = await get(key);
    const second = await get(key);
    const third = await get(key);
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect(second.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(first.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('1');
    expect(third.headers['x-ratelimit-remaining']).toBe('0');
    expect(third.body).toEqual({
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        message: expect.any(String),
        statusCode: 429,
        details: { limit: 2, window: '1s', retryAfter: 1, scope: 'second' },
      },
    });
    const usage = await h.env.redis.hgetall(h.env.keys.usage(new Date().toISOString().slice(0, 10)));
    expect(usage[`${id}|profile.get|429`]).toBe('1');
  });

  it('applies plan limits: pro 100/s, enterprise 1000/s by default, a key override wins', async () => {
    expect((await get((await liveKey('rl-pro', 'pro')).key)).headers['x-ratelimit-limit']).toBe('100');
    expect((await get((await liveKey('rl-ent', 'enterprise')).key)).headers['x-ratelimit-limit']).toBe('1000');
    expect((await get((await liveKey('rl-ent-override', 'enterprise', 250)).key)).headers['x-ratelimit-limit']).toBe('250');
  });

  it('checks the limit after auth and before the body: an invalid body over the limit is 429', async () => {
    const { key } = await liveKey('rl-order', 'starter', 1);
    await atFreshSecond(h.env.redis);
    expect((await get(key)).status).toBe(404);
    const res = await h.http().post('/v1/context').set(bearer(key)).set('Content-Type', 'application/json').send('{bad');
    expect(res.status).toBe(429);
  });

  it('sends X-RateLimit headers on live 403s without counting them against the limit', async () => {
    const { key } = await liveKey('rl-refused', 'starter', 2);
    const contextOnly = await h.keys.create({ account: 'rl-refused', environment: 'live', scopes: ['context'], rateLimitRps: 2 });
    await atFreshSecond(h.env.redis);
    const refused = await get(contextOnly.key);
    expect(refused.status).toBe(403);
    expect(refused.headers['x-ratelimit-limit']).toBe('2');
    expect(refused.headers['x-ratelimit-remaining']).toBe('2');
    const accepted = await h.http().post('/v1/context').set(bearer(contextOnly.key)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(accepted.status).toBe(200);
    expect(accepted.headers['x-ratelimit-remaining']).toBe('1');
    const again = await get(contextOnly.key);
    expect(again.status).toBe(403);
    expect(again.headers['x-ratelimit-remaining']).toBe('1');
    expect(Number(again.headers['x-ratelimit-reset'])).toBe(Number(accepted.headers['x-ratelimit-reset']));

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
    const { key, id } = await liveKey('quota-starter');
    now = Date.UTC(2026, 10, 30, 23, 59, 30); // 30 s before December
    await h.env.redis.set(h.env.keys.monthlyCount(id, '2026-11'), '100000');
    const refused = await get(key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toEqual({ limit: 100000, window: `${30 * 86400}s`, retryAfter: 30, scope: 'month' });
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2026, 11, 1) / 1000));
    now = Date.UTC(2026, 11, 1, 0, 0, 1); // rolled over into December
    expect((await get(key)).status).toBe(404);
    expect(await h.env.redis.get(h.env.keys.monthlyCount(id, '2026-12'))).toBe('1');
  });

  it('counts only accepted requests towards the quota; pro allows 1,000,000 and enterprise has none', async () => {
    const { key, id } = await liveKey('quota-pro', 'pro');
    now = Date.UTC(2027, 0, 15);
    await h.env.redis.set(h.env.keys.monthlyCount(id, '2027-01'), '999999');
    expect((await get(key)).status).toBe(404);
    expect((await get(key)).status).toBe(429);
    expect(await h.env.redis.get(h.env.keys.monthlyCount(id, '2027-01'))).toBe('1000000');
    const enterprise = await liveKey('quota-ent', 'enterprise');
    await h.env.redis.set(h.env.keys.monthlyCount(enterprise.id, '2027-01'), '50000000');
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
    const usage = h.env.keys.usage('2026-06-10');
    await new Promise((r) => setTimeout(r, 200)); // reclassification runs after the response
    expect(await h.env.redis.hgetall(usage)).toEqual({
      [`${id}|context|2xx`]: '3',
      [`${id}|context|4xx`]: '1',
      [`${id}|profile.get|2xx`]: '0',
      [`${id}|profile.get|4xx`]: '1',
      [`${scoped.id}|profile.get|4xx`]: '1',
    });
    const testKey = await h.key('meter', 'test');
    await get(testKey);
    expect(Object.keys(await h.env.redis.hgetall(usage))).toHaveLength(5);
    const account = (await findAccount(h.env.db, 'meter'))!;
    expect(account.plan).toBe('starter');
  });
});
