import { randomUUID } from 'node:crypto';
import { IdempotencyRecords } from '../../shared/idempotency/idempotency.repository';
import { Limiter } from '../../shared/limits/limiter';
import { WINDOW_MICROS } from '../../shared/limits/sliding-window';
import { OutcomeClaims } from '../../shared/profile/outcome-claims.repository';
import { PENDING_OUTCOME_TTL_SECONDS } from '../../shared/profile/pending-outcomes.repository';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * The lifetimes of the per-request keys that only bound their memory: each outlives what it
 * must, and is renewed when it would not, rather than rewritten at every request.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const tenant = { accountId: 'acct_lifetimes', environment: 'live' as const };

describe("a live key's sliding log", () => {
  const SECOND = 1_780_000_000 * WINDOW_MICROS;
  let nowMicros = SECOND;
  const limiter = () => new Limiter(env.redis, env.keys, () => nowMicros / 1000);
  const check = (keyId: string) =>
    limiter().check({ accountId: tenant.accountId, keyId, endpoint: 'context', perSecond: 100, perMonth: null });

  it('lives 4 to 5 s after its last admission, renewed only when less than 4 s is left', async () => {
    const keyId = randomUUID();
    const log = env.keys.rateLog({ accountId: tenant.accountId, keyId });
    expect((await check(keyId)).allowed).toBe(true);
    const first = await env.redis.pttl(log);
    expect(first).toBeGreaterThan(4_900);
    expect(first).toBeLessThanOrEqual(5_000);
    await env.redis.pexpire(log, 4_500);
    nowMicros += 1_000;
    expect((await check(keyId)).allowed).toBe(true);
    expect(await env.redis.pttl(log)).toBeLessThanOrEqual(4_500);
    await env.redis.pexpire(log, 3_900);
    nowMicros += 1_000;
    expect((await check(keyId)).allowed).toBe(true);
    expect(await env.redis.pttl(log)).toBeGreaterThan(4_900);
    expect(await env.redis.lrange(log, 0, -1)).toEqual([SECOND, SECOND + 1_000, SECOND + 2_000].map(String));
  });
});

describe("a user's idempotency index and pending marks", () => {
  const WINDOW_MS = 3_600_000;
  const LEASE_MS = 10_000;
  const records = () => new IdempotencyRecords(env.redis, env.keys);
  const claims = () => new OutcomeClaims(env.redis, env.keys, 86_400_000);

  async function post(userHash: string, now: number): Promise<void> {
    const key = records().prepareClaim(
      { tenant, userHash, keyDigest: randomUUID() },
      { token: randomUUID(), fingerprint: 'f', leaseMs: LEASE_MS, windowMs: WINDOW_MS, now },
    );
    expect(await claims().claim({ tenant, requestId: `req_${randomUUID()}`, userHash }, 'signals', now, key)).toBe('new');
  }

  it('outlive every record and mark, and are renewed only when they would not', async () => {
    const userHash = randomUUID().slice(0, 16);
    const index = env.keys.idempotencyIndex(tenant, userHash);
    const marks = env.keys.pendingOutcomes(tenant, userHash);
    const now = Date.now();
    await post(userHash, now);
    // A record's window starts when its request completes, at the latest a lease after its claim.
    expect((await env.redis.zrange(index, 0, -1, 'WITHSCORES'))[1]).toBe(String(now + WINDOW_MS + LEASE_MS));
    expect(await env.redis.pttl(index)).toBeGreaterThan(WINDOW_MS + LEASE_MS);
    expect(await env.redis.pttl(marks)).toBeGreaterThan(PENDING_OUTCOME_TTL_SECONDS * 1000);

    await env.redis.pexpire(index, WINDOW_MS + LEASE_MS + 1_000);
    await env.redis.pexpire(marks, PENDING_OUTCOME_TTL_SECONDS * 1000 + 1_000);
    await post(userHash, now + 1);
    expect(await env.redis.pttl(index)).toBeLessThanOrEqual(WINDOW_MS + LEASE_MS + 1_000);
    expect(await env.redis.pttl(marks)).toBeLessThanOrEqual(PENDING_OUTCOME_TTL_SECONDS * 1000 + 1_000);

    await env.redis.pexpire(index, WINDOW_MS);
    await env.redis.pexpire(marks, 1_000);
    await post(userHash, now + 2);
    expect(await env.redis.pttl(index)).toBeGreaterThan(WINDOW_MS + LEASE_MS);
    expect(await env.redis.pttl(marks)).toBeGreaterThan(PENDING_OUTCOME_TTL_SECONDS * 1000);
    expect(await env.redis.zcard(index)).toBe(3);
    expect(await env.redis.zcard(marks)).toBe(3);
  });
});
