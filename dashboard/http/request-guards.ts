import { csrfSync } from 'csrf-sync';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const { generateToken, isRequestValid } = csrfSync({
  getTokenFromRequest: (req) => {
    const token: unknown = (req.body as Record<string, unknown> | undefined)?._csrf;
    return typeof token === 'string' ? token : undefined;
  },
});

/** The session's synchroniser token, created on first use; forms carry it in a hidden field. */
export const csrfToken = (req: Request): string => generateToken(req);

/**
 * Refuses a state-changing request a browser says comes from another site (Sec-Fetch-Site, or
 * an Origin that is not this dashboard's), then one whose form lacks the session's CSRF token.
 * The first stops cross-site posts even before the token is checked; the token covers browsers
 * that send neither header.
 */
export const requestGuards: RequestHandler = (req: Request, _res: Response, next: NextFunction) => {
  if (SAFE_METHODS.has(req.method)) return next();
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return next(new AppError('FORBIDDEN', `Cross-site requests are refused (Sec-Fetch-Site: ${site})`));
  }
  const origin = req.get('origin');
  if (origin !== undefined && origin !== `${req.protocol}://${req.get('host')}`) {
    return next(new AppError('FORBIDDEN', 'Requests from another origin are refused'));
  }
  if (!isRequestValid(req)) {
    return next(new AppError('FORBIDDEN', 'The form is missing its security token or it has expired; reload the page and try again'));
  }
  next();
};
