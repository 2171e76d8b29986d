import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';

/** A user's two-factor state: the sealed TOTP secret and the last time-step a code was accepted for. */
export interface TwoFactorState {
  sealedSecret: string;
  lastStep: number | null;
}

export async function findTwoFactor(db: DbOrTx, userId: string): Promise<TwoFactorState | null> {
  const row = await db
    .selectFrom('dashboard_users')
    .select(['totp_secret', 'totp_last_step'])
    .where('id', '=', userId)
    .where('totp_enabled_at', 'is not', null)
    .executeTakeFirst();
  return row?.totp_secret
    ? { sealedSecret: row.totp_secret, lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step) }
    : null;
}

/**
 * Turns 2FA on with a confirmed secret (the confirming code's step already used) and replaces
 * the recovery codes, in one transaction; false, changing nothing, when it is on already (of
 * two confirmations sent at once, only the first turns it on and keeps its recovery codes).
 */
export async function enableTwoFactor(
  db: DbOrTx,
  userId: string,
  enrolment: { sealedSecret: string; step: number; codeHashes: string[] },
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const enabled = await tx
      .updateTable('dashboard_users')
      .set({ totp_secret: enrolment.sealedSecret, totp_last_step: enrolment.step, totp_enabled_at: sql`clock_timestamp()` })
      .where('id', '=', userId)
      .where('totp_enabled_at', 'is', null)
      .executeTakeFirst();
    if (enabled.numUpdatedRows === 0n) return false;
    await tx.deleteFrom('dashboard_recovery_codes').where('user_id', '=', userId).execute();
    await tx
      .insertInto('dashboard_recovery_codes')
      .values(enrolment.codeHashes.map((codeHash) => ({ user_id: userId, code_hash: codeHash })))
      .execute();
    return true;
  });
}

/** Turns 2FA off and forgets its secret and recovery codes; false when it was not on. */
export async function disableTwoFactor(db: DbOrTx, userId: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('dashboard_users')
      .set({ totp_secret: null, totp_last_step: null, totp_enabled_at: null })
      .where('id', '=', userId)
      .where('totp_enabled_at', 'is not', null)
      .returning('id')
      .executeTakeFirst();
    await tx.deleteFrom('dashboard_recovery_codes').where('user_id', '=', userId).execute();
    return row !== undefined;
  });
}

/**
 * Takes `step` as the user's latest used time-step unless one as late was taken already: a
 * code is accepted once, even by two requests at the same moment (the row's update is atomic).
 */
export async function claimTimeStep(db: DbOrTx, userId: string, step: number): Promise<boolean> {
  const row = await db
    .updateTable('dashboard_users')
    .set({ totp_last_step: step })
    .where('id', '=', userId)
    .where('totp_enabled_at', 'is not', null)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks the recovery code used; false when it is not one of the user's or was used before. */
export async function useRecoveryCode(db: DbOrTx, { userId, codeHash }: { userId: string; codeHash: string }): Promise<boolean> {
  const row = await db
    .updateTable('dashboard_recovery_codes')
    .set({ used_at: sql`clock_timestamp()` })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function unusedRecoveryCodes(db: DbOrTx, userId: string): Promise<number> {
  const row = await db
    .selectFrom('dashboard_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function accountRequiresTwoFactor(db: DbOrTx, accountId: string): Promise<boolean> {
  const row = await db.selectFrom('accounts').select('require_two_factor').where('id', '=', accountId).executeTakeFirst();
  return row?.require_two_factor ?? false;
}

export async function setAccountRequiresTwoFactor(db: DbOrTx, accountId: string, required: boolean): Promise<void> {
  await db.updateTable('accounts').set({ require_two_factor: required }).where('id', '=', accountId).execute();
}
