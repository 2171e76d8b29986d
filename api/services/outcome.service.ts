import { hash } from 'node:crypto';
import type { Tenant } from '../../shared/domain/environment';
import type { OutcomeSignals } from '../../shared/domain/reward';
import { AppError } from '../../shared/errors/app-error';
import type { BatchedProducer } from '../../shared/jobs/batched-producer';
import type { OutcomeJob } from '../../shared/jobs/catalog';
import type { ApiMetrics } from '../../shared/metrics/metrics';
import { isWellFormedRequestId, verifyRequestId, type RequestIdClaims } from '../../shared/ids/request-id';
import type { KeyClaim } from '../../shared/idempotency/idempotency.repository';
import type { OutcomeClaims } from '../../shared/profile/outcome-claims.repository';
import type { OutcomeRequest } from '../schemas/request.schemas';

/** Signals in a canonical order: the identity of an outcome for retries and conflicts. */
export function outcomeFingerprint(signals: OutcomeSignals): string {
  const canonical = JSON.stringify([
    signals.started,
    signals.completed ?? null,
    signals.timeToStart ?? null,
    signals.flowState ?? null,
    signals.satisfaction ?? null,
  ]);
  return hash('sha256', canonical, 'base64url');
}

/** POST /v1/outcome: open the signed requestId, claim it, enqueue the outcome. */
export interface OutcomeServiceDeps {
  claims: OutcomeClaims;
  /** Enqueues the accepted outcomes for the worker. */
  producer: BatchedProducer;
  /** Verifies the signed requestIds. */
  secret: string;
  /** How long after its context call a requestId takes an outcome (ms). */
  windowMs: number;
  metrics: Pick<ApiMetrics, 'outcomeAccepted'>;
}

export class OutcomeService {
  private readonly claims: OutcomeClaims;
  private readonly producer: BatchedProducer;
  private readonly secret: string;
  private readonly windowMs: number;
  private readonly metrics: Pick<ApiMetrics, 'outcomeAccepted'>;

  constructor(deps: OutcomeServiceDeps) {
    ({ claims: this.claims, producer: this.producer, secret: this.secret, windowMs: this.windowMs, metrics: this.metrics } = deps);
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

  /**
   * Claims the outcome of an opened requestId and enqueues it. `key`: the request's idempotency
   * claim, taken first in the same call (a held key throws IdempotencyKeyHeld).
   */
  async record(tenant: Tenant, request: OutcomeRequest, claims: RequestIdClaims, key?: KeyClaim, now = Date.now()): Promise<void> {
    const { requestId, metadata, ...signals } = request;
    const claimed = { tenant, requestId, userHash: claims.userHash };
    const claim = await this.claims.claim(claimed, outcomeFingerprint(signals), now, key);
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
      // Unclaimed, a retry of this outcome is accepted rather than refused as a conflict.
      if (claim === 'new') await this.claims.release(claimed).catch(() => undefined);
      throw error;
    }
    this.metrics.outcomeAccepted(claim === 'same');
  }
}
