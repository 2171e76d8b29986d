import { hashPassword, verifyPassword } from '../../shared/dashboard-users/password';
import { findUserForSignIn, setPasswordHash, type DashboardUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import type { SignInThrottle } from '../auth/sign-in-throttle';
import { VerificationBusyError, type VerificationGate } from '../auth/verification-gate';
import type { DashboardActor } from './audit-log.service';
import type { AuditLog } from './audit-log.service';
import type { UserSessions } from './user-sessions.service';

/** The answer to a password typed to confirm a change. */
export type PasswordCheck =
  | { outcome: 'right' }
  | { outcome: 'wrong' }
  /** Too many wrong ones for this user lately. */
  | { outcome: 'throttled'; retryAfterSeconds: number }
  /** No turn to verify it in time. */
  | { outcome: 'busy' };

export interface PasswordsDeps {
  db: Db;
  throttle: SignInThrottle;
  verifications: VerificationGate;
  sessions: UserSessions;
  audit: AuditLog;
}

/**
 * A signed-in user's password: confirmed before a change to their sign-in (a new password,
 * two-factor sign-in off), under a limit of its own so that a session left open cannot be used
 * to guess it, and changed.
 */
export class Passwords {
  constructor(private readonly deps: PasswordsDeps) {}

  /** Whether `password` is the user's; a wrong one counts against their limit of 5 in 15 minutes. */
  async confirm(user: DashboardUser, password: string): Promise<PasswordCheck> {
    const { throttle, verifications, db } = this.deps;
    const attempt = await throttle.reserveForUser('password', user.id);
    if ('retryAfterSeconds' in attempt) return { outcome: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds };
    let right: boolean;
    try {
      const stored = await findUserForSignIn(db, user.email);
      right = stored !== null && (await verifications.run(() => verifyPassword(stored.passwordHash, password)));
    } catch (error) {
      await throttle.release(attempt.reserved);
      if (!(error instanceof VerificationBusyError)) throw error;
      return { outcome: 'busy' };
    }
    if (!right) return { outcome: 'wrong' };
    await throttle.release(attempt.reserved);
    return { outcome: 'right' };
  }

  /**
   * Sets a new password once the current one is confirmed, ends the user's other sessions and
   * audits it. Returns the user as changed (its new stamp keeps `keepSessionId` signed in).
   */
  async change(
    actor: DashboardActor,
    current: string,
    next: string,
    keepSessionId: string,
  ): Promise<{ outcome: 'changed'; user: DashboardUser } | Exclude<PasswordCheck, { outcome: 'right' }>> {
    const check = await this.confirm(actor.user, current);
    if (check.outcome !== 'right') return check;
    const user = await setPasswordHash(this.deps.db, actor.user.email, await hashPassword(next));
    if (!user) return { outcome: 'wrong' };
    await this.deps.sessions.endOthers({ sessionId: keepSessionId, userId: user.id });
    await this.deps.audit.recordBy(actor, 'password.change');
    return { outcome: 'changed', user };
  }
}
