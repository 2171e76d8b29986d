import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { runCliCaptured } from '../support/cli';
import { flushUsage } from '../../shared/usage/usage-flush';
import { Limiter, usageField, type StatusClass } from '../../shared/limits/limiter';
import { PLAN_LIMITS } from '../../shared/limits/plans';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

let h: Harness;
let now: number | null = null;
beforeAll(async () => {
  h = await startHarness({}, { clock: () => now ?? Date.now() });
});
afterAll(() => h.close());

async function usageRows(keyId: string) {
  const rows = await h.env.db
    .selectFrom('usage_daily')
    .selectAll()
    .where('key_id', '=', keyId)
    .orderBy('endpoint')
    .orderBy('status_class')
    .execute();
  return rows.map((r) => ({
    day: new Date(r.day as unknown as Date).toISOString().slice(0, 10),
    endpoint: r.endpoint,
    statusClass: r.status_class,
    count: Number(r.count),
  }));
}

const cli = (...argv: string[]) => runCliCaptured(argv, h.env.processEnv());

/**
 * Waits until Redis has metered `count` requests of the key as `cls` on `day` since the last
 * flush: a request ending in 4xx is metered 2xx first and moved once its response is sent.
 */
const metered = (keyId: string, day: string, endpoint: string, cls: StatusClass, count: number) =>
  eventually(async () => Number((await h.env.usage(day, keyId))[usageField({ keyId, endpoint }, cls)]) === count);

/** The snapshots of a key's usage shard not yet deleted. */
const snapshotsOf = (accountId: string) => h.env.redis.scard(h.env.keys.usageSnapshots(h.env.keys.usageShard(accountId)));

describe('usage flush to Postgres', () => {
  it('moves metered counts into usage_daily, equal to the requests made', async () => {
    const issued = await h.keys.create({ account: 'flush-basic', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 2, 3, 10);
    for (let i = 0; i < 7; i++) await h.http().get(`/v1/profile/u${i}`).set(bearer(issued.key));
    await metered(issued.id, '2026-03-03', 'profile.get', '4xx', 7);
    await flushUsage(h.env);
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-03', endpoint: 'profile.get', statusClass: '4xx', count: 7 }]);
    // A second flush with nothing new adds nothing.
    await flushUsage(h.env);
    expect((await usageRows(issued.id))[0]!.count).toBe(7);
    for (let i = 0; i < 3; i++) await h.http().get(`/v1/profile/u${i}`).set(bearer(issued.key));
    await metered(issued.id, '2026-03-03', 'profile.get', '4xx', 3);
    await flushUsage(h.env);
    expect((await usageRows(issued.id))[0]!.count).toBe(10);
  });

  it('finds the day again for admissions and refusals metered after a flush took its counts', async () => {
    const issued = await h.keys.create({ account: 'flush-admitted', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 2, 4, 10);
    const limiter = new Limiter(h.env.redis, h.env.keys, () => now!);
    const check = () => limiter.check({ accountId: issued.accountId, keyId: issued.id, endpoint: 'context', perSecond: 2, perMonth: null });
    expect((await Promise.all([check(), check(), check()])).map((d) => d.allowed)).toEqual([true, true, false]);
    await flushUsage(h.env);
    now += 2_000;
    expect((await check()).allowed).toBe(true);
    await flushUsage(h.env);
    expect(await usageRows(issued.id)).toEqual([
      { day: '2026-03-04', endpoint: 'context', statusClass: '2xx', count: 3 },
      { day: '2026-03-04', endpoint: 'context', statusClass: '429', count: 1 },
    ]);
  });

  it('neither loses nor double-counts when the flush dies after its commit', async () => {
    const issued = await h.keys.create({ account: 'flush-crash-late', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 2, 4, 10);
    for (let i = 0; i < 5; i++)
      await h.http().post('/v1/context').set(bearer(issued.key)).send({ userId: 'c', task: 't', complexity: 'low' });
    await expect(
      flushUsage(h.env, {
        afterCommit: () => {
          throw new Error('killed after commit');
        },
      }),
    ).rejects.toThrow('killed after commit');
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-04', endpoint: 'context', statusClass: '2xx', count: 5 }]);
    expect(await snapshotsOf(issued.accountId)).toBeGreaterThan(0); // snapshot left behind
    await flushUsage(h.env);
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-04', endpoint: 'context', statusClass: '2xx', count: 5 }]);
    expect(await snapshotsOf(issued.accountId)).toBe(0);
  });

  it('neither loses nor double-counts when the flushing process is SIGKILLed between commit and cleanup', async () => {
    const issued = await h.keys.create({ account: 'flush-sigkill', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 2, 8, 10);
    for (let i = 0; i < 8; i++) await h.http().get('/v1/profile/x').set(bearer(issued.key));
    await metered(issued.id, '2026-03-08', 'profile.get', '4xx', 8);
    const dist = path.join(__dirname, '../../dist');
    // A real process runs the built flush and is killed (SIGKILL) right after its commit.
    const script = `
      const { createRedis, keysFor, redisTarget } = require(${JSON.stringify(`${dist}/shared/redis/redis.js`)});
      const { loadCliConfig } = require(${JSON.stringify(`${dist}/shared/config/config.js`)});
      const { createDb } = require(${JSON.stringify(`${dist}/shared/db/database.js`)});
      const { flushUsage } = require(${JSON.stringify(`${dist}/shared/usage/usage-flush.js`)});
      const config = loadCliConfig();
      flushUsage({ redis: createRedis(redisTarget(config), 'consumer'), keys: keysFor(config), db: createDb(config.DATABASE_URL, { poolSize: 1, connectMs: 10000, statementMs: null }) }, {
        afterCommit: () => process.kill(process.pid, 'SIGKILL'),
      });`;
    const child = spawnSync(process.execPath, ['-e', script], { env: h.env.processEnv(), encoding: 'utf8', timeout: 30_000 });
    expect(child.signal).toBe('SIGKILL');
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-08', endpoint: 'profile.get', statusClass: '4xx', count: 8 }]);
    expect(await snapshotsOf(issued.accountId)).toBeGreaterThan(0);
    await flushUsage(h.env);
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-08', endpoint: 'profile.get', statusClass: '4xx', count: 8 }]);
  });

  it('neither loses nor double-counts when the flush dies before writing, while requests continue', async () => {
    const issued = await h.keys.create({ account: 'flush-crash-early', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 2, 5, 10);
    for (let i = 0; i < 4; i++) await h.http().get('/v1/profile/x').set(bearer(issued.key));
    await metered(issued.id, '2026-03-05', 'profile.get', '4xx', 4);
    await expect(
      flushUsage(h.env, {
        afterSnapshot: () => {
          throw new Error('killed after snapshot');
        },
      }),
    ).rejects.toThrow('killed after snapshot');
    expect(await usageRows(issued.id)).toEqual([]);
    for (let i = 0; i < 2; i++) await h.http().get('/v1/profile/x').set(bearer(issued.key));
    await metered(issued.id, '2026-03-05', 'profile.get', '4xx', 2);
    await flushUsage(h.env);
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-05', endpoint: 'profile.get', statusClass: '4xx', count: 6 }]);
  });

  it('flushes a reclassification that lands after its day was flushed', async () => {
    const issued = await h.keys.create({ account: 'flush-late-class', environment: 'live', rateLimitRps: 1000 });
    const limiter = new Limiter(h.env.redis, h.env.keys);
    const meteredAt = Date.UTC(2026, 2, 7, 23, 59, 59);
    // One request metered on the 7th as 2xx, and flushed.
    const shard = h.env.keys.usageShard(issued.accountId);
    await h.env.redis.hincrby(h.env.keys.usage('2026-03-07', shard), `${issued.id}|context|2xx`, 1);
    await h.env.redis.sadd(h.env.keys.usageDays(shard), '2026-03-07');
    await flushUsage(h.env);
    await limiter.reclassify({ accountId: issued.accountId, keyId: issued.id, endpoint: 'context' }, '5xx', meteredAt);
    await flushUsage(h.env);
    const march7 = (await usageRows(issued.id)).filter((r) => r.day === '2026-03-07');
    expect(march7).toEqual([
      { day: '2026-03-07', endpoint: 'context', statusClass: '2xx', count: 0 },
      { day: '2026-03-07', endpoint: 'context', statusClass: '5xx', count: 1 },
    ]);
  });

  it('survives two flushes racing: each snapshot counted once', async () => {
    const issued = await h.keys.create({ account: 'flush-race', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 2, 6, 10);
    for (let i = 0; i < 9; i++) await h.http().get('/v1/profile/x').set(bearer(issued.key));
    await metered(issued.id, '2026-03-06', 'profile.get', '4xx', 9);
    await Promise.all([flushUsage(h.env), flushUsage(h.env)]);
    expect(await usageRows(issued.id)).toEqual([{ day: '2026-03-06', endpoint: 'profile.get', statusClass: '4xx', count: 9 }]);
  });

  it('exposes per account and month totals in billing_usage_monthly and through `cos usage`', async () => {
    const issued = await h.keys.create({ account: 'flush-billing', environment: 'live', rateLimitRps: 1000 });
    now = Date.UTC(2026, 3, 30, 23, 59, 59);
    await h.http().post('/v1/context').set(bearer(issued.key)).send({ userId: 'b', task: 't', complexity: 'low' });
    now = Date.UTC(2026, 4, 1, 0, 0, 1);
    // Two requests left of May's quota: of six sent at once, two are served and four refused (429).
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId: issued.accountId, month: '2026-05' }), PLAN_LIMITS.starter.perMonth! - 2);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.http().post('/v1/context').set(bearer(issued.key)).send({ userId: 'b', task: 't', complexity: 'low' }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    const json = await cli('usage', '--account', 'flush-billing', '--month', '2026-05', '--format', 'json');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out);
    expect(report).toMatchObject({ account: 'flush-billing', month: '2026-05' });
    expect(report.totals).toEqual({
      billableRequests: 2,
      requests2xx: 2,
      requests4xx: 0,
      requests5xx: 0,
      requests429: 4,
      totalRequests: 6,
    });
    const april = JSON.parse((await cli('usage', '--account', 'flush-billing', '--month', '2026-04', '--json')).out);
    expect(april.data).toEqual([{ day: '2026-04-30', keyId: issued.id, endpoint: 'context', statusClass: '2xx', count: 1 }]);
    const csv = await cli('usage', '--account', 'flush-billing', '--month', '2026-04', '--format', 'csv');
    expect(csv.out.trim().split('\n')).toEqual(['day,key_id,endpoint,status_class,count', `2026-04-30,${issued.id},context,2xx,1`]);
    const view = await h.env.db.selectFrom('billing_usage_monthly').selectAll().where('month', '=', '2026-05').execute();
    expect(view.map((r) => Number(r.total_requests))).toContain(6);
  });
});
