import { sql } from 'kysely';
import { z } from 'zod';
import type { DbOrTx } from '../db/database';
import { randomBase62 } from './api-key';

export const PLANS = ['starter', 'pro', 'enterprise'] as const;
export const planSchema = z.enum(PLANS);
export type Plan = z.infer<typeof planSchema>;

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  restricted: boolean;
  createdAt: string;
}

const toAccount = (row: { id: string; name: string; plan: Plan; restricted: boolean; created_at: Date }): Account => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  restricted: row.restricted,
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

export async function setRestricted(db: DbOrTx, accountId: string, restricted: boolean): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ restricted, updated_at: sql`clock_timestamp()` })
    .where('id', '=', accountId)
    .execute();
}
