import {
  accountRequiresTwoFactor,
  claimTimeStep,
  disableTwoFactor,
  enableTwoFactor,
  findTwoFactor,
  setAccountRequiresTwoFactor,
  unusedRecoveryCodes,
  useRecoveryCode,
} from '../../shared/dashboard-users/two-factor.repository';
import {
  generateRecoveryCode,
  hashRecoveryCode,
  looksLikeRecoveryCode,
  RECOVERY_CODE_COUNT,
} from '../../shared/dashboard-users/recovery-codes';
import type { DashboardUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import type { SignInThrottle } from '../auth/sign-in-throttle';
import type { TotpCodes } from '../auth/totp';
import type { AuditLog, DashboardActor } from './audit-log.service';
import type { PasswordCheck, Passwords } from './passwords.service';
import type { UserSessions } from './user-sessions.service';

export interface TwoFactorDeps {
  db: Db;
  totp: TotpCodes;
  /** Counts code attempts per user (its `code` sets). */
  throttle: SignInThrottle;
  passwords: Passwords;
  sessions: UserSessions;
  audit: AuditLog;
}

/** An enrolment begun: the secret to show (as text and QR code) and to keep, sealed, in the session until confirmed. */
export interface Enrolment {
  secret: string;
  sealed: string;
  uri: string;
  qrSvg: string;
}

/** What came of a code typed at sign-in or to confirm enrolment. */
export type CodeCheck =
  | { outcome: 'accepted'; recoveryCode: boolean }
  /** Wrong, of another time, already used, or a recovery code used before. */
  | { outcome: 'wrong' }
  | { outcome: 'throttled'; retryAfterSeconds: number };

/**
 * Two-factor sign-in with TOTP: enrolment (confirmed by a code before it is on), the code step
 * of sign-in (each time-step's code taken once, recovery codes once each, at most 5 wrong
 * attempts per user in 15 minutes), turning it off (with the password) and an account's
 * requirement of it. Every change ends the user's other sessions and is audited.
 */
export class TwoFactor {
  constructor(private readonly deps: TwoFactorDeps) {}

  async begin(user: DashboardUser): Promise<Enrolment> {
    const { totp } = this.deps;
    const secret = totp.newSecret();
    return this.resume(user, totp.seal(secret));
  }

  /** The enrolment kept (sealed) in the session, shown again (a reload, a wrong code). */
  async resume(user: DashboardUser, sealed: string): Promise<Enrolment> {
    const { totp } = this.deps;
    const secret = totp.open(sealed);
    const uri = totp.uri(secret, user.email);
    return { secret, sealed, uri, qrSvg: await totp.qrSvg(uri) };
  }

  /**
   * Turns 2FA on when `code` is the enrolment secret's current one; returns the recovery codes
   * to show once (only their hashes are kept), or why not.
   */
  async confirm(
    actor: DashboardActor,
    sealed: string,
    code: string,
    keepSessionId: string,
  ): Promise<{ outcome: 'enabled'; recoveryCodes: string[] } | { outcome: 'already-on' } | Exclude<CodeCheck, { outcome: 'accepted' }>> {
    const { totp, throttle, db } = this.deps;
    const attempt = await throttle.reserveForUser('code', actor.user.id);
    if ('retryAfterSeconds' in attempt) return { outcome: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds };
    const step = totp.stepOf(totp.open(sealed), code);
    if (step === null) return { outcome: 'wrong' };
    await throttle.release(attempt.reserved);
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, generateRecoveryCode);
    // The confirming code's step counts as used: it cannot sign anyone in afterwards.
    const codeHashes = recoveryCodes.map(hashRecoveryCode);
    if (!(await enableTwoFactor(db, actor.user.id, { sealedSecret: sealed, step, codeHashes }))) return { outcome: 'already-on' };
    await this.deps.sessions.endOthers({ sessionId: keepSessionId, userId: actor.user.id });
    await this.deps.audit.recordBy(actor, 'two-factor.enable');
    return { outcome: 'enabled', recoveryCodes };
  }

  /** The code step of signing in: a current TOTP code not used before, or an unused recovery code. */
  async check(user: DashboardUser, code: string): Promise<CodeCheck> {
    const { totp, throttle, db } = this.deps;
    const attempt = await throttle.reserveForUser('code', user.id);
    if ('retryAfterSeconds' in attempt) return { outcome: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds };
    const state = await findTwoFactor(db, user.id);
    if (!state) return { outcome: 'wrong' };
    let accepted = false;
    const recoveryCode = looksLikeRecoveryCode(code);
    if (recoveryCode) {
      accepted = await useRecoveryCode(db, { userId: user.id, codeHash: hashRecoveryCode(code) });
    } else {
      const step = totp.stepOf(totp.open(state.sealedSecret), code);
      // A step at or before the last one used is a replay (or an older code): refused.
      accepted = step !== null && (await claimTimeStep(db, user.id, step));
    }
    if (!accepted) return { outcome: 'wrong' };
    await throttle.release(attempt.reserved);
    return { outcome: 'accepted', recoveryCode };
  }

  /** Turns 2FA off once the password is confirmed; ends the user's other sessions. */
  async disable(
    actor: DashboardActor,
    password: string,
    keepSessionId: string,
  ): Promise<{ outcome: 'disabled' } | Exclude<PasswordCheck, { outcome: 'right' }>> {
    const check = await this.deps.passwords.confirm(actor.user, password);
    if (check.outcome !== 'right') return check;
    await disableTwoFactor(this.deps.db, actor.user.id);
    await this.deps.sessions.endOthers({ sessionId: keepSessionId, userId: actor.user.id });
    await this.deps.audit.recordBy(actor, 'two-factor.disable');
    return { outcome: 'disabled' };
  }

  /** What the two-factor page shows of the user and their account. */
  async status(user: DashboardUser): Promise<{ enabled: boolean; unusedRecoveryCodes: number; accountRequires: boolean }> {
    const { db } = this.deps;
    return {
      enabled: user.twoFactorSince !== null,
      unusedRecoveryCodes: user.twoFactorSince !== null ? await unusedRecoveryCodes(db, user.id) : 0,
      accountRequires: await accountRequiresTwoFactor(db, user.accountId),
    };
  }

  /** An owner requires 2FA of every user of the account (or no longer does). */
  async setRequired(actor: DashboardActor, required: boolean): Promise<void> {
    await setAccountRequiresTwoFactor(this.deps.db, actor.user.accountId, required);
    await this.deps.audit.recordBy(actor, required ? 'account.two-factor-required' : 'account.two-factor-optional');
  }

  /** Records a sign-in that used a recovery code, so the user sees how many are left being spent. */
  recordRecoveryCodeUsed(actor: DashboardActor): Promise<void> {
    return this.deps.audit.recordBy(actor, 'two-factor.recovery-code-used');
  }
}
