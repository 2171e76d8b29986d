import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';
import { csrfToken } from '../http/request-guards';
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
 * Loads the session's user and account on every request, so a user deleted or given a new
 * password, or a session ended elsewhere or past its absolute lifetime, loses access at once.
 * No session: a page redirects to sign in, anything else gets 401. Only the session cookie
 * counts: an Authorization header (an API key) is never looked at.
 */
export function requireViewer(viewers: Viewers, options: ViewerOptions = {}) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { userId, userStamp } = req.session;
    const signedIn = userId ? await viewers.signedIn(req.sessionID, userId, userStamp) : null;
    if (!signedIn) {
      if (userId) await new Promise<void>((resolve) => req.session.destroy(() => resolve()));
      if (req.method === 'GET') return res.redirect(303, `/signin`);
      return next(new AppError('UNAUTHORIZED', 'Sign in to continue: the session has ended or never began'));
    }
    const { user, account, requireTwoFactor, remainingMs } = signedIn;
    // The cookie (and the Redis TTL) never outlive the absolute lifetime; each request re-arms the idle period only up to it.
    const idleMs = req.session.cookie.originalMaxAge;
    if (idleMs !== null && idleMs !== undefined && remainingMs < idleMs) req.session.cookie.maxAge = Math.max(remainingMs, 1000);
    const mustEnrol = requireTwoFactor && user.twoFactorSince === null;
    if (mustEnrol && !options.beforeTwoFactor) {
      if (req.method === 'GET') return res.redirect(303, ENROL_PATH);
      return next(new AppError('FORBIDDEN', 'This account requires two-factor sign-in: set it up first'));
    }
    // Told once: on the first page (GET) after signing in.
    const failedSignIns = req.method === 'GET' ? req.session.failedSignIns : undefined;
    if (failedSignIns) delete req.session.failedSignIns;
    const openPatterns = await viewers.openPatterns(account.id);
    res.locals.viewer = { user, account, csrfToken: csrfToken(req), openPatterns, failedSignIns, mustEnrol, requireTwoFactor };
    next();
  };
}

/** Owners change things; viewers only read. */
export function requireOwner(_req: Request, res: Response, next: NextFunction): void {
  if (viewerOf(res).user.role !== 'owner') return next(new AppError('FORBIDDEN', 'Viewers can read this account but not change it'));
  next();
}
