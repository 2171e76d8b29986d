import { sql } from 'kysely';
import { z } from 'zod';
import type { DbOrTx } from '../db/database';
import { randomBase62 } from '../util/random-base62';

export const ROLES = ['owner', 'viewer'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

export interface DashboardUser {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  createdAt: string;
  /** Moves when the password changes: sessions begun before it end. */
  updatedAt: string;
  /** When two-factor sign-in was turned on; null while it is off. */
  twoFactorSince: string | null;
}

type UserRow = {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  created_at: Date;
  updated_at: Date;
  totp_enabled_at: Date | null;
};

const toUser = (row: UserRow): DashboardUser => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  role: row.role,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
  twoFactorSince: row.totp_enabled_at ? new Date(row.totp_enabled_at).toISOString() : null,
});

const COLUMNS = ['id', 'account_id', 'email', 'role', 'created_at', 'updated_at', 'totp_enabled_at'] as const;

export async function createUser(
  db: DbOrTx,
  user: { accountId: string; email: string; role: Role; passwordHash: string },
): Promise<DashboardUser | null> {
  const row = await db
    .insertInto('dashboard_users')
    .values({
      id: `usr_${randomBase62(16)}`,
      account_id: user.accountId,
      email: user.email,
      role: user.role,
      password_hash: user.passwordHash,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

export async function findUserById(db: DbOrTx, id: string): Promise<DashboardUser | null> {
  const row = await db.selectFrom('dashboard_users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? toUser(row) : null;
}

/** The user and their password hash, for signing in. */
export async function findUserForSignIn(db: DbOrTx, email: string): Promise<(DashboardUser & { passwordHash: string }) | null> {
  const row = await db
    .selectFrom('dashboard_users')
    .select([...COLUMNS, 'password_hash'])
    .where('email', '=', email)
    .executeTakeFirst();
  return row ? { ...toUser(row), passwordHash: row.password_hash } : null;
}

export async function listUsers(db: DbOrTx, accountId: string): Promise<DashboardUser[]> {
  const rows = await db.selectFrom('dashboard_users').select(COLUMNS).where('account_id', '=', accountId).orderBy('email').execute();
  return rows.map(toUser);
}

/** Returns the user deleted, or null when there was none with that email. */
export async function deleteUser(db: DbOrTx, email: string): Promise<DashboardUser | null> {
  const row = await db.deleteFrom('dashboard_users').where('email', '=', email).returning(COLUMNS).executeTakeFirst();
  return row ? toUser(row) : null;
}

export async function setPasswordHash(db: DbOrTx, email: string, passwordHash: string): Promise<DashboardUser | null> {
  const row = await db
    .updateTable('dashboard_users')
    .set({ password_hash: passwordHash, updated_at: sql`clock_timestamp()` })
    .where('email', '=', email)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

/**
 * Locks the account's row for the rest of the transaction: every change of its members' roles
 * takes it first, so two of them (two owners demoting each other) run one after the other and
 * the second sees the first's result.
 */
export async function lockAccountMembers(tx: DbOrTx, accountId: string): Promise<void> {
  await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

export async function countOwners(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('dashboard_users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A user as their account names them: one object, so the two ids cannot swap. */
export interface AccountUserRef {
  accountId: string;
  userId: string;
}

/** The account's user `userId`, or null: a user of another account is never found by it. */
export async function findAccountUser(db: DbOrTx, { accountId, userId }: AccountUserRef): Promise<DashboardUser | null> {
  const row = await db
    .selectFrom('dashboard_users')
    .select(COLUMNS)
    .where('id', '=', userId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

export async function setRole(db: DbOrTx, id: string, role: Role): Promise<void> {
  await db.updateTable('dashboard_users').set({ role }).where('id', '=', id).execute();
}

export async function deleteUserById(db: DbOrTx, id: string): Promise<void> {
  await db.deleteFrom('dashboard_users').where('id', '=', id).execute();
}

/** When each of the account's users last signed in, by email, from the audit log's sign-ins. */
export async function lastSignIns(db: DbOrTx, accountId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('dashboard_audit')
    .select(['actor', (eb) => eb.fn.max('created_at').as('at')])
    .where('account_id', '=', accountId)
    .where('action', '=', 'session.sign-in')
    .groupBy('actor')
    .execute();
  return new Map(rows.map((row) => [row.actor, new Date(row.at).toISOString()]));
}
