import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import type { Tenant } from '../domain/environment';
import type { RedisClient } from '../redis/redis';

/**
 * The records of idempotent POSTs (docs/API.md#idempotent-requests), one string per key: while
 * the first request runs, its lease (a token, no longer than the request deadline, so a crashed
 * process never holds a key); then its response for the window. Both carry the fingerprint of
 * the request, never the request itself. Each record is listed in its user's index, in the same
 * slot, so erasing the user erases them.
 */

/** What a key holds: a request in flight, or the response it got. */
export type IdempotencyRecord =
  { state: 'in-flight'; lease: string; fingerprint: string } | { state: 'done'; fingerprint: string; status: number; response: unknown };

export type Claim = { kind: 'acquired'; lease: string } | { kind: 'found'; record: IdempotencyRecord };

/**
 * KEYS[1] the record, KEYS[2] the user's index. ARGV: the lease value, lease ms, the key digest
 * (index member), now ms, window ms. Takes the lease when the key is free, listing it in the
 * index (members scored by expiry; expired ones pruned here); otherwise returns what it holds.
 */
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local now = tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return false`;

/** KEYS[1] the record. ARGV: the lease value, the response record, window ms. Replaces the lease, if still held, by the response. */
const COMPLETE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/** KEYS[1] the record. ARGV: the lease value. Frees the key, if the lease is still held. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosIdempotencyClaim(
      record: string,
      index: string,
      lease: string,
      leaseMs: number,
      digest: string,
      now: number,
      windowMs: number,
    ): Result<string | null, Context>;
    cosIdempotencyComplete(record: string, lease: string, response: string, windowMs: number): Result<0 | 1, Context>;
    cosIdempotencyRelease(record: string, lease: string): Result<0 | 1, Context>;
  }
}

export class IdempotencyRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    if (typeof (redis as Partial<RedisClient>).cosIdempotencyClaim !== 'function') {
      redis.defineCommand('cosIdempotencyClaim', { numberOfKeys: 2, lua: CLAIM });
      redis.defineCommand('cosIdempotencyComplete', { numberOfKeys: 1, lua: COMPLETE });
      redis.defineCommand('cosIdempotencyRelease', { numberOfKeys: 1, lua: RELEASE });
    }
  }

  /** Takes the key for a request with this fingerprint, or returns what the key holds. */
  async claim(
    tenant: Tenant,
    userHash: string,
    digest: string,
    claim: { token: string; fingerprint: string; leaseMs: number; windowMs: number; now: number },
  ): Promise<Claim> {
    const lease = JSON.stringify({ lease: claim.token, fingerprint: claim.fingerprint });
    const held = await this.redis.cosIdempotencyClaim(
      this.keys.idempotency(tenant, userHash, digest),
      this.keys.idempotencyIndex(tenant, userHash),
      lease,
      claim.leaseMs,
      digest,
      claim.now,
      claim.windowMs,
    );
    if (held === null) return { kind: 'acquired', lease };
    return { kind: 'found', record: decode(held) };
  }

  /** Stores the response in place of the lease; false when the lease was lost (expired, erased). */
  async complete(
    tenant: Tenant,
    userHash: string,
    digest: string,
    lease: string,
    done: { fingerprint: string; status: number; response: unknown; windowMs: number },
  ): Promise<boolean> {
    const record = JSON.stringify({ fingerprint: done.fingerprint, status: done.status, response: done.response });
    return (await this.redis.cosIdempotencyComplete(this.keys.idempotency(tenant, userHash, digest), lease, record, done.windowMs)) === 1;
  }

  /** Frees the key for a retry (the request failed without a response worth replaying). */
  async release(tenant: Tenant, userHash: string, digest: string, lease: string): Promise<void> {
    await this.redis.cosIdempotencyRelease(this.keys.idempotency(tenant, userHash, digest), lease);
  }

  /** Deletes every record of a user (erasure); returns how many its index listed. */
  async erase(tenant: Tenant, userHash: string): Promise<number> {
    const index = this.keys.idempotencyIndex(tenant, userHash);
    const digests = await this.redis.zrange(index, 0, -1);
    // One slot (the user's): one DEL for the records and their index.
    await this.redis.del(...digests.map((digest) => this.keys.idempotency(tenant, userHash, digest)), index);
    return digests.length;
  }
}

function decode(held: string): IdempotencyRecord {
  const value = JSON.parse(held) as { lease?: string; fingerprint: string; status?: number; response?: unknown };
  if (value.lease !== undefined) return { state: 'in-flight', lease: value.lease, fingerprint: value.fingerprint };
  return { state: 'done', fingerprint: value.fingerprint, status: value.status ?? 200, response: value.response };
}
