import {
  auditActors,
  auditedKeys,
  failedSignInsSinceLastSignIn,
  listAudit,
  recordAudit,
  type AuditedKey,
  type AuditEntry,
  type AuditFilter,
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

/** Entries read at a time for an export: it is written as it is read, never held whole. */
const EXPORT_BATCH = 1000;

/** Actors offered by the actor filter. */
const ACTOR_CHOICES = 200;

/** What the filters offer: the log's actors and keys. */
export interface AuditChoices {
  actors: string[];
  keys: AuditedKey[];
}

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

  /** One page of the account's entries matching `filter`, newest first; `beforeId` (an entry's id) pages back. */
  page(accountId: string, { beforeId, filter = {} }: { beforeId?: string; filter?: AuditFilter } = {}): Promise<AuditEntry[]> {
    return listAudit(this.db, accountId, AUDIT_PAGE_SIZE, beforeId, filter);
  }

  /** Every entry of the account matching `filter`, newest first, a batch at a time. */
  async *all(accountId: string, filter: AuditFilter = {}): AsyncGenerator<AuditEntry[]> {
    let before: string | undefined;
    for (;;) {
      const batch = await listAudit(this.db, accountId, EXPORT_BATCH, before, filter);
      if (batch.length > 0) yield batch;
      if (batch.length < EXPORT_BATCH) return;
      before = batch[batch.length - 1]!.id;
    }
  }

  /** The actors and keys the account's log names, for the filters. */
  async choices(accountId: string): Promise<AuditChoices> {
    const [actors, keys] = await Promise.all([auditActors(this.db, accountId, ACTOR_CHOICES), auditedKeys(this.db, accountId)]);
    return { actors, keys };
  }

  /** Failed and refused sign-ins as `user` since their previous sign-in: read before recording the next one. */
  failedSignInsSince(user: Pick<DashboardUser, 'accountId' | 'email'>): Promise<FailedSignIns> {
    return failedSignInsSinceLastSignIn(this.db, { accountId: user.accountId, actor: user.email });
  }
}
