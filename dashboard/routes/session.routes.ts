import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { recordAudit } from '../../shared/dashboard/audit.repository';
import { dummyPasswordHash, MAX_PASSWORD_LENGTH, verifyPassword } from '../../shared/dashboard/password';
import { emailSchema, findUserForSignIn, type DashboardUser } from '../../shared/dashboard/user.repository';
import { AppError } from '../../shared/errors/app-error';
import { auditViewer } from '../audit';
import { requireViewer } from '../auth/current-user';
import type { DashboardDeps } from '../deps';
import { formBody } from '../http/form';
import { csrfToken, requestGuards } from '../http/request-guards';
import { SESSION_COOKIE } from '../http/session';
import { signInPage } from '../views/sign-in.view';

/**
 * A visitor's session (it holds only the sign-in form's CSRF token) lives at most an hour, so
 * loading the sign-in page many times does not fill Redis for the whole idle expiry.
 */
const ANONYMOUS_SESSION_MS = 3_600_000;

/** One answer for a wrong email and a wrong password: which one was wrong is not told. */
const WRONG_CREDENTIALS = 'The email or password is not correct';

const signInForm = z.object({ email: z.string().max(1000), password: z.string().max(MAX_PASSWORD_LENGTH) });

const regenerate = (req: Request) => new Promise<void>((resolve, reject) => req.session.regenerate((e) => (e ? reject(e) : resolve())));
const save = (req: Request) => new Promise<void>((resolve, reject) => req.session.save((e) => (e ? reject(e) : resolve())));
const destroy = (req: Request) => new Promise<void>((resolve, reject) => req.session.destroy((e) => (e ? reject(e) : resolve())));

function signInToken(req: Request, idleMs: number): string {
  if (!req.session.userId) req.session.cookie.maxAge = Math.min(idleMs, ANONYMOUS_SESSION_MS);
  return csrfToken(req);
}

/** The sign-in page again, with the status and message of what went wrong (and the envelope for JSON clients). */
function refuse(req: Request, res: Response, error: AppError, idleMs: number, email?: string): void {
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.status(error.statusCode).format({
    html: () => res.send(signInPage({ csrfToken: signInToken(req, idleMs), email, error: error.message })),
    default: () => res.json(error.toBody()),
  });
}

export function sessionRoutes(deps: DashboardDeps): Router {
  const router = Router();

  router.get('/signin', (req, res) => {
    if (req.session.userId) return res.redirect(303, '/keys/test');
    res.send(signInPage({ csrfToken: signInToken(req, deps.session.idleMs) }));
  });

  router.post('/signin', formBody, requestGuards, async (req, res) => {
    const form = signInForm.safeParse(req.body ?? {});
    if (!form.success) return refuse(req, res, new AppError('VALIDATION_ERROR', 'Enter an email and a password'), deps.session.idleMs);
    const email = emailSchema.safeParse(form.data.email);
    const typedEmail = form.data.email.slice(0, 254);
    const key = email.success ? email.data : typedEmail.trim().toLowerCase();
    const wait = await deps.throttle.retryAfterSeconds(key, req.ip);
    if (wait > 0) {
      const error = new AppError('RATE_LIMIT_EXCEEDED', `Too many failed sign-ins; try again in ${Math.ceil(wait / 60)} min`, undefined, {
        'Retry-After': String(wait),
      });
      return refuse(req, res, error, deps.session.idleMs, typedEmail);
    }
    const user = email.success ? await findUserForSignIn(deps.db, email.data) : null;
    // Unknown emails are checked against a dummy hash so both failures take as long.
    const valid = await verifyPassword(user?.passwordHash ?? (await dummyPasswordHash()), form.data.password);
    if (!user || !valid) {
      await deps.throttle.recordFailure(key, req.ip);
      if (user) await audit(deps, req, user, 'session.sign-in-failed');
      return refuse(req, res, new AppError('UNAUTHORIZED', WRONG_CREDENTIALS), deps.session.idleMs, typedEmail);
    }
    await deps.throttle.clearEmail(key);
    // A new session id at sign-in: an id planted before it is worth nothing after.
    await regenerate(req);
    req.session.userId = user.id;
    req.session.userStamp = user.updatedAt;
    csrfToken(req);
    await save(req);
    await audit(deps, req, user, 'session.sign-in');
    res.redirect(303, '/keys/test');
  });

  router.post('/signout', requireViewer(deps.db), formBody, requestGuards, async (req, res) => {
    await auditViewer(deps, req, res, 'session.sign-out');
    await destroy(req);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.redirect(303, '/signin');
  });

  return router;
}

function audit(deps: DashboardDeps, req: Request, user: DashboardUser, action: 'session.sign-in' | 'session.sign-in-failed') {
  return recordAudit(deps.db, { accountId: user.accountId, actor: user.email, action, country: deps.countryOf(req.ip) });
}
