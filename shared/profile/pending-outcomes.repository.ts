import type { Redis } from 'ioredis';
import type { RedisKeys } from '../cache/keys';
import { readRequestIdClaims } from '../keys/request-id';
import { execPipeline } from '../redis/redis';

/**
 * Outcomes accepted by the API and not yet applied by a worker, per user
 * (docs/adr/0008-read-your-outcomes.md). The API marks an outcome when it first accepts it (in
 * the script that claims its requestId); the worker unmarks it once the outcome is applied — or
 * dropped — and the cached profile shows it. Profile reads wait briefly while a recent mark
 * exists (ProfileLoader), so a client that reports an outcome and asks again gets an answer
 * that has learned from it.
 *
 * A mark is a member of a sorted set per user (keyed by the user hash every requestId
 * carries): requestId → time accepted (ms). Marks older than PENDING_OUTCOME_HORIZON_MS are
 * ignored — an outcome being retried, or no worker running — and the set expires
 * PENDING_OUTCOME_TTL_SECONDS after its last mark.
 */
export const PENDING_OUTCOME_HORIZON_MS = 5_000;
export const PENDING_OUTCOME_TTL_SECONDS = 60;

export class PendingOutcomes {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Unmarks settled outcomes (applied, already applied or dropped) in one round trip. */
  async clear(requestIds: Iterable<string>): Promise<void> {
    const pipeline = this.redis.pipeline();
    let count = 0;
    for (const requestId of requestIds) {
      const claims = readRequestIdClaims(requestId);
      if (!claims) continue;
      pipeline.zrem(this.keys.pendingOutcomes(claims, claims.userHash), requestId);
      count++;
    }
    if (count > 0) await execPipeline(pipeline);
  }
}
