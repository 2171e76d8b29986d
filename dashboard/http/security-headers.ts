import type { NextFunction, Request, Response } from 'express';

/** Everything the pages load is their own (scripts, styles); they cannot be framed. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/**
 * A year of HTTPS only, for this host and those under it: once a browser has seen it, a link or
 * a typed address over plain http, or a network that strips TLS, cannot reach the sign-in form.
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

/**
 * The headers of every response. `hsts` only with secure cookies, the setting that says the
 * dashboard is reached over TLS: a host served over plain http (local runs) must not be pinned
 * to HTTPS, with the hosts under it, for a year.
 */
export function securityHeaders(options: { hsts: boolean }) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    if (options.hsts) res.setHeader('Strict-Transport-Security', STRICT_TRANSPORT_SECURITY);
    next();
  };
}
