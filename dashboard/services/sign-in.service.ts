import type { FailedSignIns } from '../../shared/audit/audit.repository';
import { dummyPasswordHash, verifyPassword } from '../../shared/dashboard-users/password';
import { findUserForSignIn, type DashboardUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import type { CountryCode } from '../../shared/geo/country';
import type { SignInSubject, SignInThrottle } from '../auth/sign-in-throttle';
import { VerificationBusyError, type VerificationGate } from '../auth/verification-gate';
import type { AuditLog } from './audit-log.service';

export interface SignInsDeps {
  db: Db;
  /** Attempts per email and client address, or per remembered device. */
  throttle: SignInThrottle;
  /** The cap on password verifications at once. */
  verifications: VerificationGate;
  /** Where sign-ins, failed and refused ones included, are recorded. */
  audit: AuditLog;
}

/** What came of a sign-in attempt. */
export type SignInAttempt =
  /** Refused by the throttle before anything was looked up. */
  | { outcome: 'throttled'; retryAfterSeconds: number }
  /** No turn to verify the password in time: not counted against the allowance. */
  | { outcome: 'busy' }
  /** An unknown email (user null) or a wrong password: counted as a failure. */
  | { outcome: 'wrong'; user: DashboardUser | null }
  | { outcome: 'signed-in'; user: DashboardUser; failedSignIns: FailedSignIns };

/**
 * Dashboard sign-ins: checks an email and password under the sign-in throttle and the
 * verification gate, and records sign-ins and failed or refused attempts in the audit log.
 */
export class SignIns {
  constructor(private readonly deps: SignInsDeps) {}

  /** Every verification turn taken and the queue full: an attempt now would be refused. */
  get saturated(): boolean {
    return this.deps.verifications.saturated;
  }

  /**
   * Reserves an attempt for `subject`, then verifies the password of `email` (null: not a valid
   * email). A right password gives its reservation back, a wrong one keeps it as the failure.
   */
  async attempt(email: string | null, password: string, subject: SignInSubject): Promise<SignInAttempt> {
    const { throttle, verifications, db } = this.deps;
    const attempt = await throttle.reserve(subject);
    if ('retryAfterSeconds' in attempt) return { outcome: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds };
    const user = email !== null ? await findUserForSignIn(db, email) : null;
    let valid: boolean;
    try {
      // Unknown emails are checked against a dummy hash so both failures take as long.
      const passwordHash = user?.passwordHash ?? (await dummyPasswordHash());
      valid = await verifications.run(() => verifyPassword(passwordHash, password));
    } catch (error) {
      await throttle.release(attempt.reserved);
      if (!(error instanceof VerificationBusyError)) throw error;
      return { outcome: 'busy' };
    }
    if (!user || !valid) return { outcome: 'wrong', user };
    await throttle.release(attempt.reserved);
    return { outcome: 'signed-in', user, failedSignIns: await this.deps.audit.failedSignInsSince(user) };
  }

  /** Records a sign-in that succeeded. */
  recordSignIn(user: DashboardUser, country: CountryCode | null): Promise<void> {
    return this.deps.audit.recordBy({ user, country }, 'session.sign-in');
  }

  /**
   * Records a failed or refused attempt on a known email (`who`: the user, or the email to look
   * up); nothing for an unknown one. Failures are few (the throttle allows 5 per window), but
   * refusals are as many as an attacker sends: only the first of each user's window is written.
   */
  async recordAttempt(
    who: DashboardUser | string,
    action: 'session.sign-in-failed' | 'session.sign-in-refused',
    country: CountryCode | null,
  ): Promise<void> {
    const user = typeof who === 'string' ? await findUserForSignIn(this.deps.db, who) : who;
    if (!user) return;
    if (action === 'session.sign-in-failed') return this.deps.audit.recordBy({ user, country }, action);
    const { throttle } = this.deps;
    if (!(await throttle.claimRefusalEntry(user.id))) return;
    try {
      await this.deps.audit.recordBy({ user, country }, action);
    } catch (error) {
      await throttle.releaseRefusalEntry(user.id).catch(() => undefined);
      throw error;
    }
  }
}
