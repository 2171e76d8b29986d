import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../db/database';
import { archivedTables, PARTITIONED_TABLES } from '../db/partitions';
import type { Profiles } from '../db/schema';
import type { Tenant } from '../domain/environment';
import { pinsSchema } from '../domain/arms';
import { readEngineState } from '../domain/engine/engine';
import type { EngineState } from '../domain/engine/state';
import { compareStrings } from '../util/compare';
import type { StoredProfile } from './profile';
import { stateJson, withStateJson } from './profile-json';

const COLUMNS = ['user_id', 'generation', 'state', 'pins', 'profile_version', 'interaction_count', 'updated_at'] as const;

type ProfileRow = Pick<Selectable<Profiles>, (typeof COLUMNS)[number]>;

/** What was wrong with a user's stored state that was replaced by a fresh one (for the operator: no values). */
export type OnUnreadableState = (userId: string, issue: string) => void;

/** A row as a profile: its learner state read into the engine's type here, once (a fresh one when unreadable). */
function toProfile(row: ProfileRow, onUnreadable?: OnUnreadableState): StoredProfile {
  return {
    userId: row.user_id,
    generation: row.generation,
    version: row.profile_version,
    state: readEngineState(row.state, onUnreadable && ((issue) => onUnreadable(row.user_id, issue))),
    pins: pinsSchema.parse(row.pins ?? {}),
    interactionCount: row.interaction_count,
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

const byTenant = (tenant: Tenant) => ({ account_id: tenant.accountId, environment: tenant.environment });

/** A user's profile; a state that cannot be read comes back fresh, and `onUnreadable` hears of it. */
export async function findProfile(
  db: DbOrTx,
  tenant: Tenant,
  userId: string,
  forUpdate = false,
  onUnreadable?: OnUnreadableState,
): Promise<StoredProfile | null> {
  let query = db
    .selectFrom('profiles')
    .select(COLUMNS)
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .where('user_id', '=', userId);
  if (forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? toProfile(row, onUnreadable) : null;
}

/**
 * Locks the rows of these users in a stable order (no deadlocks between workers). A state that
 * cannot be read is replaced by a fresh one, and `onUnreadable` hears of it.
 */
export async function lockProfiles(
  db: DbOrTx,
  tenant: Tenant,
  userIds: string[],
  onUnreadable?: OnUnreadableState,
): Promise<Map<string, StoredProfile>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('profiles')
    .select(COLUMNS)
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .where('user_id', 'in', userIds)
    .orderBy('user_id')
    .forUpdate()
    .execute();
  return new Map(rows.map((row) => [row.user_id, toProfile(row, onUnreadable)]));
}

/** Inserts profiles that do not exist yet; existing rows are left as they are. */
export async function insertProfilesIfMissing(db: DbOrTx, tenant: Tenant, profiles: StoredProfile[]): Promise<void> {
  if (profiles.length === 0) return;
  const sorted = [...profiles].sort((a, b) => compareStrings(a.userId, b.userId));
  await db
    .insertInto('profiles')
    .values(
      sorted.map((p) => ({
        ...byTenant(tenant),
        user_id: p.userId,
        generation: p.generation,
        state: stateJson(p.state),
        pins: JSON.stringify(p.pins),
        profile_version: p.version,
        interaction_count: p.interactionCount,
        updated_at: p.updatedAt,
      })),
    )
    .onConflict((oc) => oc.columns(['account_id', 'environment', 'user_id']).doNothing())
    .execute();
}

/**
 * Inserts new profiles (version 0, no pins) that all start from the same `state`, sent once,
 * unless a row exists already.
 */
export async function insertNewProfiles(
  db: DbOrTx,
  tenant: Tenant,
  users: Array<{ userId: string; generation: string }>,
  state: EngineState,
  now: Date,
): Promise<void> {
  if (users.length === 0) return;
  const sorted = [...users].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  await sql`
    insert into profiles (account_id, environment, user_id, generation, state, pins, profile_version, interaction_count, updated_at)
    select ${tenant.accountId}, ${tenant.environment}, u.user_id, u.generation, ${stateJson(state)}::json, '{}'::jsonb, 0, 0, ${now.toISOString()}::timestamptz
    from unnest(${sorted.map((u) => u.userId)}::text[], ${sorted.map((u) => u.generation)}::text[]) with ordinality as u(user_id, generation, n)
    order by u.n
    on conflict (account_id, environment, user_id) do nothing`.execute(db);
}

/** Writes each profile's own state, pins, version, count and time, in one statement. */
export async function updateProfiles(db: DbOrTx, tenant: Tenant, profiles: StoredProfile[]): Promise<void> {
  if (profiles.length === 0) return;
  const rows = profiles.map((p) =>
    withStateJson(
      { user_id: p.userId, pins: p.pins, version: p.version, interaction_count: p.interactionCount, updated_at: p.updatedAt },
      p.state,
    ),
  );
  await sql`
    update profiles as p set state = v.state, pins = v.pins, profile_version = v.version,
      interaction_count = v.interaction_count, updated_at = v.updated_at
    from json_to_recordset(${`[${rows.join(',')}]`}::json)
      as v(user_id text, state json, pins jsonb, version int, interaction_count int, updated_at timestamptz)
    where p.account_id = ${tenant.accountId} and p.environment = ${tenant.environment} and p.user_id = v.user_id`.execute(db);
}

export interface VersionRow {
  userId: string;
  version: number;
  cause: 'outcome' | 'manual' | 'reset';
  changed: string[];
  createdAt: string;
}

export async function insertVersions(db: DbOrTx, tenant: Tenant, rows: VersionRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((row) => ({
    user_id: row.userId,
    profile_version: row.version,
    cause: row.cause,
    changed: row.changed,
    created_at: row.createdAt,
  }));
  await sql`
    insert into profile_versions (account_id, environment, user_id, profile_version, cause, changed, created_at)
    select ${tenant.accountId}, ${tenant.environment}, v.user_id, v.profile_version, v.cause, v.changed, v.created_at
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb)
      as v(user_id text, profile_version int, cause text, changed jsonb, created_at timestamptz)`.execute(db);
}

/**
 * A user's versions, newest first. No time bound to prune months by: each month's partition
 * answers from its key's index and gives at most `limit + 1` rows.
 */
export function versionsQuery(db: DbOrTx, tenant: Tenant, userId: string, limit: number, beforeVersion?: number) {
  let query = db
    .selectFrom('profile_versions')
    .select(['profile_version', 'cause', 'changed', 'created_at'])
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .where('user_id', '=', userId)
    .orderBy('profile_version', 'desc')
    .limit(limit + 1);
  if (beforeVersion !== undefined) query = query.where('profile_version', '<', beforeVersion);
  return query;
}

export async function listVersions(
  db: DbOrTx,
  tenant: Tenant,
  userId: string,
  limit: number,
  beforeVersion?: number,
): Promise<{ data: Array<Omit<VersionRow, 'userId'>>; hasMore: boolean }> {
  const rows = await versionsQuery(db, tenant, userId, limit, beforeVersion).execute();
  return {
    data: rows.slice(0, limit).map((row) => ({
      version: row.profile_version,
      cause: row.cause,
      changed: row.changed,
      createdAt: new Date(row.created_at).toISOString(),
    })),
    hasMore: rows.length > limit,
  };
}

/** What an erasure removed that lives on outside Postgres. */
export interface Erased {
  /** The erased profile's generation (null: there was no profile). */
  generation: string | null;
  /** The requestIds of the user's outcomes in the attached months: their fingerprints in Redis go too. */
  outcomeRequestIds: string[];
}

/**
 * Right to erasure: the profile, its versions, decisions and outcomes (archived months
 * included); records the erasure under the user's keyed hash. Call inside a transaction
 * holding lockUsers for this user.
 */
export async function eraseUser(db: DbOrTx, user: { tenant: Tenant; userId: string; userHash: string }, now: Date): Promise<Erased> {
  const { tenant, userId, userHash } = user;
  const outcomeRequestIds: string[] = [];
  const erased = await db
    .deleteFrom('profiles')
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .where('user_id', '=', userId)
    .returning('generation')
    .executeTakeFirst();
  for (const table of PARTITIONED_TABLES) {
    const userRows = db
      .deleteFrom(table)
      .where('account_id', '=', tenant.accountId)
      .where('environment', '=', tenant.environment)
      .where('user_id', '=', userId);
    if (table === 'outcomes') outcomeRequestIds.push(...(await userRows.returning('request_id').execute()).map((row) => row.request_id));
    else await userRows.execute();
    // Detached months are still this service's data: the user is erased from them too.
    for (const archived of await archivedTables(db, table)) {
      await sql`delete from ${sql.table(archived)} where account_id = ${tenant.accountId}
        and environment = ${tenant.environment} and user_id = ${userId}`.execute(db);
    }
  }
  await db
    .insertInto('erasures')
    .values({ ...byTenant(tenant), user_hash: userHash, erased_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'environment', 'user_hash']).doUpdateSet({ erased_at: now }))
    .execute();
  return { generation: erased?.generation ?? null, outcomeRequestIds };
}
