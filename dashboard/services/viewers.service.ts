import { findAccount, type Account } from '../../shared/accounts/account.repository';
import { accountRequiresTwoFactor } from '../../shared/dashboard-users/two-factor.repository';
import { findUserById, type DashboardUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import { countOpenAnomalies } from '../../shared/traffic/patterns/anomaly.repository';
import type { SessionRef, UserSessions } from './user-sessions.service';

export interface SignedIn {
  user: DashboardUser;
  account: Account;
  /** The account's owners require two-factor sign-in of every user. */
  requireTwoFactor: boolean;
  /** How long until the session ends however active (its absolute lifetime), ms. */
  remainingMs: number;
}

/** Who a session belongs to, read again on every request. */
export class Viewers {
  constructor(
    private readonly db: Db,
    private readonly sessions: UserSessions,
  ) {}

  /**
   * The session's user and their account; null when either is gone, the password changed since
   * the session began (`stamp`: the user's updatedAt at sign-in), or the session was ended
   * (signed out elsewhere, past its absolute lifetime).
   */
  async signedIn(session: SessionRef, stamp: string | undefined): Promise<SignedIn | null> {
    const user = await findUserById(this.db, session.userId);
    if (!user || user.updatedAt !== stamp) return null;
    const live = await this.sessions.check(session);
    const account = live ? await findAccount(this.db, user.accountId) : null;
    if (!live || !account) return null;
    return { user, account, requireTwoFactor: await accountRequiresTwoFactor(this.db, account.id), remainingMs: live.remainingMs };
  }

  /** A user by id (the code step of signing in, before the session is signed in). */
  user(userId: string): Promise<DashboardUser | null> {
    return findUserById(this.db, userId);
  }

  /** The account's unacknowledged unusual patterns, for the navigation's badge. */
  openPatterns(accountId: string): Promise<number> {
    return countOpenAnomalies(this.db, accountId);
  }
}
