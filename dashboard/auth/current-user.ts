import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';
import { csrfToken } from '../http/request-guards';
import { signInFor } from '../http/return-to';
import { FormTokens } from '../services/form-tokens.service';
import type { Viewers } from '../services/viewers.service';
import type { Viewer } from '../views/layout';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The signed-in viewer, set by `requireViewer`. */
    viewer?: Viewer;
  }
}

/** Where a user of an account that requires two-factor sign-in is sent until they have set it up. */
export const ENROL_PATH = '/account/two-factor';

/** The signed-in viewer of this request; set by `requireViewer`. */
export function viewerOf(res: Response): Viewer {
  const viewer = res.locals.viewer;
  if (!viewer) throw new Error('viewerOf called on a route without requireViewer');
  return viewer;
}

export interface ViewerOptions {
  /**
   * The route stays open to a user who must still set up two-factor sign-in (enrolment itself,
   * signing out); every other route sends them to enrol.
   */
  beforeTwoFactor?: boolean;
}

/**
 * The session's viewer and how long its session may still last, or null when nobody is signed
 * in (or a user no longer allowed in, or a session ended elsewhere or past its lifetime).
 */
async function sessionViewer(viewers: Viewers, req: Request): Promise<{ viewer: Viewer; remainingMs: number } | null> {
  const { userId, userStamp } = req.session;
  const signedIn = userId ? await viewers.signedIn({ sessionId: req.sessionID, userId }, userStamp) : null;
  if (!signedIn) return null;
  const { user, account, requireTwoFactor, remainingMs } = signedIn;
  const mustEnrol = requireTwoFactor && user.twoFactorSince === null;
  // Told once: on the first page (GET) after signing in.
  const failedSignIns = req.method === 'GET' ? req.session.failedSignIns : undefined;
  if (failedSignIns) delete req.session.failedSignIns;
  const openPatterns = await viewers.openPatterns(account.id);
  const viewer: Viewer = {
    user,
    account,
    csrfToken: csrfToken(req),
    formToken: FormTokens.issue(),
    openPatterns,
    failedSignIns,
    mustEnrol,
    requireTwoFactor,
  };
  return { viewer, remainingMs };
}

/**
 * Loads the session's user and account on every request, so a user deleted or given a new
 * password, or a session ended elsewhere or past its absolute lifetime, loses access at once.
 * No session: a page redirects to sign in (and back to itself afterwards), anything else gets
 * 401. Only the session cookie counts: an Authorization header (an API key) is never looked at.
 */
export function requireViewer(viewers: Viewers, options: ViewerOptions = {}) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const found = await sessionViewer(viewers, req);
    if (!found) {
      if (req.session.userId) await new Promise<void>((resolve) => req.session.destroy(() => resolve()));
      if (req.method === 'GET') return res.redirect(303, signInFor(req.originalUrl));
      return next(new AppError('UNAUTHORIZED', 'Sign in to continue: the session has ended or never began'));
    }
    const { viewer, remainingMs } = found;
    // The cookie (and the Redis TTL) never outlive the absolute lifetime; each request re-arms the idle period only up to it.
    const idleMs = req.session.cookie.originalMaxAge;
    if (idleMs !== null && idleMs !== undefined && remainingMs < idleMs) req.session.cookie.maxAge = Math.max(remainingMs, 1000);
    if (viewer.mustEnrol && !options.beforeTwoFactor) {
      if (req.method === 'GET') return res.redirect(303, ENROL_PATH);
      return next(new AppError('FORBIDDEN', 'This account requires two-factor sign-in: set it up first'));
    }
    res.locals.viewer = viewer;
    next();
  };
}

/** The viewer when someone is signed in, for pages anyone may see (a 404 keeps the signed-in layout). */
export function loadViewer(viewers: Viewers) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.session?.userId) res.locals.viewer = (await sessionViewer(viewers, req))?.viewer;
    next();
  };
}

/** Owners change things; viewers only read. */
export function requireOwner(_req: Request, res: Response, next: NextFunction): void {
  if (viewerOf(res).user.role !== 'owner') return next(new AppError('FORBIDDEN', 'Viewers can read this account but not change it'));
  next();
}
