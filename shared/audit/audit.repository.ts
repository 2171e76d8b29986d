import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import type { AuditAction } from '../domain/audit-actions';
import type { Environment } from '../domain/environment';
import type { CountryCode } from '../geo/country';

export interface AuditEntry {
  id: string;
  actor: string;
  action: AuditAction;
  keyId: string | null;
  environment: Environment | null;
  country: CountryCode | null;
  /** The user the action was done to, when not the actor (an operator's reset of their 2FA). */
  subject: string | null;
  createdAt: string;
}

export interface NewAuditEntry {
  accountId: string;
  /** The signed-in user's email, or `operator (cli)`. */
  actor: string;
  action: AuditAction;
  keyId?: string;
  environment?: Environment;
  /** The email of the user acted on, when not the actor. */
  subject?: string;
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
      subject: entry.subject ?? null,
    })
    .execute();
}

/** What a user is told at sign-in: attempts on their email that failed or were refused since their previous sign-in. */
export interface FailedSignIns {
  count: number;
  /** The latest one's time (ISO 8601) and country. */
  lastAt: string | null;
  lastCountry: CountryCode | null;
}

/**
 * Failed and refused sign-ins as `actor` in `accountId` after their previous successful sign-in
 * (all of them when there is none). Call it before recording the sign-in that asks.
 */
export async function failedSignInsSinceLastSignIn(
  db: DbOrTx,
  { accountId, actor }: { accountId: string; actor: string },
): Promise<FailedSignIns> {
  const previous = db
    .selectFrom('dashboard_audit')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('account_id', '=', accountId)
    .where('actor', '=', actor)
    .where('action', '=', 'session.sign-in');
  const rows = await db
    .selectFrom('dashboard_audit')
    .select(['created_at', 'country', sql<string>`count(*) over ()`.as('total')])
    .where('account_id', '=', accountId)
    .where('actor', '=', actor)
    .where('action', 'in', ['session.sign-in-failed', 'session.sign-in-refused'])
    .where((eb) => eb('id', '>', eb.fn.coalesce(previous, eb.val(0))))
    .orderBy('id', 'desc')
    .limit(1)
    .execute();
  const last = rows[0];
  return {
    count: Number(last?.total ?? 0),
    lastAt: last ? new Date(last.created_at).toISOString() : null,
    lastCountry: last?.country ?? null,
  };
}

/** An account's entries, newest first; `beforeId` pages back. */
export async function listAudit(db: DbOrTx, accountId: string, limit: number, beforeId?: string): Promise<AuditEntry[]> {
  let query = db.selectFrom('dashboard_audit').selectAll().where('account_id', '=', accountId);
  if (beforeId !== undefined) query = query.where('id', '<', Number(beforeId));
  const rows = await query.orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: String(row.id),
    actor: row.actor,
    action: row.action,
    keyId: row.key_id,
    environment: row.environment,
    country: row.country,
    subject: row.subject,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}
