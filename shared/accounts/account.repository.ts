import { sql } from 'kysely';
import type { Plan } from '../limits/plans';
import type { DbOrTx } from '../db/database';
import { randomBase62 } from '../util/random-base62';

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  restricted: boolean;
  /** An enterprise account's own cap on live keys; null: its plan's (shared/limits/plans.ts). */
  liveKeyLimit: number | null;
  createdAt: string;
}

type AccountRow = { id: string; name: string; plan: Plan; restricted: boolean; live_key_limit: number | null; created_at: Date };

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  restricted: row.restricted,
  liveKeyLimit: row.live_key_limit,
  createdAt: new Date(row.created_at).toISOString(),
});

const newAccountId = () => `acct_${randomBase62(16)}`;

/** An account is addressed by its id (acct_…) or its unique name. */
export async function findAccount(db: DbOrTx, ref: string): Promise<Account | null> {
  const row = await db
    .selectFrom('accounts')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
    .orderBy(sql`id = ${ref}`, 'desc')
    .executeTakeFirst();
  return row ? toAccount(row) : null;
}

export async function createAccount(db: DbOrTx, name: string, plan: Plan): Promise<Account> {
  const row = await db.insertInto('accounts').values({ id: newAccountId(), name, plan }).returningAll().executeTakeFirstOrThrow();
  return toAccount(row);
}

/** The account named `ref`, created with plan starter when it does not exist. */
export async function findOrCreateAccount(db: DbOrTx, ref: string): Promise<Account> {
  const existing = await findAccount(db, ref);
  if (existing) return existing;
  await db
    .insertInto('accounts')
    .values({ id: newAccountId(), name: ref, plan: 'starter' })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const account = await findAccount(db, ref);
  if (!account) throw new Error(`account ${ref} could not be created`);
  return account;
}

export async function listAccounts(db: DbOrTx): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toAccount);
}

/**
 * Locks the account's row until the transaction ends, so that checks of what it holds (its
 * live keys against its cap) and the change they allow are one step for concurrent requests.
 */
export async function lockAccount(tx: DbOrTx, accountId: string): Promise<void> {
  await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/** Sets the plan and the live-key cap (kept for enterprise only); moves the credentials watermark. */
export async function setPlan(db: DbOrTx, accountId: string, plan: Plan, liveKeyLimit: number | null): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ plan, live_key_limit: plan === 'enterprise' ? liveKeyLimit : null, updated_at: sql`clock_timestamp()` })
    .where('id', '=', accountId)
    .execute();
}

export async function setRestricted(db: DbOrTx, accountId: string, restricted: boolean): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ restricted, updated_at: sql`clock_timestamp()` })
    .where('id', '=', accountId)
    .execute();
}
