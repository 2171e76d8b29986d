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

/**
 * The claim's reply inside the script that carries it: {0, record} when the key is held,
 * {1, reply} when the lease was taken, reply being the carrying script's own.
 */
export type ClaimReply<Reply> = [0, string] | [1, Reply];

/** Thrown where a claim finds its key held: the request stops, and is answered from the record. */
export class IdempotencyKeyHeld extends Error {
  constructor(readonly record: IdempotencyRecord) {
    super('the idempotency key is held');
  }
}

/**
 * A claim prepared to travel with the first call its request makes in the user's slot (the
 * profile read of a context call, the outcome claim of an outcome): a round trip less than a
 * claim of its own (docs/adr/0020-idempotency-keys.md). The carrying script runs
 * includes/idempotencyClaim.lua with these keys and arguments first.
 */
export class KeyClaim {
  /** Whether this request holds the key: its lease was taken and not given back. */
  acquired = false;

  constructor(
    readonly keys: [record: string, index: string],
    readonly args: [lease: string, leaseMs: number, digest: string, now: number, windowMs: number],
  ) {}

  get lease(): string {
    return this.args[0];
  }

  /** The carrying script's own reply once the lease is taken; throws IdempotencyKeyHeld when the key is held. */
  settle<Reply>(reply: ClaimReply<Reply>): Reply {
    if (reply[0] === 0) throw new IdempotencyKeyHeld(decode(reply[1]));
    this.acquired = true;
    return reply[1];
  }
}

/**
 * Complete and release are scripts (shared/redis/lua/idempotencyComplete.lua,
 * idempotencyRelease-1.lua): each writes a key only when it still holds the request's lease.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosIdempotencyComplete(numberOfKeys: number, ...recordsThenArgs: (string | number)[]): Result<Array<0 | 1>, Context>;
    cosIdempotencyRelease(record: string, lease: string): Result<0 | 1, Context>;
  }
}

/** A response waiting to replace its lease, and its caller. */
interface Completion {
  record: string;
  lease: string;
  response: string;
  stored: (stored: boolean) => void;
  failed: (error: unknown) => void;
}

export class IdempotencyRecords {
  /** The completions of this event-loop turn on one node, by window (requests share one). */
  private readonly turn = new Map<number, Completion[]>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    defineScripts(redis, ['cosIdempotencyComplete', 'cosIdempotencyRelease']);
  }

  /**
   * A claim of the key for a request with this fingerprint, to send with the request's first call
   * in the user's slot. `record` names the key: its tenant, its user and its Idempotency-Key's digest.
   */
  prepareClaim(
    record: { tenant: Tenant; userHash: string; keyDigest: string },
    claim: { token: string; fingerprint: string; leaseMs: number; windowMs: number; now: number },
  ): KeyClaim {
    const lease = JSON.stringify({ lease: claim.token, fingerprint: claim.fingerprint });
    return new KeyClaim(
      [this.keys.idempotency(record), this.keys.idempotencyIndex(record.tenant, record.userHash)],
      [lease, claim.leaseMs, record.keyDigest, claim.now, claim.windowMs],
    );
  }

  /**
   * Stores the response in place of the lease; false when the lease was lost (expired, erased).
   * On one node the responses completed within one event-loop turn go in one script call, a
   * command less per keyed POST; on a cluster each record goes to its user's slot on its own
   * (docs/adr/0020-idempotency-keys.md).
   */
  complete(claim: KeyClaim, done: { fingerprint: string; status: number; responseText: string; windowMs: number }): Promise<boolean> {
    // The response as it was sent, serialised once: the record reads back as {fingerprint, status, response}.
    const response = `{"fingerprint":${JSON.stringify(done.fingerprint)},"status":${done.status},"response":${done.responseText}}`;
    const [record] = claim.keys;
    const { lease } = claim;
    if (this.keys.cluster)
      return this.redis.cosIdempotencyComplete(1, record, done.windowMs, lease, response).then(([stored]) => stored === 1);
    return new Promise((stored, failed) => {
      let batch = this.turn.get(done.windowMs);
      if (!batch) {
        this.turn.set(done.windowMs, (batch = []));
        setImmediate(() => this.send(done.windowMs));
      }
      batch.push({ record, lease, response, stored, failed });
    });
  }

  private send(windowMs: number): void {
    const batch = this.turn.get(windowMs)!;
    this.turn.delete(windowMs);
    const args: Array<string | number> = batch.map((c) => c.record);
    args.push(windowMs);
    for (const c of batch) args.push(c.lease, c.response);
    this.redis.cosIdempotencyComplete(batch.length, ...args).then(
      (stored) => batch.forEach((c, i) => c.stored(stored[i] === 1)),
      (error: unknown) => batch.forEach((c) => c.failed(error)),
    );
  }

  /** Frees the key for a retry (the request failed without a response worth replaying). */
  async release(claim: KeyClaim): Promise<void> {
    claim.acquired = false;
    await this.redis.cosIdempotencyRelease(claim.keys[0], claim.lease);
  }

  /** Deletes every record of a user (erasure); returns how many its index listed. */
  async erase(tenant: Tenant, userHash: string): Promise<number> {
    const index = this.keys.idempotencyIndex(tenant, userHash);
    const digests = await this.redis.zrange(index, 0, -1);
    // One slot (the user's): one DEL for the records and their index.
    await this.redis.del(...digests.map((keyDigest) => this.keys.idempotency({ tenant, userHash, keyDigest })), index);
    return digests.length;
  }
}

function decode(held: string): IdempotencyRecord {
  const value = JSON.parse(held) as { lease?: string; fingerprint: string; status?: number; response?: unknown };
  if (value.lease !== undefined) return { state: 'in-flight', lease: value.lease, fingerprint: value.fingerprint };
  return { state: 'done', fingerprint: value.fingerprint, status: value.status ?? 200, response: value.response };
}
