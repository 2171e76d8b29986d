import { flushTraffic } from '../../shared/traffic/traffic-flush';
import { countryCounts, trafficSeries, type TrafficScope } from '../../shared/traffic/traffic-queries';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import request from 'supertest';
import { Queue } from 'bullmq';
import { JOBS, MAINTENANCE_QUEUE } from '../../shared/jobs/catalog';

let h: Harness;
let now = Date.UTC(2026, 5, 10, 12, 30, 15);
beforeAll(async () => {
  h = await startHarness({}, { clock: () => now });
});
afterAll(() => h.close());

const flush = async () => {
  await h.deps.traffic.flush();
  await flushTraffic(h.env);
};

async function issue(account: string, environment: 'test' | 'live' = 'live') {
  const issued = await h.keys.create({ account, environment, rateLimitRps: environment === 'live' ? 1000 : null });
  const { account_id: accountId } = await h.env.db
    .selectFrom('api_keys')
    .select('account_id')
    .where('id', '=', issued.id)
    .executeTakeFirstOrThrow();
  return { ...issued, scope: { accountId, environment, keyId: issued.id } satisfies TrafficScope };
}

/** Flushes until the key's last minute shows `requests` (a response's count lands once it is sent). */
async function lastMinute(scope: TrafficScope, requests: number) {
  return eventually(async () => {
    await flush();
    const point = (await trafficSeries(h.env.db, scope, '1h', now)).points.at(-1)!;
    return point.requests === requests && point;
  });
}

describe('traffic recording', () => {
  it('records requests per key and minute by endpoint and status, with latency and country, in minute and hour rows', async () => {
    const key = await issue('traffic-basic');
    for (let i = 0; i < 3; i++) {
      expect((await h.http().post('/v1/context').set(bearer(key.key)).send({ userId: 'u', task: 't', complexity: 'low' })).status).toBe(
        200,
      );
    }
    for (let i = 0; i < 2; i++) expect((await h.http().get(`/v1/profile/nobody-${i}`).set(bearer(key.key))).status).toBe(404);

    const minute = await lastMinute(key.scope, 5);
    expect(minute.at).toBe('2026-06-10T12:30:00.000Z');
    expect(minute.byEndpoint).toEqual({
      context: { '2xx': 3, '3xx': 0, '4xx': 0, '5xx': 0 },
      'profile.get': { '2xx': 0, '3xx': 0, '4xx': 2, '5xx': 0 },
    });
    expect(minute.byClass).toEqual({ '2xx': 3, '3xx': 0, '4xx': 2, '5xx': 0 });
    expect(minute.p50Ms).toBeGreaterThan(0);
    expect(minute.p95Ms).toBeGreaterThanOrEqual(minute.p50Ms!);

    const hour = (await trafficSeries(h.env.db, key.scope, '24h', now)).points.at(-1)!;
    expect(hour).toEqual({ ...minute, at: '2026-06-10T12:00:00.000Z' });
    // Supertest connects over loopback: no country.
    expect(await countryCounts(h.env.db, key.scope, '1h', now)).toEqual([{ country: 'ZZ', requests: 5 }]);
    // Nothing left in Redis, and a further flush adds nothing.
    await flush();
    expect((await trafficSeries(h.env.db, key.scope, '1h', now)).points.at(-1)!.requests).toBe(5);
    expect(await h.env.redis.scard(h.env.keys.trafficSnapshots)).toBe(0);
  });

  it('keeps live and test apart, and an account apart from its keys', async () => {
    const live = await issue('traffic-envs', 'live');
    const test = await issue('traffic-envs', 'test');
    await h.http().get('/v1/profile/a').set(bearer(live.key));
    for (let i = 0; i < 2; i++) await h.http().get('/v1/profile/b').set(bearer(test.key));
    await lastMinute(test.scope, 2);
    await lastMinute(live.scope, 1);
    const account = { accountId: live.scope.accountId };
    expect((await trafficSeries(h.env.db, { ...account, environment: 'live' }, '1h', now)).points.at(-1)!.requests).toBe(1);
    expect((await trafficSeries(h.env.db, { ...account, environment: 'test' }, '1h', now)).points.at(-1)!.requests).toBe(2);
  });

  it('counts the 401s of a revoked key against that key', async () => {
    const key = await issue('traffic-revoked');
    expect((await h.http().get('/v1/profile/x').set(bearer(key.key))).status).toBe(404);
    await h.keys.revoke(key.id);
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(key.key))).status === 401);
    for (let i = 0; i < 4; i++) expect((await h.http().get('/v1/profile/x').set(bearer(key.key))).status).toBe(401);
    await eventually(async () => {
      await flush();
      const point = (await trafficSeries(h.env.db, key.scope, '1h', now)).points.at(-1)!;
      return point.unauthorized >= 5 && point.byEndpoint['profile.get']!['4xx'] === point.requests;
    });
  });

  it('counts each minute once when a flush dies between its commit and the snapshot cleanup', async () => {
    const key = await issue('traffic-crash');
    now = Date.UTC(2026, 5, 10, 12, 41, 5);
    for (let i = 0; i < 4; i++) await h.http().get('/v1/profile/x').set(bearer(key.key));
    await eventually(async () => {
      await h.deps.traffic.flush();
      const counts = await h.env.redis.hgetall(h.env.keys.traffic('2026-06-10T12:41'));
      return Object.entries(counts).some(([field, value]) => field.startsWith(`${key.id}|req|`) && value === '4');
    });
    await expect(
      flushTraffic(h.env, {
        afterCommit: () => {
          throw new Error('killed after commit');
        },
      }),
    ).rejects.toThrow('killed after commit');
    await flushTraffic(h.env);
    expect((await trafficSeries(h.env.db, key.scope, '1h', now)).points.at(-1)!.requests).toBe(4);
    expect((await trafficSeries(h.env.db, key.scope, '24h', now)).points.at(-1)!.requests).toBe(4);
    expect(await h.env.redis.scard(h.env.keys.trafficSnapshots)).toBe(0);
  });
});

describe('the worker', () => {
  it('flushes recorded traffic on its schedule and schedules retention and the pattern job', async () => {
    const key = await issue('traffic-worker');
    h.startWorker(undefined, { USAGE_FLUSH_INTERVAL: '200ms' });
    for (let i = 0; i < 3; i++) await h.http().get('/v1/profile/x').set(bearer(key.key));
    await eventually(async () => (await trafficSeries(h.env.db, key.scope, '1h', now)).points.at(-1)!.requests === 3);
    const queue = new Queue(MAINTENANCE_QUEUE, { connection: h.env.redis, prefix: h.env.keys.maintenanceQueuePrefix });
    expect(await queue.getJobScheduler(JOBS.trafficFlush.scheduler.id)).toMatchObject({ every: 200 });
    expect(await queue.getJobScheduler(JOBS.trafficRetention.scheduler.id)).toMatchObject({ pattern: '23 * * * *', tz: 'UTC' });
    expect(await queue.getJobScheduler(JOBS.trafficPatterns.scheduler.id)).toMatchObject({ pattern: '*/5 * * * *', tz: 'UTC' });
    await queue.close();
  });
});

describe('client country and TRUST_PROXY', () => {
  const countriesVia = async (trustProxy: string[] | undefined, forwardedFor: string) => {
    const key = await issue(`traffic-geo-${Math.random().toString(36).slice(2)}`);
    const app = h.appWith({ trustProxy });
    expect((await request(app).get('/v1/profile/x').set(bearer(key.key)).set('X-Forwarded-For', forwardedFor)).status).toBe(404);
    await lastMinute(key.scope, 1);
    return countryCounts(h.env.db, key.scope, '1h', now);
  };

  it('ignores X-Forwarded-For without TRUST_PROXY: the client is the socket peer', async () => {
    expect(await countriesVia(undefined, '8.8.8.8')).toEqual([{ country: 'ZZ', requests: 1 }]);
  });

  it('ignores X-Forwarded-For from a peer that is not a named proxy', async () => {
    expect(await countriesVia(['10.1.2.3'], '8.8.8.8')).toEqual([{ country: 'ZZ', requests: 1 }]);
  });

  it.each([
    ['8.8.8.8', 'US'],
    ['81.2.69.160', 'GB'],
    ['133.242.0.3', 'JP'],
  ])('honours X-Forwarded-For %s behind a named proxy (loopback): %s', async (address, country) => {
    expect(await countriesVia(['loopback'], address)).toEqual([{ country, requests: 1 }]);
  });

  it('takes the address the nearest trusted proxy saw, not one the client wrote further left', async () => {
    expect(await countriesVia(['loopback'], '133.242.0.3, 81.2.69.160')).toEqual([{ country: 'GB', requests: 1 }]);
  });
});
