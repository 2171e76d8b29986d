import type { FailedSignIns } from '../../shared/audit/audit.repository';
import RedisStore from 'connect-redis';
import session from 'express-session';
import type { RedisClient } from '../../shared/redis/redis';
import type { RequestHandler } from 'express';

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
    pendingSignIn?: { userId: string; stamp: string; at: number; failedSignIns?: FailedSignIns };
    /** A two-factor enrolment begun and not yet confirmed: its secret, sealed. */
    enrolment?: string;
  }
}

export const SESSION_COOKIE = 'cos_dashboard';

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
    name: SESSION_COOKIE,
    store: new RedisStore({ client: options.redis, prefix: options.prefix }),
    secret: options.secret,
    resave: false,
    saveUninitialized: false,
    rolling: true,
    unset: 'destroy',
    cookie: { httpOnly: true, sameSite: 'strict', secure: options.secureCookies, maxAge: options.idleMs, path: '/' },
  });
}
