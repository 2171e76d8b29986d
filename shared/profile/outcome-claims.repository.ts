import type { Result } from 'ioredis';
import type { Tenant } from '../domain/environment';
import { OUTCOME_FINGERPRINT_GRACE_SECONDS, type RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';
import type { ClaimReply, KeyClaim } from '../idempotency/idempotency.repository';
import { PENDING_OUTCOME_TTL_SECONDS } from './pending-outcomes.repository';

/**
 * First outcome for a requestId wins; a retry with the same signals is accepted again. A first
 * outcome is also marked pending for its user until a worker has applied it
 * (shared/redis/lua/claimOutcome-2.lua).
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosClaimOutcome(
      key: string,
      pendingKey: string,
      fingerprint: string,
      ttl: number,
      requestId: string,
      acceptedAt: number,
      pendingTtl: number,
    ): Result<OutcomeClaim, Context>;
    cosClaimKeyThenOutcome(
      ...keysThenArgs: [
        ...KeyClaim['keys'],
        key: string,
        pendingKey: string,
        ...KeyClaim['args'],
        fingerprint: string,
        ttl: number,
        requestId: string,
        acceptedAt: number,
        pendingTtl: number,
      ]
    ): Result<ClaimReply<OutcomeClaim>, Context>;
  }
}

/** What claiming an outcome found: the first for its requestId, a retry of it, or a different one. */
export type OutcomeClaim = 'new' | 'same' | 'conflict';

/** The context request whose outcome is claimed, and its user (by keyed hash, where the user's keys live). */
export interface ClaimedRequest {
  tenant: Tenant;
  requestId: string;
  userHash: string;
}

/**
 * Outcome claims in Redis: a requestId's outcome fingerprint, kept a day beyond the outcome
 * window, and the pending mark of its user (both in the user's slot on a cluster).
 */
export class OutcomeClaims {
  private readonly ttlSeconds: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    outcomeWindowMs: number,
  ) {
    this.ttlSeconds = Math.ceil(outcomeWindowMs / 1000) + OUTCOME_FINGERPRINT_GRACE_SECONDS;
    defineScripts(redis, ['cosClaimOutcome', 'cosClaimKeyThenOutcome']);
  }

  /**
   * Claims the requestId's outcome under its fingerprint and, when first, marks it pending.
   * `key`: the request's idempotency claim, taken first in the same call
   * (claimKeyThenOutcome-4.lua); a held key throws IdempotencyKeyHeld and claims nothing.
   */
  async claim(request: ClaimedRequest, fingerprint: string, now: number, key?: KeyClaim): Promise<OutcomeClaim> {
    const { tenant, requestId, userHash } = request;
    const fingerprintKey = this.keys.outcomeFingerprint(request);
    const pendingKey = this.keys.pendingOutcomes(tenant, userHash);
    if (!key)
      return this.redis.cosClaimOutcome(
        fingerprintKey,
        pendingKey,
        fingerprint,
        this.ttlSeconds,
        requestId,
        now,
        PENDING_OUTCOME_TTL_SECONDS,
      );
    return key.settle(
      await this.redis.cosClaimKeyThenOutcome(
        ...key.keys,
        fingerprintKey,
        pendingKey,
        ...key.args,
        fingerprint,
        this.ttlSeconds,
        requestId,
        now,
        PENDING_OUTCOME_TTL_SECONDS,
      ),
    );
  }

  /** Withdraws a first claim and its pending mark: the outcome was never acknowledged. */
  async release(request: ClaimedRequest): Promise<void> {
    const { tenant, requestId, userHash } = request;
    await this.redis.multi().del(this.keys.outcomeFingerprint(request)).zrem(this.keys.pendingOutcomes(tenant, userHash), requestId).exec();
  }
}
