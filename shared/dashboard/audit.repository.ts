import type { DbOrTx } from '../db/database';
import type { Environment } from '../domain/environment';
import type { CountryCode } from '../geo/country';

/** What the audit log records: every key action, acknowledged unusual pattern, sign-in and sign-out. */
export const AUDIT_ACTIONS = [
  'key.create',
  'key.revoke',
  'key.delete',
  'key.rotate',
  'pattern.acknowledge',
  'session.sign-in',
  'session.sign-in-failed',
  'session.sign-out',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  id: string;
  actor: string;
  action: AuditAction;
  keyId: string | null;
  environment: Environment | null;
  country: CountryCode | null;
  createdAt: string;
}

export interface NewAuditEntry {
  accountId: string;
  /** The signed-in user's email, or `operator (cli)`. */
  actor: string;
  action: AuditAction;
  keyId?: string;
  environment?: Environment;
  /** The client's country code only: the address itself is never stored. */
  country: CountryCode | null;
}

export async function recordAudit(db: DbOrTx, entry: NewAuditEntry): Promise<void> {
  await db
    .insertInto('dashboard_audit')
    .values({
      account_id: entry.accountId,
      actor: entry.actor,
      action: entry.action,
      key_id: entry.keyId ?? null,
      environment: entry.environment ?? null,
      country: entry.country,
    })
    .execute();
}

/** An account's entries, newest first; `beforeId` pages back. */
export async function listAudit(db: DbOrTx, accountId: string, limit: number, beforeId?: string): Promise<AuditEntry[]> {
  let query = db.selectFrom('dashboard_audit').selectAll().where('account_id', '=', accountId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  const rows = await query.orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: String(row.id),
    actor: row.actor,
    action: row.action,
    keyId: row.key_id,
    environment: row.environment,
    country: row.country,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}
