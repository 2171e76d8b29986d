import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';
import { isDependencyUnavailable } from '../../shared/errors/unavailable';
import { limitsFor } from '../../shared/limits/plans';
import {
  statusClass,
  type LimitDecision,
  type LimitInput,
  type Limiter,
  type RateLimitState,
  type StatusClass,
} from '../../shared/limits/limiter';
import type { KeyCredential } from '../../shared/credentials/key.repository';
import type { LimitedProfileRead } from '../../shared/limits/limited-read';
import type { AdmissionLeases, LeasedAdmission } from '../../shared/limits/admission-leases';
import type { FreshProfile, FreshRead } from '../../shared/profile/profile-cache.repository';
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
      return rateLimitHeaders(await limiter.meterRefused({ accountId: credential.accountId, keyId: credential.id, endpoint, ...limits }));
    } catch (error) {
      logger.warn({ err: error }, 'usage metering failed');
      return {};
    }
  };
}

/** The limiter fails closed: a live request it cannot limit and meter is not let through. */
const limiterUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The rate limiter is unavailable; retry shortly', undefined, { 'Retry-After': '1' });

/** The 429 of a refused request. */
function refusal(decision: Extract<LimitDecision, { allowed: false }>): AppError {
  const window = decision.scope === 'second' ? '1s' : `${decision.windowSeconds}s`;
  const message =
    decision.scope === 'second'
      ? `Rate limit of ${decision.limit} requests per second exceeded for this key`
      : `Monthly quota of ${decision.limit} requests exceeded for this account (all its live keys together); it renews on the 1st (UTC)`;
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    message,
    { limit: decision.limit, window, retryAfter: decision.retryAfter, scope: decision.scope },
    { 'Retry-After': String(decision.retryAfter) },
  );
}

/**
 * How a live request's limit is settled: on a slot this process leased for its key
 * (AdmissionLeases), on its own, or together with the request's first profile read
 * (LimitedProfileRead). Either way the limiter's headers are set, a refusal becomes the 429 (or
 * 503 when the limiter is unavailable), and an admitted request that ends with another status
 * moves its count (reclassify).
 */
export class Admission {
  private settled = false;
  private readonly deps: AdmissionDeps;
  private readonly credential: KeyCredential;
  private readonly endpoint: string;
  private readonly res: Response;
  private limits: LimitInput | undefined;

  constructor(init: AdmissionInit) {
    ({ deps: this.deps, credential: this.credential, endpoint: this.endpoint, res: this.res } = init);
  }

  /** Not settled yet: a route that deferred its limit settles it before answering, also with an error. */
  get pending(): boolean {
    return !this.settled;
  }

  private input(): LimitInput {
    if (this.limits) return this.limits;
    const { accountId, id: keyId, plan, rateLimitRps } = this.credential;
    return (this.limits = { accountId, keyId, endpoint: this.endpoint, ...limitsFor(plan, rateLimitRps) });
  }

  /** Checks the limit on its own (or takes a leased slot); throws the refusal. */
  async alone(): Promise<void> {
    this.settled = true;
    const taken = this.deps.leases.take(this.input());
    if (taken !== undefined && (await this.leased(taken))) return;
    const call = this.deps.limiter.prepare(this.input());
    const decision = await this.ask(() => this.deps.limiter.send(call, this.lateSettlement(call.meteredAt)));
    if (!decision.allowed) return this.refuse(decision, call.meteredAt);
    this.admit(decision);
  }

  /**
   * Checks the limit and, when admitted, reads the profile, in one Redis call; throws the
   * refusal, or — once the request is metered and has its headers — the read's failure.
   */
  async withRead(read: FreshRead): Promise<FreshProfile> {
    this.settled = true;
    const taken = this.deps.leases.take(this.input());
    // Held by this process: no wait before the read (this runs on every leased context call).
    if (taken !== undefined && !(taken instanceof Promise)) return this.leasedRead(taken, read);
    if (taken !== undefined && (await this.leased(taken))) return this.deps.limitedRead.readAlone(read);
    const call = this.deps.limiter.prepare(this.input());
    const limited = await this.ask(() => this.deps.limitedRead.run(call, read, this.lateSettlement(call.meteredAt)));
    if (limited.kind === 'refused') return this.refuse(limited.decision, call.meteredAt);
    this.admit(limited.decision);
    if (limited.kind === 'read-failed') throw limited.error;
    return limited.fresh;
  }

  private leasedRead(slot: LeasedAdmission, read: FreshRead): Promise<FreshProfile> {
    this.admit(slot, true);
    return this.deps.limitedRead.readAlone(read);
  }

  /** Admits the request on a slot leased for its key, when this process holds or gets one. */
  private async leased(taken: LeasedAdmission | Promise<LeasedAdmission | undefined>): Promise<boolean> {
    const slot = taken instanceof Promise ? await this.ask(() => taken) : taken;
    if (slot === undefined) return false;
    this.admit(slot, true);
    return true;
  }

  private async ask<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!isDependencyUnavailable(error)) throw error;
      this.deps.logger.warn({ err: error }, 'rate limiter unavailable');
      throw limiterUnavailable();
    }
  }

  private headers(limit: number, remaining: number, resetAt: number): void {
    this.res.set(rateLimitHeaders({ limit, remaining, resetAt }));
  }

  /**
   * What settles a limiter decision that comes after the client gave up waiting for it: the
   * request was answered 503, but Redis ran the script once it answered again, which metered the
   * request as 2xx (admitted) or 429 (refused); it is metered as what it got
   * (docs/adr/0005-rate-limiter.md). Built of plain values: the client keeps it until Redis
   * answers, which must not keep the request and its response alive through a hang.
   */
  private lateSettlement(meteredAt: number): (decision: LimitDecision) => void {
    const { deps } = this;
    const request = this.metered();
    return (decision) => moveCount(deps, request, '5xx', meteredAt, decision.allowed ? '2xx' : '429');
  }

  /** The request as its usage counts name it. */
  private metered(): MeteredRequest {
    return { accountId: this.credential.accountId, keyId: this.credential.id, endpoint: this.endpoint };
  }

  private refuse(decision: Extract<LimitDecision, { allowed: false }>, meteredAt: number): never {
    // Refused after the request was answered at its deadline: metered as what it got (503).
    if (this.res.headersSent) moveCount(this.deps, this.metered(), '5xx', meteredAt, '429');
    else this.headers(decision.limit, 0, decision.resetAt);
    this.deps.metrics.rateLimitRejected(decision.scope);
    throw refusal(decision);
  }

  private admit(decision: Extract<LimitDecision, { allowed: true }>, leased = false): void {
    const { meteredAt } = decision;
    this.deps.metrics.rateLimitAdmitted(leased ? 'leased' : 'checked');
    // Admitted after the request was answered at its deadline: metered as what it got (503).
    if (this.res.headersSent) return this.meterAs(this.res.statusCode, meteredAt, leased);
    this.headers(decision.limit, decision.remaining, decision.resetAt);
    this.res.on('finish', () => this.meterAs(this.res.statusCode, meteredAt, leased));
  }

  /**
   * An admitted request is metered as 2xx at once (in Redis, or in this process's counts for a
   * leased slot); one that ended otherwise moves its count.
   */
  private meterAs(status: number, meteredAt: number, leased: boolean): void {
    const cls = statusClass(status);
    if (cls === '2xx') return;
    const request = this.metered();
    if (leased) return this.deps.leases.reclassify(request, cls, meteredAt);
    moveCount(this.deps, request, cls, meteredAt);
  }
}

type MeteredRequest = Parameters<Limiter['reclassify']>[0];

/** Moves a request's count in Redis to the class it ended with; a failure leaves it and is logged. */
function moveCount(
  { limiter, logger }: Pick<AdmissionDeps, 'limiter' | 'logger'>,
  request: MeteredRequest,
  cls: StatusClass,
  meteredAt: number,
  from: '2xx' | '429' = '2xx',
): void {
  limiter.reclassify(request, cls, meteredAt, from).catch((error: unknown) => logger.warn({ err: error }, 'usage reclassification failed'));
}

export interface AdmissionDeps {
  limiter: Limiter;
  leases: Pick<AdmissionLeases, 'take' | 'reclassify'>;
  limitedRead: LimitedProfileRead;
  logger: Logger;
  metrics: Pick<ApiMetrics, 'rateLimitRejected' | 'rateLimitAdmitted'>;
}

/** One live request's admission: the limiter's wiring, shared by every request, and the request. */
export interface AdmissionInit {
  deps: AdmissionDeps;
  /** The key the request authenticated with: its account, id, plan and per-second limit. */
  credential: KeyCredential;
  /** What the request is metered as. */
  endpoint: string;
  /** Takes the limiter's headers; the status it ends with is what the request is metered as. */
  res: Response;
}

/** The live request's admission a route deferred (`rateLimit(…)(endpoint, 'with-read')`), if any. */
export function deferredAdmission(res: Response): Admission | undefined {
  return res.locals.admission as Admission | undefined;
}

/**
 * Settles a limit the route deferred to its first read, when an error comes before that read:
 * the refusal (429) is the answer then, as on every other route. A route's `BeforeError`.
 */
export function settleDeferredLimit(res: Response): Promise<void> | undefined {
  const admission = deferredAdmission(res);
  return admission?.pending ? admission.alone() : undefined;
}

/** When a route's limit is checked: in its own step, or with the handler's first profile read. */
export type LimitMode = 'now' | 'with-read';

/**
 * For live keys: per-second limit per key and monthly quota per account, plus usage metering, in one
 * Redis round trip (Limiter.check). Test keys are free and unlimited: no headers, not metered.
 * A route that reads a profile first may defer the check (`'with-read'`): its handler then
 * settles it with that read in the same round trip (Admission.withRead), and the route's
 * pipeline settles it alone before any error, so that 429 still comes before the body's errors.
 */
export function rateLimit(deps: AdmissionDeps) {
  // Test keys pass straight through: no promise, no Redis call.
  return (endpoint: string, mode: LimitMode = 'now') =>
    (_req: Request, res: Response, next: NextFunction): void | Promise<void> => {
      const { credential } = authContext(res);
      if (credential.environment !== 'live') return next();
      const admission = new Admission({ deps, credential, endpoint, res });
      if (mode === 'with-read') {
        res.locals.admission = admission;
        return next();
      }
      return admission.alone().then(() => next(), next);
    };
}
