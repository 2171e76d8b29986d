import {
  failedSignInsSinceLastSignIn,
  listAudit,
  recordAudit,
  type AuditEntry,
  type FailedSignIns,
  type NewAuditEntry,
} from '../../shared/audit/audit.repository';
import type { DashboardUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import type { AuditAction } from '../../shared/domain/audit-actions';
import type { Environment } from '../../shared/domain/environment';
import type { CountryCode } from '../../shared/geo/country';

/** Entries on one page of the audit log. */
export const AUDIT_PAGE_SIZE = 50;

/** A signed-in user acting in the dashboard, with the client's country (the address is never kept). */
export interface DashboardActor {
  user: DashboardUser;
  country: CountryCode | null;
}

/** An account's audit log: what its users did in the dashboard, and the key changes made for it. */
export class AuditLog {
  constructor(private readonly db: Db) {}

  record(entry: NewAuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Writes what `actor` just did, to their own account's log. */
  recordBy(actor: DashboardActor, action: AuditAction, key?: { id: string; environment: Environment }): Promise<void> {
    return this.record({
      accountId: actor.user.accountId,
      actor: actor.user.email,
      action,
      keyId: key?.id,
      environment: key?.environment,
      country: actor.country,
    });
  }

  /** One page of the account's entries, newest first; `beforeId` pages back. */
  page(accountId: string, beforeId?: string): Promise<AuditEntry[]> {
    return listAudit(this.db, accountId, AUDIT_PAGE_SIZE, beforeId);
  }

  /** Failed and refused sign-ins as `user` since their previous sign-in: read before recording the next one. */
  failedSignInsSince(user: Pick<DashboardUser, 'accountId' | 'email'>): Promise<FailedSignIns> {
    return failedSignInsSinceLastSignIn(this.db, { accountId: user.accountId, actor: user.email });
  }
}
