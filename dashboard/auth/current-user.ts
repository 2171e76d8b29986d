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

/** The signed-in viewer of this request; set by `requireViewer`. */
export function viewerOf(res: Response): Viewer {
  const viewer = res.locals.viewer;
  if (!viewer) throw new Error('viewerOf called on a route without requireViewer');
  return viewer;
}

/** The session's viewer, or null when nobody (or a user no longer allowed in) is signed in. */
async function sessionViewer(viewers: Viewers, req: Request): Promise<Viewer | null> {
  const { userId, userStamp } = req.session;
  const signedIn = userId ? await viewers.signedIn(userId, userStamp) : null;
  if (!signedIn) return null;
  const { user, account } = signedIn;
  // Told once: on the first page (GET) after signing in.
  const failedSignIns = req.method === 'GET' ? req.session.failedSignIns : undefined;
  if (failedSignIns) delete req.session.failedSignIns;
  const openPatterns = await viewers.openPatterns(account.id);
  return { user, account, csrfToken: csrfToken(req), formToken: FormTokens.issue(), openPatterns, failedSignIns };
}

/**
 * Loads the session's user and account on every request, so a user deleted or given a new
 * password loses access at once. No session: a page redirects to sign in (and back to itself
 * afterwards), anything else gets 401. Only the session cookie counts: an Authorization header
 * (an API key) is never looked at.
 */
export function requireViewer(viewers: Viewers) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const viewer = await sessionViewer(viewers, req);
    if (!viewer) {
      if (req.session.userId) await new Promise<void>((resolve) => req.session.destroy(() => resolve()));
      if (req.method === 'GET') return res.redirect(303, signInFor(req.originalUrl));
      return next(new AppError('UNAUTHORIZED', 'Sign in to continue: the session has ended or never began'));
    }
    res.locals.viewer = viewer;
    next();
  };
}

/** The viewer when someone is signed in, for pages anyone may see (a 404 keeps the signed-in layout). */
export function loadViewer(viewers: Viewers) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.session?.userId) res.locals.viewer = (await sessionViewer(viewers, req)) ?? undefined;
    next();
  };
}

/** Owners change things; viewers only read. */
export function requireOwner(_req: Request, res: Response, next: NextFunction): void {
  if (viewerOf(res).user.role !== 'owner') return next(new AppError('FORBIDDEN', 'Viewers can read this account but not change it'));
  next();
}
