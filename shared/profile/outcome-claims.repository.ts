import type { Result } from 'ioredis';
import type { Tenant } from '../domain/environment';
import { OUTCOME_FINGERPRINT_GRACE_SECONDS, type RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';
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
    ): Result<'new' | 'same' | 'conflict', Context>;
  }
}

/** What claiming an outcome found: the first for its requestId, a retry of it, or a different one. */
export type OutcomeClaim = 'new' | 'same' | 'conflict';

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
    defineScripts(redis, ['cosClaimOutcome']);
  }

  /** Claims the requestId's outcome under its fingerprint and, when first, marks it pending. */
  claim(tenant: Tenant, requestId: string, userHash: string, fingerprint: string, now: number): Promise<OutcomeClaim> {
    return this.redis.cosClaimOutcome(
      this.keys.outcomeFingerprint(requestId, userHash),
      this.keys.pendingOutcomes(tenant, userHash),
      fingerprint,
      this.ttlSeconds,
      requestId,
      now,
      PENDING_OUTCOME_TTL_SECONDS,
    );
  }

  /** Withdraws a first claim and its pending mark: the outcome was never acknowledged. */
  async release(tenant: Tenant, requestId: string, userHash: string): Promise<void> {
    await this.redis
      .multi()
      .del(this.keys.outcomeFingerprint(requestId, userHash))
      .zrem(this.keys.pendingOutcomes(tenant, userHash), requestId)
      .exec();
  }
}
