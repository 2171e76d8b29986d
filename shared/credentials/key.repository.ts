import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../db/database';
import type { ApiKeys } from '../db/schema';
import type { Environment } from '../domain/environment';
import { type Scope } from './api-key';
import type { Plan } from '../limits/plans';
import { randomBase62 } from '../util/random-base62';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  environment: Environment;
  name: string;
  last4: string;
  scopes: Scope[];
  rateLimitRps: number | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  deletedAt: string | null;
  expiresAt: string | null;
  /** The key issued when this one was rotated (it works until expiresAt). */
  replacedBy: string | null;
  /** When the daily scan found this live key 90 days old: rotating it is due (shared/credentials/rotation-due.ts). */
  rotationDueAt: string | null;
}

/** What authentication needs about a key, joined with its account. */
export interface KeyCredential extends ApiKeyRecord {
  keyHash: Buffer;
  accountName: string;
  plan: Plan;
  restricted: boolean;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** An api_keys row as selected (with or without its account's columns joined). */
type KeyRow = Omit<Selectable<ApiKeys>, 'key_hash' | 'updated_at'>;

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    name: row.name,
    last4: row.last4,
    scopes: row.scopes as Scope[],
    rateLimitRps: row.rate_limit_rps,
    createdAt: iso(row.created_at)!,
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
    deletedAt: iso(row.deleted_at),
    expiresAt: iso(row.expires_at),
    replacedBy: row.replaced_by,
    rotationDueAt: iso(row.rotation_due_at),
  };
}

export const newKeyId = () => `key_${randomBase62(20)}`;

export interface NewKey {
  id: string;
  accountId: string;
  environment: Environment;
  name: string;
  keyHash: Buffer;
  last4: string;
  scopes: Scope[];
  rateLimitRps: number | null;
}

export async function insertKey(db: DbOrTx, key: NewKey): Promise<ApiKeyRecord> {
  const row = await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      account_id: key.accountId,
      environment: key.environment,
      name: key.name,
      key_hash: key.keyHash,
      last4: key.last4,
      scopes: key.scopes,
      rate_limit_rps: key.rateLimitRps,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

/** `forUpdate`: the row stays locked until the transaction ends, so changes of one key run one at a time. */
export async function findKeyById(db: DbOrTx, id: string, options: { forUpdate?: boolean } = {}): Promise<ApiKeyRecord | null> {
  const query = db.selectFrom('api_keys').selectAll().where('id', '=', id);
  const row = await (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
  return row ? toRecord(row) : null;
}

export async function listKeys(db: DbOrTx, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => toRecord(row));
}

/** The account's keys that hold a live-key place (holdsLiveKeyPlace of key-status.ts), counted in Postgres. */
export async function countLiveKeys(db: DbOrTx, accountId: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('environment', '=', 'live')
    .where('revoked_at', 'is', null)
    .where('deleted_at', 'is', null)
    .where('replaced_by', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Lowers the per-second overrides of an account's keys above `perSecond` to it; returns how many. */
export async function clampKeyRps(db: DbOrTx, accountId: string, perSecond: number): Promise<number> {
  const result = await db
    .updateTable('api_keys')
    .set({ rate_limit_rps: perSecond, updated_at: sql`clock_timestamp()` })
    .where('account_id', '=', accountId)
    .where('rate_limit_rps', '>', perSecond)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findCredentialByHash(db: DbOrTx, keyHash: Buffer): Promise<KeyCredential | null> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .selectAll('k')
    .select(['a.name as account_name', 'a.plan', 'a.restricted'])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) return null;
  return {
    ...toRecord(row),
    keyHash: row.key_hash,
    accountName: row.account_name,
    plan: row.plan,
    restricted: row.restricted,
  };
}

type KeyChange = { revoked_at?: Date; deleted_at?: Date; expires_at?: Date; replaced_by?: string };

export async function updateKey(db: DbOrTx, id: string, change: KeyChange): Promise<void> {
  await db
    .updateTable('api_keys')
    // clock_timestamp(): the watermark API instances poll must move past every earlier change.
    .set({ ...change, updated_at: sql`clock_timestamp()` })
    .where('id', '=', id)
    .execute();
}

/** Latest change to any key or account: API instances poll it to drop cached credentials. */
export async function credentialsWatermark(db: DbOrTx): Promise<string> {
  const result = await sql<{ mark: string | null }>`
    select greatest((select max(updated_at) from api_keys), (select max(updated_at) from accounts))::text as mark`.execute(db);
  return result.rows[0]?.mark ?? '';
}

export async function touchLastUsed(db: DbOrTx, usage: Map<string, Date>): Promise<void> {
  if (usage.size === 0) return;
  const values = sql.join([...usage].map(([id, at]) => sql`(${id}, ${at.toISOString()}::timestamptz)`));
  // last_used_at is bookkeeping: it does not bump updated_at, so caches stay warm.
  await sql`
    update api_keys as k set last_used_at = greatest(coalesce(k.last_used_at, v.at), v.at)
    from (values ${values}) as v(id, at) where k.id = v.id`.execute(db);
}
