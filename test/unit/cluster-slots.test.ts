import calculateSlot from 'cluster-key-slot';
import fc from 'fast-check';
import { redisKeys, SINGLE_NODE } from '../../shared/redis/key-names';
import { ENVIRONMENTS, type Tenant } from '../../shared/domain/environment';
import { issueRequestId, readRequestIdClaims } from '../../shared/ids/request-id';
import { userHash } from '../../shared/ids/user-hash';
import { keyLayout } from '../../shared/redis/redis';
import { buildCarriedDecision } from '../support/request-ids';

/**
 * On a Redis Cluster every script and MULTI must keep its keys in one slot (Redis refuses it
 * otherwise). These are the keys each call passes, for arbitrary tenants, users, API keys and
 * days: each call's keys must hash to one slot.
 */
const SECRET = 'slot-test-secret-0123456789';
const keys = redisKeys('cos', keyLayout({ COS_REDIS_PREFIX: 'cos', COS_SECRET: SECRET, REDIS_CLUSTER_NODES: [], QUEUE_PARTITIONS: 8 }));
const slots = (...names: string[]) => new Set(names.map((name) => calculateSlot(name)));

const tenant = fc.record({ accountId: fc.uuid(), environment: fc.constantFrom(...ENVIRONMENTS) });
const userId = fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme' });
const keyId = fc.stringMatching(/^key_[A-Za-z0-9]{20}$/);
const accountId = fc.stringMatching(/^acct_[A-Za-z0-9]{16}$/);
const day = fc
  .date({ min: new Date('2020-01-01'), max: new Date('2040-01-01'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

/** The user's keys as the API knows them: from a requestId it issued. */
function claimsOf(t: Tenant, user: string) {
  const requestId = issueRequestId(
    { ...t, issuedAt: Date.now(), userHash: userHash(SECRET, t, user), decision: buildCarriedDecision() },
    SECRET,
  );
  return { requestId, claims: readRequestIdClaims(requestId)! };
}

it("the limiter scripts and the reclassify MULTI: an API key's log, its account's monthly count, usage hash and usage days", () => {
  fc.assert(
    fc.property(accountId, keyId, keyId, day, (account, id, otherId, d) => {
      const shard = keys.usageShard(account);
      const month = d.slice(0, 7);
      // cosLimitAndMeter, cosMeterRefused, and Limiter.reclassify's MULTI; every key of an account in one slot
      expect(
        slots(
          keys.rateLog({ accountId: account, keyId: id }),
          keys.rateLog({ accountId: account, keyId: otherId }),
          keys.monthlyCount({ accountId: account, month }),
          keys.usage(d, shard),
          keys.usageDays(shard),
        ).size,
      ).toBe(1);
    }),
  );
});

it("the limiter's keys and a user's keys share no script on a cluster (a live context call sends the two scripts side by side)", () => {
  expect(keys.cluster).toBe(true);
  expect(redisKeys('cos', SINGLE_NODE).cluster).toBe(false);
});

it("the usage flush script and its MULTI: a shard's usage hash, snapshot, snapshot set and days", () => {
  for (let shard = 0; shard < keys.usageShards; shard++) {
    const snapshot = `2026-11-25:${shard}`;
    expect(
      slots(keys.usage('2026-11-25', shard), keys.usageSnapshot(snapshot, shard), keys.usageSnapshots(shard), keys.usageDays(shard)).size,
    ).toBe(1);
  }
  expect(keys.usageShards).toBeGreaterThan(1);
});

it("the outcome claim, its rollback MULTI, the profile reads and cache writes: a user's keys", () => {
  fc.assert(
    fc.property(tenant, userId, fc.uuid(), (t, user, generation) => {
      const { requestId, claims } = claimsOf(t, user);
      const pending = keys.pendingOutcomes(claims, claims.userHash);
      // cosClaimOutcome and its rollback; cosReadProfileFresh; cosWriteProfileIfNewer; erase's MULTI
      expect(
        slots(
          keys.outcomeFingerprint({ requestId, userHash: claims.userHash }),
          pending,
          keys.profile(t, user),
          keys.erasedGeneration({ tenant: t, userId: user, generation }),
        ).size,
      ).toBe(1);
    }),
  );
});

it('the traffic recorder and its flush: every traffic key', () => {
  const minute = '2026-11-25T16:40';
  expect(slots(keys.traffic(minute), keys.trafficMinutes, keys.trafficSnapshot(`${minute}:x`), keys.trafficSnapshots).size).toBe(1);
});

it("the dashboard's sign-in throttle transaction: an email's and a client's failures", () => {
  expect(slots(keys.signInFailures('email', 'a1'), keys.signInFailures('client', 'b2')).size).toBe(1);
});

it("the worker group's heartbeat script and its MULTIs: the live workers and the partitions each reported", () => {
  expect(slots(keys.workerHeartbeats, keys.workerPartitions).size).toBe(1);
});

it('spreads users and API keys over many slots, each queue partition in a slot of its own', () => {
  const users = Array.from({ length: 500 }, (_, i) => keys.profile({ accountId: 'a', environment: 'live' }, `user-${i}`));
  expect(slots(...users).size).toBeGreaterThan(400);
  expect(slots(...Array.from({ length: 500 }, (_, i) => keys.rateLog({ accountId: `acct_${i}`, keyId: `key_${i}` }))).size).toBe(
    keys.usageShards,
  );
  // BullMQ's scripts touch several keys of one queue: the prefix is the hash tag.
  const partitions = keys.queuePrefixes.map((prefix) =>
    slots(`${prefix}:events:wait`, `${prefix}:events:id`, `${prefix}:maintenance:wait`),
  );
  expect(partitions.every((partition) => partition.size === 1)).toBe(true);
  expect(new Set(partitions.map((partition) => [...partition][0])).size).toBe(8);
});

it('scans find cluster profile keys with the pattern they always used', () => {
  const t: Tenant = { accountId: 'acct', environment: 'test' };
  const glob = new RegExp(
    `^${keys
      .profilePattern('acct', 'test')
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}$`,
  );
  expect(glob.test(keys.profile(t, 'someone'))).toBe(true);
});

it('keeps every key name of a single-node deployment', () => {
  const single = redisKeys('cos', SINGLE_NODE);
  const t: Tenant = { accountId: 'acct', environment: 'live' };
  expect([
    single.profile(t, 'u'),
    single.pendingOutcomes(t, 'ab'),
    single.outcomeFingerprint({ requestId: 'req_x', userHash: 'ab' }),
    single.erasedGeneration({ tenant: t, userId: 'u', generation: 'g' }),
    single.rateLog({ accountId: 'acct_1', keyId: 'key_1' }),
    single.monthlyCount({ accountId: 'acct_1', month: '2026-11' }),
    single.usage('2026-11-25', single.usageShard('acct_1')),
    single.usageDays(),
    single.usageSnapshot('s'),
    single.usageSnapshots(),
    single.maintenanceQueuePrefix,
    single.queuePrefixes[7],
  ]).toEqual([
    'cos:v2:profile:acct:live:dQ',
    'cos:v2:pending:acct:live:ab',
    'cos:v2:outcome:req_x',
    'cos:v2:erased:g',
    'cos:v2:admissions:key_1',
    'cos:v2:quota:acct_1:2026-11',
    'cos:v2:usage:2026-11-25',
    'cos:v2:usage-days',
    'cos:v2:usage-flush:s',
    'cos:v2:usage-flushes',
    '{cos:q:0}',
    '{cos:q:7}',
  ]);
});
