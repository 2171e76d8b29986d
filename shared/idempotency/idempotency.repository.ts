import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import type { Tenant } from '../domain/environment';
import type { RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';

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
 * Claim, complete and release are scripts (shared/redis/lua/idempotencyClaim-2.lua,
 * idempotencyComplete-1.lua, idempotencyRelease-1.lua): each reads the key and writes it only
 * when it holds what the caller expects.
 */
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
    defineScripts(redis, ['cosIdempotencyClaim', 'cosIdempotencyComplete', 'cosIdempotencyRelease']);
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
    done: { fingerprint: string; status: number; responseText: string; windowMs: number },
  ): Promise<boolean> {
    // The response as it was sent, serialised once: the record reads back as {fingerprint, status, response}.
    const record = `{"fingerprint":${JSON.stringify(done.fingerprint)},"status":${done.status},"response":${done.responseText}}`;
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
