import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AdmissionLeases, LEASE_MS, MIN_LEASE } from '../../shared/limits/admission-leases';
import { Limiter, usageField, type LimitInput } from '../../shared/limits/limiter';
import { utcDay, utcMonth } from '../../shared/util/calendar';
import { createLogger } from '../../shared/logger/logger';
import { createRedis } from '../../shared/redis/redis';
import { loadScripts } from '../../shared/redis/scripts';
import { startRedisProxy } from '../support/redis-proxy';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * Leased admissions in real Redis, with the clock injected (epoch ms, fractional for µs): two
 * "processes" (two AdmissionLeases on one Redis) and the per-request limiter share a key. Never
 * more than N admissions in any one-second span; the month's count and the usage equal the
 * requests admitted once the processes stop; near the limit every request asks Redis.
 */
let env: TestEnv;
let now = 0;
const clock = () => now;
let limiter: Limiter;
beforeAll(async () => {
  env = await createTestEnv();
  limiter = new Limiter(env.redis, env.keys, clock);
});
afterAll(() => env.close());

const START = Date.UTC(2026, 5, 10, 12); // ms
const logger = createLogger('silent', 'test');
const newLeases = () => new AdmissionLeases({ redis: env.redis, keys: env.keys, logger, clock });

function input(keyId: string, perSecond: number, perMonth: number | null = null): LimitInput {
  return { accountId: `acct_${keyId}`, keyId, endpoint: 'context', perSecond, perMonth };
}

/** The requests of one lease period before a key leases (each checked on its own), then the one that asks for a lease: its take. */
function askForLease(leases: AdmissionLeases, limit: LimitInput) {
  for (let i = 0; i < MIN_LEASE - 1; i++) leases.take(limit);
  return leases.take(limit);
}

/** The month's count of the key's account, in the month of START. */
const monthOf = (limit: LimitInput): string => env.keys.monthlyCount({ accountId: limit.accountId, month: utcMonth(START) });

/** One request through a process: a leased slot when it has or gets one, else the limiter. */
async function request(leases: AdmissionLeases, limit: LimitInput): Promise<'leased' | 'checked' | 'refused'> {
  const taken = leases.take(limit);
  const slot = taken instanceof Promise ? await taken : taken;
  if (slot) return 'leased';
  return (await limiter.check(limit)).allowed ? 'checked' : 'refused';
}

/** Requests at one instant, spread over the processes, all in flight together. */
async function burst(processes: AdmissionLeases[], limit: LimitInput, at: number, size: number) {
  now = at;
  return Promise.all(Array.from({ length: size }, (_, i) => request(processes[i % processes.length]!, limit)));
}

const mostInOneSecond = (times: number[]) => Math.max(0, ...times.map((a) => times.filter((b) => b >= a && b < a + 1000).length));

it('never admits more than N in any one-second span, leased or checked, from two processes', async () => {
  const scenario = fc.record({
    limit: fc.integer({ min: 128, max: 1200 }),
    steps: fc.array(
      fc.record({
        gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 40, max: 600 })),
        size: fc.integer({ min: 1, max: 160 }),
      }),
      {
        minLength: 5,
        maxLength: 40,
      },
    ),
  });
  let leasedAtAll = 0;
  await fc.assert(
    fc.asyncProperty(scenario, async ({ limit, steps }) => {
      const keyId = randomUUID();
      const processes = [newLeases(), newLeases()];
      const admitted: number[] = [];
      let t = START;
      for (const { gap, size } of steps) {
        t += gap;
        const results = await burst(processes, input(keyId, limit), t, size);
        for (const r of results) if (r !== 'refused') admitted.push(t);
        leasedAtAll += results.filter((r) => r === 'leased').length;
      }
      expect(mostInOneSecond(admitted)).toBeLessThanOrEqual(limit);
      await Promise.all(processes.map((p) => p.close()));
      // Unused slots went back: the month counts exactly the requests admitted.
      const month = await env.redis.get(env.keys.monthlyCount({ accountId: `acct_${keyId}`, month: utcMonth(START) }));
      expect(Number(month ?? 0)).toBe(admitted.length);
    }),
    { numRuns: 40 },
  );
  expect(leasedAtAll).toBeGreaterThan(0);
});

it('uses the limit under sustained demand: a key asked twice its limit admits nearly all of it every second', async () => {
  const keyId = randomUUID();
  const limit = 1000;
  const processes = [newLeases(), newLeases()];
  const results: Array<{ at: number; result: string }> = [];
  // 2,000 requests a second for 4 s, in bursts of 40 every 20 ms.
  for (let at = START; at < START + 4000; at += 20) {
    for (const result of await burst(processes, input(keyId, limit), at, 40)) results.push({ at, result });
  }
  const admitted = results.filter((r) => r.result !== 'refused').map((r) => r.at);
  expect(mostInOneSecond(admitted)).toBeLessThanOrEqual(limit);
  for (let second = 1; second < 4; second++) {
    const inSecond = admitted.filter((at) => at >= START + second * 1000 && at < START + (second + 1) * 1000).length;
    expect(inSecond).toBeGreaterThanOrEqual(0.9 * limit);
  }
  expect(results.filter((r) => r.result === 'leased').length).toBeGreaterThan(0);
  await Promise.all(processes.map((p) => p.close()));
});

it('leases only under demand, for limits of at least MIN_LEASE × 8, and asks Redis once a lease', async () => {
  const leases = newLeases();
  const small = input(randomUUID(), 8 * MIN_LEASE - 1);
  now = START;
  for (let i = 0; i < 3 * MIN_LEASE; i++) expect(leases.take(small)).toBeUndefined();

  const big = input(randomUUID(), 10_000);
  // A quiet key: fewer than MIN_LEASE requests a lease period ask one by one.
  for (let i = 0; i < MIN_LEASE - 1; i++) expect(leases.take(big)).toBeUndefined();
  // The MIN_LEASE-th request of the period asks for a lease and is admitted on it.
  const asked = leases.take(big);
  expect(asked).toBeInstanceOf(Promise);
  await expect(asked).resolves.toMatchObject({ allowed: true, limit: 10_000 });
  // The lease's other slots are used without Redis until it ends.
  const logKey = env.keys.rateLog(big);
  expect(await env.redis.llen(logKey)).toBe(MIN_LEASE);
  for (let i = 1; i < MIN_LEASE; i++) expect(leases.take(big)).toMatchObject({ allowed: true });
  // Used up: the next request asks for a lease the size of the period's demand so far.
  await expect(leases.take(big)).resolves.toMatchObject({ allowed: true });
  expect(await env.redis.llen(logKey)).toBe(3 * MIN_LEASE);
  await leases.close(); // its unused slots go back
  expect(await env.redis.llen(logKey)).toBe(MIN_LEASE + 1);
});

it('lets requests that come while a lease is on its way wait for it rather than ask Redis alone', async () => {
  const leases = newLeases();
  const limit = input(randomUUID(), 10_000);
  now = START;
  for (let i = 0; i < MIN_LEASE - 1; i++) expect(leases.take(limit)).toBeUndefined();
  const waiting = Array.from({ length: 5 }, () => leases.take(limit));
  expect(waiting.every((taken) => taken instanceof Promise)).toBe(true);
  expect(await Promise.all(waiting)).toEqual(Array(5).fill(expect.objectContaining({ allowed: true })));
  expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(MIN_LEASE); // one lease, for all of them
  await leases.close();
  expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(5);
});

it('grants no lease past half the limit or near the quota: then each request is checked on its own', async () => {
  const leases = newLeases();
  const nearLimit = input(randomUUID(), 256);
  now = START;
  for (let i = 0; i < 128 - MIN_LEASE + 1; i++) expect((await limiter.check(nearLimit)).allowed).toBe(true);
  for (let i = 0; i < MIN_LEASE - 1; i++) expect(leases.take(nearLimit)).toBeUndefined();
  await expect(leases.take(nearLimit)).resolves.toBeUndefined();
  // Refused: the key asks no lease for a lease period.
  expect(leases.take(nearLimit)).toBeUndefined();

  const nearQuota = input(randomUUID(), 10_000, 2 * MIN_LEASE + 10);
  for (let i = 0; i < 11; i++) expect((await limiter.check(nearQuota)).allowed).toBe(true);
  for (let i = 0; i < MIN_LEASE - 1; i++) expect(leases.take(nearQuota)).toBeUndefined();
  await expect(leases.take(nearQuota)).resolves.toBeUndefined();
  await leases.close();
});

it('meters leased admissions in the day’s usage once sent, with moves to the class a request ended with', async () => {
  const leases = newLeases();
  const limit = input(randomUUID(), 10_000);
  now = START;
  let leased = 0;
  for (let i = 0; i < 200; i++) if ((await request(leases, limit)) === 'leased') leased++;
  expect(leased).toBeGreaterThan(150);
  leases.reclassify(limit, '4xx', now);
  leases.reclassify(limit, '5xx', now);
  const day = utcDay(START);
  const before = await env.usage(day, limit.keyId);
  expect(Number(before[usageField(limit, '2xx')])).toBe(200 - leased); // the checked ones, metered by their script
  await leases.close();
  const after = await env.usage(day, limit.keyId);
  expect(Number(after[usageField(limit, '2xx')])).toBe(200 - 2);
  expect(after[usageField(limit, '4xx')]).toBe('1');
  expect(after[usageField(limit, '5xx')]).toBe('1');
  expect(await env.redis.sismember(env.keys.usageDays(env.keys.usageShard(limit.accountId)), day)).toBe(1);
});

it('gives back an ended lease’s unused slots: the log and the month forget them', async () => {
  const leases = newLeases();
  const limit = input(randomUUID(), 10_000, 1_000_000);
  now = START;
  await askForLease(leases, limit); // a lease of MIN_LEASE slots, one used
  const month = monthOf(limit);
  expect(await env.redis.get(month)).toBe(String(MIN_LEASE));
  now = START + LEASE_MS; // the lease has ended
  await leases.close();
  expect(await env.redis.get(month)).toBe('1');
  expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(1);
});

it('keeps the counts of leased admissions it could not send while Redis was unreachable, and sends them after', async () => {
  const proxy = await startRedisProxy(env);
  const redis = createRedis(proxy.target, 'producer');
  const leases = new AdmissionLeases({ redis, keys: env.keys, logger, clock });
  const ready = async () => {
    for (let i = 0; i < 100 && redis.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
    expect(redis.status).toBe('ready');
  };
  try {
    await ready();
    const limit = input(randomUUID(), 10_000);
    now = START;
    let leased = 0;
    for (let i = 0; i < 100; i++) {
      const taken = leases.take(limit);
      if ((taken instanceof Promise ? await taken : taken) !== undefined) leased++;
    }
    expect(leased).toBeGreaterThan(80);
    leases.reclassify(limit, '5xx', now);
    await proxy.interrupt();
    // Nothing reaches Redis: one node refuses the commands at once and the counts stay with the
    // process, a cluster client holds them until it reaches the cluster again.
    const closing = leases.close();
    await new Promise((r) => setTimeout(r, 300));
    await proxy.resume();
    await closing;
    await ready();
    await leases.close();
    const usage = await env.usage(utcDay(START), limit.keyId);
    expect(Number(usage[usageField(limit, '2xx')] ?? 0)).toBe(leased - 1);
    expect(usage[usageField(limit, '5xx')]).toBe('1');
    // The unused slots went back too, once Redis took the give-back it first refused.
    const month = await env.redis.get(monthOf(limit));
    expect(Number(month)).toBe(leased);
  } finally {
    redis.disconnect();
    await proxy.close();
  }
});

it('gives back a lease Redis granted after the process gave up waiting for it (Redis hung)', async () => {
  const proxy = await startRedisProxy(env);
  const redis = createRedis(proxy.target, 'producer', 300);
  const leases = new AdmissionLeases({ redis, keys: env.keys, logger, clock });
  try {
    for (let i = 0; i < 100 && redis.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
    const limit = input(randomUUID(), 10_000, 1_000_000);
    now = START;
    // Redis holds the script already (else the held EVALSHA would come back NOSCRIPT: nothing granted).
    const { lua } = loadScripts().get('cosLeaseAdmissions')!;
    const masters = 'nodes' in env.redis ? env.redis.nodes('master') : [env.redis];
    await Promise.all(masters.map((node) => node.script('LOAD', lua)));
    proxy.hold();
    // Busy enough to lease: the lease call goes out, and times out while Redis hangs.
    const asked = askForLease(leases, limit);
    expect(asked).toBeDefined();
    await expect(asked).rejects.toThrow('Command timed out');
    const month = monthOf(limit);
    // Redis answers again and grants the lease nobody waits for any more.
    proxy.release();
    await eventually(async () => Number(await env.redis.get(month)) > 0);
    // A command on the same connection: its reply comes after the lease's.
    await redis.exists(env.keys.rateLog(limit));
    expect(await env.redis.llen(env.keys.rateLog(limit))).toBeGreaterThan(0);
    // Given back with the next counts: the month and the key's log hold none of its slots.
    await leases.close();
    expect(Number(await env.redis.get(month))).toBe(0);
    expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(0);
  } finally {
    redis.disconnect();
    await proxy.close();
  }
});

it('meters the leased admissions of many accounts, on every usage shard they fall in', async () => {
  const leases = newLeases();
  now = START;
  const limits = Array.from({ length: 12 }, () => input(randomUUID(), 10_000));
  const leased = new Map<string, number>();
  for (const limit of limits) {
    for (let i = 0; i < 40; i++)
      if ((await request(leases, limit)) === 'leased') leased.set(limit.keyId, (leased.get(limit.keyId) ?? 0) + 1);
  }
  await leases.close();
  const shards = new Set(limits.map((limit) => env.keys.usageShard(limit.accountId)));
  if (env.keys.cluster) expect(shards.size).toBeGreaterThan(1);
  for (const limit of limits) {
    const usage = await env.usage(utcDay(START), limit.keyId);
    expect(Number(usage[usageField(limit, '2xx')])).toBe(40); // checked ones by their script, leased ones by the batches
    expect(leased.get(limit.keyId)).toBeGreaterThan(20);
  }
});

it('gives back a lease that ended while its key went quiet, on its own timer', async () => {
  const leases = newLeases();
  const limit = input(randomUUID(), 10_000, 1_000_000);
  now = START;
  await askForLease(leases, limit);
  const month = monthOf(limit);
  expect(await env.redis.get(month)).toBe(String(MIN_LEASE));
  now = START + LEASE_MS;
  leases.start();
  for (let i = 0; i < 40 && (await env.redis.get(month)) !== '1'; i++) await new Promise((r) => setTimeout(r, 25));
  expect(await env.redis.get(month)).toBe('1');
  expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(1);
  await leases.close();
});

it('gives a lease back and adds a batch of counts once, however often the call is sent', async () => {
  newLeases(); // defines the scripts on the client
  const limit = input(randomUUID(), 10_000);
  const log = env.keys.rateLog(limit);
  const month = monthOf(limit);
  const date = START * 1000 + 100_000;
  await env.redis.rpush(log, ...Array(10).fill(date));
  await env.redis.set(month, 10);
  const mark = env.keys.leaseGivenBack(limit, `test:${randomUUID()}`);
  for (let i = 0; i < 2; i++) await env.redis.cosLeaseAdmissions(log, month, month, mark, String(START * 1000), 0, 0, 0, 0, 4, date, 0);
  expect(await env.redis.llen(log)).toBe(6);
  expect(await env.redis.get(month)).toBe('6');

  const shard = env.keys.usageShard(limit.accountId);
  const day = utcDay(START);
  const batch = env.keys.usageBatch(`test:${randomUUID()}`, shard);
  const field = usageField(limit, '2xx');
  const replies = [];
  for (let i = 0; i < 2; i++)
    replies.push(await env.redis.cosMeterCounts(env.keys.usage(day, shard), env.keys.usageDays(shard), batch, day, field, 7));
  expect(replies).toEqual([1, 0]);
  expect((await env.usage(day, limit.keyId))[field]).toBe('7');
});

it('backs a key off for a lease period when its lease comes back after its lifetime (Redis slower than a period)', async () => {
  const leases = newLeases();
  const limit = input(randomUUID(), 10_000);
  now = START;
  const late = askForLease(leases, limit);
  now = START + LEASE_MS; // the lease's lifetime passes while its call is on its way
  await expect(late).resolves.toBeUndefined();
  // Not asked again at once: the next requests are checked on their own.
  expect(leases.take(limit)).toBeUndefined();
  await leases.close();
  expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(0); // its slots went back
});

it('waits at shutdown for a lease on its way, and gives its unused slots back', async () => {
  const leases = newLeases();
  const limit = input(randomUUID(), 10_000);
  now = START;
  const asked = askForLease(leases, limit);
  await leases.close();
  await expect(asked).resolves.toMatchObject({ allowed: true });
  const month = monthOf(limit);
  expect(await env.redis.get(month)).toBe('1');
  expect(await env.redis.llen(env.keys.rateLog(limit))).toBe(1);
});
