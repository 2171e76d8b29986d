import { createHash } from 'node:crypto';
import type { Result } from 'ioredis';
import { OUTCOME_FINGERPRINT_GRACE_SECONDS, type RedisKeys } from '../../shared/redis/key-names';
import type { Tenant } from '../../shared/domain/environment';
import type { OutcomeSignals } from '../../shared/domain/reward';
import { AppError } from '../../shared/errors/app-error';
import type { BatchedProducer } from '../../shared/jobs/batched-producer';
import type { OutcomeJob } from '../../shared/jobs/catalog';
import type { RedisClient } from '../../shared/redis/redis';
import type { ApiMetrics } from '../../shared/metrics/metrics';
import { isWellFormedRequestId, verifyRequestId, type RequestIdClaims } from '../../shared/ids/request-id';
import { PENDING_OUTCOME_TTL_SECONDS } from '../../shared/profile/pending-outcomes.repository';
import type { OutcomeRequest } from '../schemas/request.schemas';

/**
 * First outcome for a requestId wins; a retry with the same signals is accepted again. A first
 * outcome is also marked pending for its user until a worker has applied it.
 */
const CLAIM_OUTCOME = `
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  return 'new'
end
if cur == ARGV[1] then return 'same' end
return 'conflict'`;

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

/** Signals in a canonical order: the identity of an outcome for retries and conflicts. */
export function outcomeFingerprint(signals: OutcomeSignals): string {
  const canonical = JSON.stringify([
    signals.started,
    signals.completed ?? null,
    signals.timeToStart ?? null,
    signals.flowState ?? null,
    signals.satisfaction ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('base64url');
}

/** POST /v1/outcome: open the signed requestId, claim it, enqueue the outcome. */
export class OutcomeService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly producer: BatchedProducer,
    private readonly secret: string,
    private readonly windowMs: number,
    private readonly metrics: Pick<ApiMetrics, 'outcomeAccepted'>,
  ) {
    if (typeof (redis as Partial<RedisClient>).cosClaimOutcome !== 'function') {
      redis.defineCommand('cosClaimOutcome', { numberOfKeys: 2, lua: CLAIM_OUTCOME });
    }
  }

  /** The requestId's claims, once it is well formed, this tenant's and within the outcome window. */
  open(tenant: Tenant, request: OutcomeRequest, now = Date.now()): RequestIdClaims {
    if (!isWellFormedRequestId(request.requestId)) {
      throw new AppError('INVALID_REQUEST_ID', 'requestId must be a requestId returned by POST /v1/context (req_…)');
    }
    const claims = verifyRequestId(request.requestId, this.secret);
    if (!claims || claims.accountId !== tenant.accountId || claims.environment !== tenant.environment) {
      throw new AppError('REQUEST_NOT_FOUND', 'No context request with this requestId was issued to this account and environment');
    }
    if (now - claims.issuedAt > this.windowMs) {
      throw new AppError('OUTCOME_WINDOW_CLOSED', 'The outcome window for this requestId has closed', {
        issuedAt: new Date(claims.issuedAt).toISOString(),
        windowSeconds: Math.round(this.windowMs / 1000),
      });
    }
    return claims;
  }

  /** Claims the outcome of an opened requestId and enqueues it. */
  async record(tenant: Tenant, request: OutcomeRequest, claims: RequestIdClaims, now = Date.now()): Promise<void> {
    const { requestId, metadata, ...signals } = request;
    const fingerprintKey = this.keys.outcomeFingerprint(requestId, claims.userHash);
    const ttl = Math.ceil(this.windowMs / 1000) + OUTCOME_FINGERPRINT_GRACE_SECONDS;
    const pendingKey = this.keys.pendingOutcomes(tenant, claims.userHash);
    const claim = await this.redis.cosClaimOutcome(
      fingerprintKey,
      pendingKey,
      outcomeFingerprint(signals),
      ttl,
      requestId,
      now,
      PENDING_OUTCOME_TTL_SECONDS,
    );
    if (claim === 'conflict') {
      throw new AppError('OUTCOME_CONFLICT', 'A different outcome was already recorded for this requestId');
    }
    try {
      // Enqueued on every accepted post, also retries: the worker applies each requestId once,
      // so a 202 always means "enqueued".
      const job: OutcomeJob = { accountId: tenant.accountId, environment: tenant.environment, requestId, signals, receivedAt: now };
      if (metadata) job.metadata = metadata;
      await this.producer.add(claims.userHash, job);
    } catch (error) {
      if (claim === 'new')
        await this.redis
          .multi()
          .del(fingerprintKey)
          .zrem(pendingKey, requestId)
          .exec()
          .catch(() => undefined);
      throw error;
    }
    this.metrics.outcomeAccepted(claim === 'same');
  }
}
