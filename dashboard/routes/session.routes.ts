import { Router, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { emailSchema } from '../../shared/dashboard-users/email';
import { MAX_PASSWORD_LENGTH } from '../../shared/dashboard-users/password';
import type { FailedSignIns } from '../../shared/audit/audit.repository';
import type { DashboardUser } from '../../shared/dashboard-users/user.repository';
import { AppError } from '../../shared/errors/app-error';
import { traceIdOf } from '../../shared/http/trace-id';
import { auditViewer } from '../audit';
import { requireViewer } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { formBody } from '../http/form';
import { csrfToken, requestGuards } from '../http/request-guards';
import { DEFAULT_LANDING, safeReturnPath } from '../http/return-to';
import { clearSessionCookie } from '../http/session';
import { signInCodePage, signInPage } from '../views/sign-in.view';

/**
 * A visitor's session (it holds only the sign-in form's CSRF token) lives at most an hour, so
 * loading the sign-in page many times does not fill Redis for the whole idle expiry.
 */
const ANONYMOUS_SESSION_MS = 3_600_000;

/** One answer for a wrong email and a wrong password: which one was wrong is not told. */
const WRONG_CREDENTIALS = 'The email or password is not correct';

const signInForm = z.object({ email: z.string().max(1000), password: z.string().max(MAX_PASSWORD_LENGTH), next: z.unknown().optional() });
const codeForm = z.object({ code: z.string().max(100) });

/** After the right password, the code has to come within this long, or signing in starts again. */
export const CODE_STEP_MS = 5 * 60_000;

/** The page asked for before signing in (a path of this dashboard only), carried by the form's `next` field. */
const returnTo = (req: Request): string | undefined =>
  safeReturnPath((req.body as Record<string, unknown> | undefined)?.next ?? req.query.next) ?? undefined;

const regenerate = (req: Request) => new Promise<void>((resolve, reject) => req.session.regenerate((e) => (e ? reject(e) : resolve())));
const save = (req: Request) => new Promise<void>((resolve, reject) => req.session.save((e) => (e ? reject(e) : resolve())));
const destroy = (req: Request) => new Promise<void>((resolve, reject) => req.session.destroy((e) => (e ? reject(e) : resolve())));

export function signInToken(req: Request, idleMs: number): string {
  if (!req.session.userId) req.session.cookie.maxAge = Math.min(idleMs, ANONYMOUS_SESSION_MS);
  return csrfToken(req);
}

/** The sign-in page again, with the status and message of what went wrong (and the envelope for JSON clients). */
function refuse(req: Request, res: Response, error: AppError, idleMs: number, email?: string): void {
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.status(error.statusCode).format({
    html: () => res.send(signInPage({ csrfToken: signInToken(req, idleMs), email, error: error.message, next: returnTo(req) })),
    default: () => res.json(error.toBody(traceIdOf(res))),
  });
}

const busy = () =>
  new AppError('RATE_LIMIT_EXCEEDED', 'Too many sign-ins right now; try again in a moment', undefined, { 'Retry-After': '1' });

/**
 * Refuses a sign-in at once while the verification gate is saturated, before its session is
 * read or anything is reserved: under a flood, a refusal then costs no Redis or Postgres work.
 * Mounted ahead of the session middleware.
 */
export function signInWhileBusy(deps: Pick<DashboardDeps, 'signIns'>): RequestHandler {
  return (req, _res, next) => next(req.method === 'POST' && req.path === '/signin' && deps.signIns.saturated ? busy() : undefined);
}

export type SessionDeps = Pick<
  DashboardDeps,
  'viewers' | 'signIns' | 'audit' | 'devices' | 'countryOf' | 'session' | 'logger' | 'userSessions' | 'twoFactor' | 'clock'
>;

/**
 * Signs the session in: a new session id (an id planted before it, or known during the code
 * step, is worth nothing after), its record for the sessions page and the absolute lifetime, the
 * audit entry and the remembered-device cookie.
 */
export async function completeSignIn(
  deps: Pick<SessionDeps, 'userSessions' | 'signIns' | 'countryOf' | 'devices'>,
  req: Request,
  res: Response,
  signedIn: { user: DashboardUser; failed?: FailedSignIns | undefined; landing: string },
): Promise<void> {
  const { user, failed, landing } = signedIn;
  await regenerate(req);
  req.session.userId = user.id;
  req.session.userStamp = user.updatedAt;
  if (failed && failed.count > 0) req.session.failedSignIns = failed;
  csrfToken(req);
  await save(req);
  await deps.userSessions.begin({ sessionId: req.sessionID, userId: user.id }, { address: req.ip, userAgent: req.get('user-agent') });
  await deps.signIns.recordSignIn(user, deps.countryOf(req.ip));
  deps.devices.issue(res, user.email);
  res.redirect(303, landing);
}

export function sessionRoutes(deps: SessionDeps): Router {
  const router = Router();

  router.get('/signin', (req, res) => {
    if (req.session.userId) return res.redirect(303, returnTo(req) ?? DEFAULT_LANDING);
    res.send(signInPage({ csrfToken: signInToken(req, deps.session.idleMs), next: returnTo(req) }));
  });

  router.post('/signin', formBody, requestGuards, async (req, res) => {
    const form = signInForm.safeParse(req.body ?? {});
    if (!form.success) return refuse(req, res, new AppError('VALIDATION_ERROR', 'Enter an email and a password'), deps.session.idleMs);
    const parsed = emailSchema.safeParse(form.data.email);
    const email = parsed.success ? parsed.data : null;
    const typedEmail = form.data.email.slice(0, 254);
    const key = email ?? typedEmail.trim().toLowerCase();
    // A browser that signed in as this email before spends its own allowance (docs/adr/0017-sign-in-throttle.md).
    const device = deps.devices.deviceFor(req, key);
    const attempt = await deps.signIns.attempt(email, form.data.password, device ? { device } : { email: key, client: req.ip });
    if (attempt.outcome === 'throttled') {
      const wait = attempt.retryAfterSeconds;
      const error = new AppError('RATE_LIMIT_EXCEEDED', `Too many failed sign-ins; try again in ${Math.ceil(wait / 60)} min`, undefined, {
        'Retry-After': String(wait),
      });
      refuse(req, res, error, deps.session.idleMs, typedEmail);
      return auditLater(deps, req, res, email, 'session.sign-in-refused');
    }
    if (attempt.outcome === 'busy') return refuse(req, res, busy(), deps.session.idleMs, typedEmail);
    if (attempt.outcome === 'wrong') {
      refuse(req, res, new AppError('UNAUTHORIZED', WRONG_CREDENTIALS), deps.session.idleMs, typedEmail);
      // Written after the answer, so that a known email answers as fast as an unknown one.
      return auditLater(deps, req, res, attempt.user, 'session.sign-in-failed');
    }
    const { user, failedSignIns: failed } = attempt;
    const landing = returnTo(req) ?? DEFAULT_LANDING;
    if (user.twoFactorSince === null) return completeSignIn(deps, req, res, { user, failed, landing });
    // Half-way: the password was right; the session holds who, until the code is.
    await regenerate(req);
    req.session.pendingSignIn = { userId: user.id, stamp: user.updatedAt, at: deps.clock(), failedSignIns: failed, landing };
    signInToken(req, deps.session.idleMs);
    await save(req);
    res.redirect(303, '/signin/code');
  });

  /** The code step's user, or null (no password given yet, or too long ago: start again). */
  const pendingUser = async (req: Request): Promise<DashboardUser | null> => {
    const pending = req.session.pendingSignIn;
    if (!pending || deps.clock() - pending.at > CODE_STEP_MS) return null;
    const user = await deps.viewers.user(pending.userId);
    return user && user.updatedAt === pending.stamp && user.twoFactorSince !== null ? user : null;
  };

  router.get('/signin/code', async (req, res) => {
    if (!(await pendingUser(req))) return res.redirect(303, '/signin');
    res.send(signInCodePage({ csrfToken: signInToken(req, deps.session.idleMs) }));
  });

  router.post('/signin/code', formBody, requestGuards, async (req, res) => {
    const user = await pendingUser(req);
    if (!user) {
      delete req.session.pendingSignIn;
      return refuse(
        req,
        res,
        new AppError('UNAUTHORIZED', 'Signing in took too long; enter your email and password again'),
        deps.session.idleMs,
      );
    }
    const form = codeForm.safeParse(req.body ?? {});
    const again = (error: AppError) => {
      for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
      res.status(error.statusCode).format({
        html: () => res.send(signInCodePage({ csrfToken: signInToken(req, deps.session.idleMs), error: error.message })),
        default: () => res.json(error.toBody(traceIdOf(res))),
      });
    };
    if (!form.success) return again(new AppError('VALIDATION_ERROR', 'Enter the code from your app or a recovery code'));
    const check = await deps.twoFactor.check(user, form.data.code);
    if (check.outcome === 'throttled') {
      const wait = check.retryAfterSeconds;
      return again(
        new AppError('RATE_LIMIT_EXCEEDED', `Too many wrong codes; try again in ${Math.ceil(wait / 60)} min`, undefined, {
          'Retry-After': String(wait),
        }),
      );
    }
    if (check.outcome === 'wrong') {
      again(new AppError('UNAUTHORIZED', 'That code is not right, or was used already'));
      return deps.audit.recordBy({ user, country: deps.countryOf(req.ip) }, 'session.code-failed');
    }
    const pending = req.session.pendingSignIn;
    await completeSignIn(deps, req, res, { user, failed: pending?.failedSignIns, landing: pending?.landing ?? DEFAULT_LANDING });
    if (check.recoveryCode) await deps.twoFactor.recordRecoveryCodeUsed({ user, country: deps.countryOf(req.ip) });
  });

  router.post('/signout', requireViewer(deps.viewers, { beforeTwoFactor: true }), formBody, requestGuards, async (req, res) => {
    await auditViewer(deps, { req, res, action: 'session.sign-out' });
    await deps.userSessions.end(req.sessionID);
    await destroy(req);
    clearSessionCookie(res, deps.session.secureCookies);
    res.redirect(303, '/signin');
  });

  return router;
}

/**
 * Audits a failed or refused sign-in of a known email once the answer has gone (the response's
 * `finish`, after the session store's write). The lookup and the write happen for known emails
 * only, so nothing of them may run before the answer: a known email would answer later.
 */
function auditLater(
  deps: Pick<DashboardDeps, 'signIns' | 'countryOf' | 'logger'>,
  req: Request,
  res: Response,
  who: DashboardUser | string | null,
  action: 'session.sign-in-failed' | 'session.sign-in-refused',
): void {
  if (who === null) return;
  res.once('finish', () => {
    void (async () => {
      await deps.signIns.recordAttempt(who, action, deps.countryOf(req.ip));
    })().catch((error: unknown) => deps.logger.warn({ err: error, action }, 'could not audit a sign-in attempt'));
  });
}
