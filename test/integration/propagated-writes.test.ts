import { randomUUID } from 'node:crypto';
import { IdempotencyRecords } from '../../shared/idempotency/idempotency.repository';
import { Limiter, type LimitInput } from '../../shared/limits/limiter';
import { WINDOW_MICROS } from '../../shared/limits/sliding-window';
import { OutcomeClaims } from '../../shared/profile/outcome-claims.repository';
import { ReplicationStream } from '../support/replication-stream';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * What the limiter and an idempotency key's claim propagate to replicas and the append-only
 * file, read on every node as a replica reads it: the counts that bill and the records that
 * are replayed or erased, never the state that lives about a second — a live key's log of
 * admissions, a key's lease while its request runs.
 */
let env: TestEnv;
let streams: ReplicationStream[];
beforeAll(async () => {
  env = await createTestEnv();
  const nodes = env.clusterNodes?.split(',') ?? [new URL(env.redisUrl).host];
  streams = await Promise.all(nodes.map((node) => ReplicationStream.open(node)));
});
afterAll(async () => {
  await Promise.all(streams.map((stream) => stream.close()));
  await env.close();
});

/** The names of the commands propagated so far that name `key`. */
async function propagated(key: string): Promise<string[]> {
  await Promise.all(streams.map((stream) => stream.caughtUp()));
  return streams.flatMap((stream) => stream.touching(key)).map((command) => command.name);
}

const tenant = { accountId: `acct_${randomUUID().slice(0, 8)}`, environment: 'live' as const };

it("a live key's admissions propagate the month's count and the usage, never the key's log", async () => {
  let nowMs = 1_780_000_000_000;
  const limiter = new Limiter(env.redis, env.keys, () => nowMs);
  const input: LimitInput = { accountId: tenant.accountId, keyId: randomUUID(), endpoint: 'context', perSecond: 2, perMonth: 1_000 };
  const [log, month, usage] = limiter.prepare(input).keys;
  const allowed = async () => (await limiter.check(input)).allowed;

  expect([await allowed(), await allowed(), await allowed()]).toEqual([true, true, false]);
  // A second later both admissions have expired: they are dropped from the log, and two more admitted.
  nowMs += WINDOW_MICROS / 1000 + 1;
  expect([await allowed(), await allowed()]).toEqual([true, true]);
  expect(await env.redis.llen(log)).toBe(2);

  expect(await propagated(log)).toEqual([]);
  expect(await propagated(month)).toEqual(['INCR', 'PEXPIREAT', 'INCR', 'INCR', 'INCR']);
  expect(await propagated(usage)).toEqual(['HINCRBY', 'HINCRBY', 'HINCRBY', 'HINCRBY', 'HINCRBY']);
});

describe("an idempotency key's lease", () => {
  const records = () => new IdempotencyRecords(env.redis, env.keys);
  const claims = () => new OutcomeClaims(env.redis, env.keys, 86_400_000);

  /** A key claimed by an outcome's first call, as a keyed outcome claims it. */
  async function claimed() {
    const userHash = randomUUID().slice(0, 16);
    const now = Date.now();
    const claim = records().prepareClaim(
      { tenant, userHash, keyDigest: randomUUID() },
      { token: randomUUID(), fingerprint: 'fingerprint', leaseMs: 10_000, windowMs: 3_600_000, now },
    );
    expect(await claims().claim({ tenant, requestId: `req_${randomUUID()}`, userHash }, 'signals', now, claim)).toBe('new');
    return claim;
  }

  it('is not propagated; the index and the response that replaces it are', async () => {
    const claim = await claimed();
    const [record, index] = claim.keys;
    expect(await env.redis.get(record)).toBe(claim.lease);
    expect(await propagated(record)).toEqual([]);
    expect(await propagated(index)).toContain('ZADD');

    const responseText = JSON.stringify({ accepted: true });
    expect(await records().complete(claim, { fingerprint: 'fingerprint', status: 202, responseText, windowMs: 3_600_000 })).toBe(true);
    expect(await propagated(record)).toEqual(['SET']);
    const [set] = streams.flatMap((stream) => stream.touching(record));
    expect(JSON.parse(set!.args[1]!)).toEqual({ fingerprint: 'fingerprint', status: 202, response: { accepted: true } });
  });

  it('is not propagated when it is given back either', async () => {
    const claim = await claimed();
    const [record] = claim.keys;
    await records().release(claim);
    expect(await env.redis.exists(record)).toBe(0);
    expect(await propagated(record)).toEqual([]);
  });
});
