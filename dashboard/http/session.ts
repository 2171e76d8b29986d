import type { FailedSignIns } from '../../shared/audit/audit.repository';
import RedisStore from 'connect-redis';
import session from 'express-session';
import type { RedisClient } from '../../shared/redis/redis';
import type { RequestHandler, Response } from 'express';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    /** The user's updatedAt at sign-in: a password reset since then ends the session. */
    userStamp?: string;
    /** Failed sign-ins since the previous visit, told once on the first page after signing in. */
    failedSignIns?: FailedSignIns;
    /**
     * The password was right and a two-factor code is awaited: who, their stamp, and when (epoch
     * ms; the code step lasts a few minutes). The session is not signed in until the code is.
     */
    /** After the right password, until the code: who, since when, and the page to land on. */
    pendingSignIn?: { userId: string; stamp: string; at: number; failedSignIns?: FailedSignIns; landing: string };
    /** A two-factor enrolment begun and not yet confirmed: its secret, sealed. */
    enrolment?: string;
  }
}

/**
 * The session cookie's name: `__Host-` when the cookie is Secure, so that browsers take it only
 * with Secure, Path=/ and no Domain — a sibling subdomain or a plain-http page cannot plant or
 * shadow a session (fixation). Without TLS (local runs) browsers would refuse the prefix.
 */
export const sessionCookieName = (secureCookies: boolean): string => (secureCookies ? '__Host-cos_dashboard' : 'cos_dashboard');

export interface SessionOptions {
  redis: RedisClient;
  prefix: string;
  secret: string;
  idleMs: number;
  secureCookies: boolean;
}

/**
 * Server-side sessions in Redis. The cookie carries only the signed session id: HttpOnly,
 * SameSite=Strict, Secure behind TLS. `rolling` re-arms both the cookie and the Redis TTL on
 * every response, so a session ends after `idleMs` without requests.
 */
export function sessions(options: SessionOptions): RequestHandler {
  return session({
    name: sessionCookieName(options.secureCookies),
    store: new RedisStore({ client: options.redis, prefix: options.prefix }),
    secret: options.secret,
    resave: false,
    saveUninitialized: false,
    rolling: true,
    unset: 'destroy',
    cookie: { httpOnly: true, sameSite: 'strict', secure: options.secureCookies, maxAge: options.idleMs, path: '/' },
  });
}

/**
 * Removes the session cookie at sign-out. A `__Host-` cookie is only replaced by one with the
 * same attributes (Secure, Path=/), or the browser ignores the removal.
 */
export function clearSessionCookie(res: Response, secureCookies: boolean): void {
  res.clearCookie(sessionCookieName(secureCookies), { httpOnly: true, sameSite: 'strict', secure: secureCookies, path: '/' });
}
