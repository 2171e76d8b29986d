import { DEFAULT_QUEUE_PARTITIONS } from '../config/config';
import { tenantKey, type Environment, type Tenant } from '../domain/environment';

/**
 * Every Redis key the service owns, with its TTL, under a versioned prefix
 * (`<prefix>:v2:`). BullMQ queues use one hash-tagged prefix per event-queue partition
 * (`{<prefix>:q:<n>}`); the maintenance queue lives under the first. A new cached format (a
 * hash's field names, a cached JSON's schema) needs a new version, so that entries of the old
 * one are left behind rather than misread (test/unit/cached-formats.test.ts).
 */
export const CACHE_SCHEMA_VERSION = 'v2';

export const PROFILE_CACHE_TTL_SECONDS = 7 * 86_400;
/** Erased profile generations are remembered so late cache writes cannot resurrect them. */
export const ERASED_TTL_SECONDS = 2 * 86_400;
/** Outcome fingerprints live a day beyond the outcome window. */
export const OUTCOME_FINGERPRINT_GRACE_SECONDS = 86_400;

/**
 * Where keys live (docs/adr/0014-redis-cluster-partitions.md). On one node every key keeps the
 * name it always had. On a Redis Cluster each key a script or MULTI touches together ends in
 * the same hash tag: a user's keys in `{<userHash>}`, an account's limiter, quota and usage keys
 * in its usage shard's `{k<n>}`; queues are partitioned, each partition's prefix a hash tag.
 */
export interface KeyLayout {
  cluster: boolean;
  /** Event-queue partitions (1 on one node: the one queue under `<prefix>:q`, as before partitions). */
  queuePartitions: number;
  /** The user hash of a tenant's userId (shared/ids/user-hash.ts); used on a cluster only. */
  userHash: (tenant: Tenant, userId: string) => string;
}

export const SINGLE_NODE: KeyLayout = { cluster: false, queuePartitions: DEFAULT_QUEUE_PARTITIONS, userHash: () => '' };

/**
 * Usage shards on a cluster: each holds the limiter logs, monthly counts and usage hashes of its
 * accounts, so the limiter's script (a key's log with its account's monthly count) stays in one slot.
 */
export const CLUSTER_USAGE_SHARDS = 64;

/** FNV-1a: a cheap, stable spread of ids over shards and partitions. */
function spread(text: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % buckets;
}

export function redisKeys(prefix: string, layout: KeyLayout = SINGLE_NODE) {
  const base = `${prefix}:${CACHE_SCHEMA_VERSION}`;
  const user = (tenant: Tenant, userId: string) => tenantKey(tenant, Buffer.from(userId, 'utf8').toString('base64url'));
  const { cluster, queuePartitions } = layout;
  /** A key's hash tag on a cluster (its last part); nothing on one node. */
  const tag = (slot: string) => (cluster ? `:{${slot}}` : '');
  const userTag = (tenant: Tenant, userId: string) => (cluster ? tag(layout.userHash(tenant, userId)) : '');
  const usageShards = cluster ? CLUSTER_USAGE_SHARDS : 1;
  const usageShard = (accountId: string) => (usageShards === 1 ? 0 : spread(accountId, usageShards));
  const shardTag = (shard: number) => tag(`k${shard}`);
  // Each partition's prefix is a hash tag: its queue's keys share a slot on a cluster.
  const queuePrefixes = Array.from({ length: queuePartitions }, (_, partition) => `{${prefix}:q:${partition}}`);
  return {
    /** On a cluster, a user's keys and an API key's limiter keys live in different slots: no script touches both. */
    cluster,
    /** Hash {version, generation, updatedAt, data: the profile's JSON}. */
    profile: (tenant: Tenant, userId: string) => `${base}:profile:${user(tenant, userId)}${userTag(tenant, userId)}`,
    /** SCAN pattern of the cached profiles of an account ('*' for all) in an environment. */
    profilePattern: (accountId: string, environment: Environment) => `${base}:profile:${tenantKey({ accountId, environment }, '*')}`,
    /** Hash {version, data: the population prior's JSON} of a tenant (no TTL: one small key per tenant). */
    population: (tenant: Tenant) => `${base}:population:${tenantKey(tenant)}`,
    /** An erased generation of a user's profile (in the user's slot: the cache write checks it). */
    erasedGeneration: ({ tenant, userId, generation }: { tenant: Tenant; userId: string; generation: string }) =>
      `${base}:erased:${generation}${userTag(tenant, userId)}`,
    /** Sorted set of a user's outcomes accepted and not yet applied: requestId → ms accepted. */
    pendingOutcomes: (tenant: Tenant, userHash: string) => `${base}:pending:${tenantKey(tenant, userHash)}${tag(userHash)}`,
    /** Pub/sub channel: JSON arrays of pendingOutcomes keys whose outcomes a worker just settled. */
    outcomesSettled: `${base}:outcomes-settled`,
    /** Stream of key revocations and deletions, account restrictions (field `change`: JSON, CredentialChange). */
    credentialChanges: `${base}:credential-changes`,
    /** Fingerprint of the first outcome accepted for a requestId (409 on a different one), in its user's slot. */
    outcomeFingerprint: ({ requestId, userHash }: { requestId: string; userHash: string }) =>
      `${base}:outcome:${requestId}${tag(userHash)}`,
    /**
     * An idempotent POST's record (its lease while in flight, then its response) by the digest
     * of its Idempotency-Key, in the user's slot so erasure reaches it through the user's index.
     */
    idempotency: ({ tenant, userHash, keyDigest }: { tenant: Tenant; userHash: string; keyDigest: string }) =>
      `${base}:idem:${tenantKey(tenant, userHash, keyDigest)}${tag(userHash)}`,
    /** Sorted set of a user's idempotency records: key digest → ms when it expires. */
    idempotencyIndex: (tenant: Tenant, userHash: string) => `${base}:idem-index:${tenantKey(tenant, userHash)}${tag(userHash)}`,
    /**
     * List of a key's admissions in the last second (epoch µs, oldest first), TTL 4–5 s after
     * the last; in its account's usage shard. (Its name changed with its type: `rl:` held a
     * sorted set.)
     */
    rateLog: ({ accountId, keyId }: { accountId: string; keyId: string }) =>
      `${base}:admissions:${keyId}${shardTag(usageShard(accountId))}`,
    /**
     * Marks a lease's unused slots of a key as given back (the lease named by its process), so
     * that a give-back resent after a lost reply does not remove them twice.
     */
    leaseGivenBack: ({ accountId, keyId }: { accountId: string; keyId: string }, lease: string) =>
      `${base}:admissions-given-back:${keyId}:${lease}${shardTag(usageShard(accountId))}`,
    /** Marks a batch of an API process's usage counts as added, so that a resent batch adds nothing. */
    usageBatch: (batchId: string, shard = 0) => `${base}:usage-batch:${batchId}${shardTag(shard)}`,
    /** Requests admitted for an account's live keys together in a UTC month (YYYY-MM); kept 40 days past the month. */
    monthlyCount: ({ accountId, month }: { accountId: string; month: string }) =>
      `${base}:quota:${accountId}:${month}${shardTag(usageShard(accountId))}`,
    /** How many usage shards there are (1 on one node), and the one an account's keys meter into. */
    usageShards,
    usageShard,
    /** Metered usage of a UTC day in a shard: hash `<keyId>|<endpoint>|<class>` → count, until flushed. */
    usage: (day: string, shard = 0) => `${base}:usage:${day}${shardTag(shard)}`,
    /** Days (YYYY-MM-DD) of a shard with metered usage that may not be flushed yet. */
    usageDays: (shard = 0) => `${base}:usage-days${shardTag(shard)}`,
    /** Usage snapshots taken by a flush and not yet deleted after their Postgres commit. */
    usageSnapshot: (flushId: string, shard = 0) => `${base}:usage-flush:${flushId}${shardTag(shard)}`,
    usageSnapshots: (shard = 0) => `${base}:usage-flushes${shardTag(shard)}`,
    /**
     * Dashboard traffic of a UTC minute (YYYY-MM-DDTHH:MM): hash `<keyId>|<metric>|<label>` →
     * count, until flushed (docs/adr/0012-traffic-recording.md). Every traffic key shares the
     * hash tag `{traffic}`, so a recorder's pipeline and the flush's script stay in one slot.
     */
    traffic: (minute: string) => `${base}:{traffic}:minute:${minute}`,
    /** Minutes with recorded traffic that may not be flushed yet. */
    trafficMinutes: `${base}:{traffic}:minutes`,
    /** Traffic snapshots taken by a flush and not yet deleted after their Postgres commit. */
    trafficSnapshot: (flushId: string) => `${base}:{traffic}:flush:${flushId}`,
    trafficSnapshots: `${base}:{traffic}:flushes`,
    /** Prefix of the dashboard's sessions (connect-redis adds the session id; TTL: the idle expiry). */
    dashboardSessionPrefix: `${base}:dash:sess:`,
    /**
     * A dashboard form's one-time token, by the user and a digest of the token with the form's
     * action: `pending` while its first submission runs, then where that submission led. TTL a day.
     */
    dashboardFormToken: ({ userId, digest }: { userId: string; digest: string }) => `${base}:dash:form:${userId}:${digest}`,
    /**
     * Sorted set of dashboard sign-in attempts, failed or being verified (score: epoch ms), of an
     * email, a client address or a remembered device, by keyed hash; TTL the throttle's window.
     * The hash tag `{signin}` keeps them in one slot: one script reserves in an email's and a
     * client's sets at once. `code` and `password` count a signed-in or half-signed-in user's
     * two-factor codes and password confirmations (changing it, turning 2FA off).
     */
    signInFailures: (subject: 'email' | 'client' | 'device' | 'code' | 'password', hash: string) =>
      `${base}:{signin}:failures:${subject}:${hash}`,
    /**
     * Set while a refused sign-in of a user (by keyed hash) is in the audit log for the current
     * window; TTL the throttle's window. Further refusals until it expires are not written.
     */
    signInRefusalAudited: (hash: string) => `${base}:{signin}:refused:${hash}`,
    /**
     * Live workers and when each was last seen: sorted set of worker id → Redis server time (ms)
     * of its last heartbeat; both worker keys expire two heartbeat timeouts after the last beat of
     * any worker. Its members are the group the event-queue partitions are shared out over
     * (docs/adr/0015-worker-partition-ownership.md). Tagged `{workers}` everywhere: the heartbeat
     * script writes it with `workerPartitions`.
     */
    workerHeartbeats: `${base}:{workers}:heartbeats`,
    /** What each live worker consumes, as it last reported: hash worker id → comma-separated partitions. */
    workerPartitions: `${base}:{workers}:partitions`,
    /** Pub/sub channel: a worker joined or left the group, so the others beat at once. */
    workerGroupChanged: `${base}:{workers}:changed`,
    /** BullMQ prefix of each event-queue partition. */
    queuePrefixes,
    /** BullMQ prefix of the maintenance queue: the first partition's (another queue name under it). */
    maintenanceQueuePrefix: queuePrefixes[0]!,
    /** The event-queue partition of a user: all of a user's decisions and outcomes go there, in order. */
    queuePartition: (userHash: string) => (queuePartitions === 1 ? 0 : spread(userHash, queuePartitions)),
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
