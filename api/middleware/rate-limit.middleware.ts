import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';
import { isDependencyUnavailable } from '../../shared/errors/unavailable';
import { limitsFor } from '../../shared/limits/plans';
import { statusClass, type Limiter, type RateLimitState } from '../../shared/limits/limiter';
import type { KeyCredential } from '../../shared/keys/key.repository';
import type { Logger } from '../../shared/logger/logger';
import type { ApiMetrics } from '../../shared/metrics/metrics';
import { authContext } from './auth.middleware';

/** The headers every live response carries. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(state.limit),
    'X-RateLimit-Remaining': String(state.remaining),
    'X-RateLimit-Reset': String(state.resetAt),
  };
}

/**
 * For a live request refused before the limiter (403): meters it and returns its rate-limit
 * headers, without counting it against the limits. Test keys get none; a Redis failure costs
 * the headers and the count (logged), not the answer.
 */
export function meterRefusal(limiter: Limiter, logger: Logger) {
  return async (credential: KeyCredential, endpoint: string): Promise<Record<string, string>> => {
    if (credential.environment !== 'live') return {};
    try {
      const limits = limitsFor(credential.plan, credential.rateLimitRps);
      return rateLimitHeaders(await limiter.meterRefused({ keyId: credential.id, endpoint, ...limits }));
    } catch (error) {
      logger.warn({ err: error }, 'usage metering failed');
      return {};
    }
  };
}

/** The limiter fails closed: a live request it cannot limit and meter is not let through. */
const limiterUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The rate limiter is unavailable; retry shortly', undefined, { 'Retry-After': '1' });

/**
 * For live keys: per-second limit and monthly quota per key, plus usage metering, in one
 * Redis round trip (Limiter.check). Test keys are free and unlimited: no headers, not metered.
 */
export function rateLimit(limiter: Limiter, logger: Logger, metrics: Pick<ApiMetrics, 'rateLimitRejected'>) {
  const limitLive = async (credential: KeyCredential, endpoint: string, res: Response, next: NextFunction): Promise<void> => {
    const limits = limitsFor(credential.plan, credential.rateLimitRps);
    let decision;
    try {
      decision = await limiter.check({ keyId: credential.id, endpoint, ...limits });
    } catch (error) {
      if (!isDependencyUnavailable(error)) return next(error);
      logger.warn({ err: error }, 'rate limiter unavailable');
      return next(limiterUnavailable());
    }
    const remaining = decision.allowed ? decision.remaining : 0;
    res.set(rateLimitHeaders({ limit: decision.limit, remaining, resetAt: decision.resetAt }));
    if (!decision.allowed) {
      metrics.rateLimitRejected(decision.scope);
      const window = decision.scope === 'second' ? '1s' : `${decision.windowSeconds}s`;
      const message =
        decision.scope === 'second'
          ? `Rate limit of ${decision.limit} requests per second exceeded for this key`
          : `Monthly quota of ${decision.limit} requests exceeded for this key; it renews on the 1st (UTC)`;
      return next(
        new AppError(
          'RATE_LIMIT_EXCEEDED',
          message,
          { limit: decision.limit, window, retryAfter: decision.retryAfter, scope: decision.scope },
          { 'Retry-After': String(decision.retryAfter) },
        ),
      );
    }
    const { meteredAt } = decision;
    res.on('finish', () => {
      const cls = statusClass(res.statusCode);
      if (cls === '2xx') return;
      limiter
        .reclassify(credential.id, endpoint, cls, meteredAt)
        .catch((error: unknown) => logger.warn({ err: error }, 'usage reclassification failed'));
    });
    next();
  };
  // Test keys pass straight through: no promise, no Redis call.
  return (endpoint: string) =>
    (_req: Request, res: Response, next: NextFunction): void | Promise<void> => {
      const { credential } = authContext(res);
      if (credential.environment !== 'live') return next();
      return limitLive(credential, endpoint, res, next);
    };
}
