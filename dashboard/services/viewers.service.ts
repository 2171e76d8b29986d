import { findAccount, type Account } from '../../shared/accounts/account.repository';
import { findUserById, type DashboardUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import { countOpenAnomalies } from '../../shared/traffic/patterns/anomaly.repository';

/** Who a session belongs to, read again on every request. */
export class Viewers {
  constructor(private readonly db: Db) {}

  /**
   * The session's user and their account; null when either is gone or the password changed
   * since the session began (`stamp`: the user's updatedAt at sign-in).
   */
  async signedIn(userId: string, stamp: string | undefined): Promise<{ user: DashboardUser; account: Account } | null> {
    const user = await findUserById(this.db, userId);
    const account = user ? await findAccount(this.db, user.accountId) : null;
    return user && account && user.updatedAt === stamp ? { user, account } : null;
  }

  /** The account's unacknowledged unusual patterns, for the navigation's badge. */
  openPatterns(accountId: string): Promise<number> {
    return countOpenAnomalies(this.db, accountId);
  }
}
