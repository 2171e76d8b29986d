import type { Environment, Tenant } from '../domain/environment';

/**
 * Every Redis key the service owns, with its TTL, under a versioned prefix
 * (`<prefix>:v1:`). BullMQ queues use `<prefix>:q` as their own prefix.
 */
export const CACHE_SCHEMA_VERSION = 'v1';

export const PROFILE_CACHE_TTL_SECONDS = 7 * 86_400;
/** Erased profile generations are remembered so late cache writes cannot resurrect them. */
export const ERASED_TTL_SECONDS = 2 * 86_400;
/** Outcome fingerprints live a day beyond the outcome window. */
export const OUTCOME_FINGERPRINT_GRACE_SECONDS = 86_400;

/**
 * A tenant's partition, with more parts after it: `<accountId>:<environment>[:<part>…]`. The one
 * spelling for Redis keys and for in-memory maps keyed by tenant (or tenant and user).
 */
export function tenantKey(tenant: Tenant, ...parts: string[]): string {
  return [tenant.accountId, tenant.environment, ...parts].join(':');
}

export function redisKeys(prefix: string) {
  const base = `${prefix}:${CACHE_SCHEMA_VERSION}`;
  const user = (tenant: Tenant, userId: string) => tenantKey(tenant, Buffer.from(userId, 'utf8').toString('base64url'));
  return {
    /** Hash {v: version, g: generation, d: cached profile JSON}. */
    profile: (tenant: Tenant, userId: string) => `${base}:profile:${user(tenant, userId)}`,
    /** SCAN pattern of the cached profiles of an account ('*' for all) in an environment. */
    profilePattern: (accountId: string, environment: Environment) => `${base}:profile:${tenantKey({ accountId, environment }, '*')}`,
    /** Hash {v: version, d: population prior JSON} of a tenant (no TTL: one small key per tenant). */
    population: (tenant: Tenant) => `${base}:population:${tenantKey(tenant)}`,
    erasedGeneration: (generation: string) => `${base}:erased:${generation}`,
    /** Sorted set of a user's outcomes accepted and not yet applied: requestId → ms accepted. */
    pendingOutcomes: (tenant: Tenant, userHash: string) => `${base}:pending:${tenantKey(tenant, userHash)}`,
    /** Pub/sub channel: JSON arrays of pendingOutcomes keys whose outcomes a worker just settled. */
    outcomesSettled: `${base}:outcomes-settled`,
    /** Pub/sub channel: key revocations and deletions, account restrictions (JSON, CredentialChange). */
    credentialChanges: `${base}:credential-changes`,
    /** Fingerprint of the first outcome accepted for a requestId (409 on a different one). */
    outcomeFingerprint: (requestId: string) => `${base}:outcome:${requestId}`,
    /** Sorted set of a key's admissions in the last second (score: epoch µs), TTL 5 s. */
    rateLog: (keyId: string) => `${base}:rl:${keyId}`,
    /** Requests accepted for a key in a UTC month (YYYY-MM); kept 40 days past the month. */
    monthlyCount: (keyId: string, month: string) => `${base}:quota:${keyId}:${month}`,
    /** Metered usage of a UTC day: hash `<keyId>|<endpoint>|<class>` → count, until flushed. */
    usage: (day: string) => `${base}:usage:${day}`,
    /** Days (YYYY-MM-DD) with metered usage that may not be flushed yet. */
    usageDays: `${base}:usage-days`,
    /** Usage snapshots taken by a flush and not yet deleted after their Postgres commit. */
    usageSnapshot: (flushId: string) => `${base}:usage-flush:${flushId}`,
    usageSnapshots: `${base}:usage-flushes`,
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
     * Sorted set of failed dashboard sign-ins (score: epoch ms) for an email or a client, by keyed
     * hash. The hash tag `{signin}` keeps an email's and a client's sets in one slot: one
     * transaction reads or writes both.
     */
    signInFailures: (subject: 'email' | 'client', hash: string) => `${base}:{signin}:failures:${subject}:${hash}`,
    queuePrefix: `${prefix}:q`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
