import { KeyService } from '../../shared/credentials/key.service';
import { quotaForecasts } from '../../shared/traffic/quota-forecast';
import { countryCounts, trafficSeries } from '../../shared/traffic/traffic-queries';
import { pruneTraffic } from '../../shared/traffic/traffic-retention';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { flushSeeded, seedMinute } from '../support/traffic';

let env: TestEnv;
let keys: KeyService;
beforeAll(async () => {
  env = await createTestEnv();
  keys = new KeyService(env.db, TEST_SECRET);
});
afterAll(() => env.close());

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

async function issue(account: string, environment: 'test' | 'live' = 'live', name?: string) {
  const issued = await keys.create({ account, environment, name });
  const row = await env.db.selectFrom('api_keys').select('account_id').where('id', '=', issued.id).executeTakeFirstOrThrow();
  return { id: issued.id, accountId: row.account_id };
}

describe('traffic series', () => {
  const now = Date.UTC(2026, 5, 20, 15, 42, 30);

  it('gives the last hour per minute, 24 hours per hour and 30 days per day, dense and ending at now', async () => {
    const key = await issue('series-windows');
    const scope = { accountId: key.accountId, environment: 'live' as const, keyId: key.id };
    await seedMinute(env, key.id, now, { requests: { 'context:2xx': 5 } });
    await seedMinute(env, key.id, now - 10 * MIN, { requests: { 'context:2xx': 2, 'context:5xx': 1 } });
    await seedMinute(env, key.id, now - 90 * MIN, { requests: { 'outcome:2xx': 7 } }); // outside the hour
    await seedMinute(env, key.id, now - 3 * DAY, { requests: { 'profile.get:4xx': 4 } }); // outside 24 h
    await seedMinute(env, key.id, now - 40 * DAY, { requests: { 'context:2xx': 100 } }); // outside 30 days
    await flushSeeded(env);

    const hour = await trafficSeries(env.db, scope, '1h', now);
    expect(hour.points).toHaveLength(60);
    expect(hour.points.at(-1)).toMatchObject({ at: '2026-06-20T15:42:00.000Z', requests: 5 });
    expect(hour.points.at(-11)).toMatchObject({ at: '2026-06-20T15:32:00.000Z', requests: 3, byClass: { '2xx': 2, '5xx': 1 } });
    expect(hour.points.reduce((sum, p) => sum + p.requests, 0)).toBe(8);

    const day = await trafficSeries(env.db, scope, '24h', now);
    expect(day.points).toHaveLength(24);
    expect(day.points.at(-1)).toMatchObject({ at: '2026-06-20T15:00:00.000Z', requests: 8 });
    expect(day.points.at(-3)).toMatchObject({ at: '2026-06-20T13:00:00.000Z', requests: 0 });
    expect(day.points.at(-2)).toMatchObject({ at: '2026-06-20T14:00:00.000Z', requests: 7, byEndpoint: { outcome: { '2xx': 7 } } });

    const month = await trafficSeries(env.db, scope, '30d', now);
    expect(month.points).toHaveLength(30);
    expect(month.points.at(-1)).toMatchObject({ at: '2026-06-20T00:00:00.000Z', requests: 15 });
    expect(month.points.at(-4)).toMatchObject({ at: '2026-06-17T00:00:00.000Z', requests: 4, byClass: { '4xx': 4 } });
    expect(month.points.reduce((sum, p) => sum + p.requests, 0)).toBe(19);
  });

  it('sums an account over its keys, keeps other keys and environments out, and counts 401/403/429 apart', async () => {
    const a = await issue('series-account');
    const b = await issue('series-account');
    const t = await issue('series-account', 'test');
    const other = await issue('series-other');
    await seedMinute(env, a.id, now, { requests: { 'context:2xx': 3, 'context:429': 2 } });
    await seedMinute(env, b.id, now, { requests: { 'outcome:401': 4, 'outcome:403': 1 } });
    await seedMinute(env, t.id, now, { requests: { 'context:2xx': 50 } });
    await seedMinute(env, other.id, now, { requests: { 'context:2xx': 60 } });
    await flushSeeded(env);

    const account = (await trafficSeries(env.db, { accountId: a.accountId, environment: 'live' }, '1h', now)).points.at(-1)!;
    expect(account).toMatchObject({
      requests: 10,
      unauthorized: 4,
      forbidden: 1,
      rateLimited: 2,
      byClass: { '2xx': 3, '3xx': 0, '4xx': 7, '5xx': 0 },
      byEndpoint: { context: { '2xx': 3, '3xx': 0, '4xx': 2, '5xx': 0 }, outcome: { '2xx': 0, '3xx': 0, '4xx': 5, '5xx': 0 } },
    });
    const keyB = (await trafficSeries(env.db, { accountId: a.accountId, environment: 'live', keyId: b.id }, '1h', now)).points.at(-1)!;
    expect(keyB.requests).toBe(5);
    const test = (await trafficSeries(env.db, { accountId: a.accountId, environment: 'test' }, '1h', now)).points.at(-1)!;
    expect(test.requests).toBe(50);
  });

  it('reads p50 and p95 from histograms merged over keys and minutes', async () => {
    const a = await issue('series-latency');
    const b = await issue('series-latency');
    await seedMinute(env, a.id, now, { requests: { 'context:2xx': 10 }, latenciesMs: Array(10).fill(1) });
    await seedMinute(env, b.id, now - MIN, { requests: { 'context:2xx': 9 }, latenciesMs: Array(9).fill(1) });
    await seedMinute(env, b.id, now, { requests: { 'context:2xx': 1 }, latenciesMs: [800] });
    await flushSeeded(env);
    const hour = (await trafficSeries(env.db, { accountId: a.accountId, environment: 'live' }, '24h', now)).points.at(-1)!;
    // 19 requests at 1 ms, one at 800 ms: p50 and p95 fall in the 1 ms bucket, within ±19 %.
    expect(hour.p50Ms).toBeGreaterThan(0.84);
    expect(hour.p50Ms).toBeLessThan(1.19);
    expect(hour.p95Ms).toBe(hour.p50Ms);
    const keyB = (await trafficSeries(env.db, { accountId: a.accountId, environment: 'live', keyId: b.id }, '1h', now)).points.at(-1)!;
    expect(keyB.p50Ms).toBeGreaterThan(800 / 1.19);
    expect(keyB.p50Ms).toBeLessThan(800 * 1.19);
  });

  it('counts requests per country over a window, most first', async () => {
    const key = await issue('series-geo');
    const scope = { accountId: key.accountId, environment: 'live' as const };
    await seedMinute(env, key.id, now, { countries: { US: 5, GB: 2 } });
    await seedMinute(env, key.id, now - 5 * HOUR, { countries: { JP: 9, GB: 1 } });
    await flushSeeded(env);
    expect(await countryCounts(env.db, scope, '1h', now)).toEqual([
      { country: 'US', requests: 5 },
      { country: 'GB', requests: 2 },
    ]);
    expect(await countryCounts(env.db, scope, '24h', now)).toEqual([
      { country: 'JP', requests: 9 },
      { country: 'US', requests: 5 },
      { country: 'GB', requests: 3 },
    ]);
  });
});

describe('month-to-date usage and forecast', () => {
  it("counts a live key's admitted requests this month and projects its last 7 days' pace to the month's end", async () => {
    const now = Date.UTC(2026, 8, 11); // 11 September 00:00: 20 days left
    const key = await issue('quota-starter', 'live', 'backend');
    await issue('quota-starter', 'test');
    for (let day = 1; day <= 10; day++) {
      await seedMinute(env, key.id, Date.UTC(2026, 8, day, 12), { requests: { 'context:2xx': 1000, 'context:429': 50, 'context:401': 5 } });
    }
    await seedMinute(env, key.id, Date.UTC(2026, 7, 31, 12), { requests: { 'context:2xx': 1000 } }); // August
    await flushSeeded(env);
    const [forecast, ...others] = await quotaForecasts(env.db, { accountId: key.accountId, now });
    expect(others).toEqual([]); // the test key has no quota to forecast
    expect(forecast).toEqual({
      keyId: key.id,
      keyName: 'backend',
      month: '2026-09',
      used: 10_000,
      quota: 100_000,
      forecast: 10_000 + 1000 * 20,
      usedShare: 0.1,
      forecastShare: 0.3,
    });
  });
});

describe('retention', () => {
  it('deletes minute rows after 14 days and hour rows after 400, at the clock it is given', async () => {
    const key = await issue('retention');
    const now = Date.UTC(2027, 0, 20, 12);
    for (const age of [13 * DAY, 15 * DAY, 399 * DAY, 401 * DAY]) {
      await seedMinute(env, key.id, now - age, { requests: { 'context:2xx': 1 } });
    }
    await flushSeeded(env);
    const ages = async (table: 'traffic_minute' | 'traffic_hour') =>
      (await env.db.selectFrom(table).select('at').where('key_id', '=', key.id).orderBy('at', 'desc').execute()).map((row) =>
        Math.round((now - new Date(row.at).getTime()) / DAY),
      );
    expect(await ages('traffic_minute')).toEqual([13, 15, 399, 401]);
    const pruned = await pruneTraffic(env.db, now);
    expect(pruned.minuteRows).toBeGreaterThanOrEqual(3);
    expect(await ages('traffic_minute')).toEqual([13]);
    expect(await ages('traffic_hour')).toEqual([13, 15, 399]);
  });
});
