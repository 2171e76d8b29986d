import type { Db } from '../db/database';
import { ENVIRONMENTS } from '../domain/environment';
import { recordEvent } from '../webhooks/outbox.repository';
import { lockAccount, setRestricted, type Account } from './account.repository';

/**
 * Restricts an account, or lifts its restriction, in one transaction with the webhook event a
 * restriction announces: `account.restricted`, once to each environment's endpoints (a
 * restriction refuses the keys of both). Restricting an account already restricted announces
 * nothing new. Returns whether the account's state changed.
 */
export async function changeRestriction(db: Db, account: Pick<Account, 'id'>, restricted: boolean, now = new Date()): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await lockAccount(tx, account.id);
    const current = await tx.selectFrom('accounts').select('restricted').where('id', '=', account.id).executeTakeFirstOrThrow();
    if (current.restricted === restricted) return false;
    await setRestricted(tx, account.id, restricted);
    if (restricted) {
      for (const environment of ENVIRONMENTS) {
        await recordEvent(tx, {
          accountId: account.id,
          environment,
          type: 'account.restricted',
          data: { restricted: true, reason: 'The API answers 403 ACCOUNT_RESTRICTED to every key of the account' },
          occurredAt: now,
        });
      }
    }
    return true;
  });
}
