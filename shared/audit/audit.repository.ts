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
  /** The key's name and last 4 characters: the key's own while it exists, else as they were when written. */
  keyName: string | null;
  keyLast4: string | null;
  /** A rotation's new key (keyId is the one rotated out). */
  newKeyId: string | null;
  newKeyName: string | null;
  newKeyLast4: string | null;
  environment: Environment | null;
  country: CountryCode | null;
  /** The user the action was done to, when not the actor (an operator's reset of their 2FA). */
  subject: string | null;
  createdAt: string;
}

/** What the audit log is narrowed to; every field optional. */
export interface AuditFilter {
  /** Exactly this actor (an email, or `operator (cli)`). */
  actor?: string;
  action?: AuditAction;
  /** Entries naming this key, either key of a rotation included. */
  keyId?: string;
  /** Written at or after `from` and before `to`. */
  from?: Date;
  to?: Date;
}

/** A key the account's log names, for the key filter. */
export interface AuditedKey {
  id: string;
  name: string | null;
  last4: string | null;
  environment: Environment | null;
}

export interface NewAuditEntry {
  accountId: string;
  /** The signed-in user's email, or `operator (cli)`. */
  actor: string;
  action: AuditAction;
  /** The key acted on; its name and last 4 characters are stored with the entry, so it is named after it is gone. */
  keyId?: string;
  /** A rotation's new key, named in the same way. */
  newKeyId?: string;
  environment?: Environment;
  /** What was acted on when it is not a key: the email of a user (not the actor), a webhook endpoint's URL. */
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
      key_name: entry.keyId ? sql<string | null>`(select name from api_keys where id = ${entry.keyId})` : null,
      key_last4: entry.keyId ? sql<string | null>`(select last4 from api_keys where id = ${entry.keyId})` : null,
      new_key_id: entry.newKeyId ?? null,
      new_key_name: entry.newKeyId ? sql<string | null>`(select name from api_keys where id = ${entry.newKeyId})` : null,
      new_key_last4: entry.newKeyId ? sql<string | null>`(select last4 from api_keys where id = ${entry.newKeyId})` : null,
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

/** An account's entries matching `filter`, newest first; `beforeId` pages back. */
export async function listAudit(
  db: DbOrTx,
  accountId: string,
  limit: number,
  beforeId?: string,
  filter: AuditFilter = {},
): Promise<AuditEntry[]> {
  let query = db
    .selectFrom('dashboard_audit as a')
    // Joined on the account too: an entry never shows another account's key.
    .leftJoin('api_keys as k', (join) => join.onRef('k.id', '=', 'a.key_id').onRef('k.account_id', '=', 'a.account_id'))
    .leftJoin('api_keys as n', (join) => join.onRef('n.id', '=', 'a.new_key_id').onRef('n.account_id', '=', 'a.account_id'))
    .select(['a.id', 'a.actor', 'a.action', 'a.key_id', 'a.new_key_id', 'a.environment', 'a.country', 'a.subject', 'a.created_at'])
    .select((eb) => [
      eb.fn.coalesce('k.name', 'a.key_name').as('key_name'),
      eb.fn.coalesce('k.last4', 'a.key_last4').as('key_last4'),
      eb.fn.coalesce('n.name', 'a.new_key_name').as('new_key_name'),
      eb.fn.coalesce('n.last4', 'a.new_key_last4').as('new_key_last4'),
    ])
    .where('a.account_id', '=', accountId);
  if (beforeId !== undefined) query = query.where('a.id', '<', Number(beforeId));
  if (filter.actor !== undefined) query = query.where('a.actor', '=', filter.actor);
  if (filter.action !== undefined) query = query.where('a.action', '=', filter.action);
  const keyId = filter.keyId;
  if (keyId !== undefined) query = query.where((eb) => eb.or([eb('a.key_id', '=', keyId), eb('a.new_key_id', '=', keyId)]));
  if (filter.from !== undefined) query = query.where('a.created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('a.created_at', '<', filter.to);
  const rows = await query.orderBy('a.id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: String(row.id),
    actor: row.actor,
    action: row.action,
    keyId: row.key_id,
    keyName: row.key_name,
    keyLast4: row.key_last4,
    newKeyId: row.new_key_id,
    newKeyName: row.new_key_name,
    newKeyLast4: row.new_key_last4,
    environment: row.environment,
    country: row.country,
    subject: row.subject,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}

/** The actors of an account's entries, for the actor filter (at most `limit`, by name). */
export async function auditActors(db: DbOrTx, accountId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('dashboard_audit')
    .select('actor')
    .distinct()
    .where('account_id', '=', accountId)
    .orderBy('actor')
    .limit(limit)
    .execute();
  return rows.map((row) => row.actor);
}

/** Every key an account's entries name (either key of a rotation), for the key filter. */
export async function auditedKeys(db: DbOrTx, accountId: string): Promise<AuditedKey[]> {
  const { rows } = await sql<AuditedKey>`
    select distinct on (x.id) x.id, coalesce(k.name, x.name) as name, coalesce(k.last4, x.last4) as last4, x.environment
    from (
      select key_id as id, key_name as name, key_last4 as last4, environment from dashboard_audit
        where account_id = ${accountId} and key_id is not null
      union all
      select new_key_id, new_key_name, new_key_last4, environment from dashboard_audit
        where account_id = ${accountId} and new_key_id is not null
    ) x
    left join api_keys k on k.id = x.id and k.account_id = ${accountId}
    order by x.id, x.name nulls last`.execute(db);
  return rows;
}
