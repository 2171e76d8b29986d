import type { Db } from '../db/database';
import { recordEvent } from '../webhooks/outbox.repository';

/** A live key this old is due for rotation. */
export const ROTATION_DUE_DAYS = 90;

/**
 * The daily scan: marks every live key that is in use (not revoked, deleted, expired or rotated
 * out) and has turned 90 days old as due for rotation (api_keys.rotation_due_at, which the keys
 * list shows) and records its `key.rotation_due` event in the same transaction. A key is marked
 * once, so a re-run or a second worker's run announces nothing twice. Returns the keys marked.
 */
export async function markRotationDue(db: Db, now: number): Promise<number> {
  const at = new Date(now);
  const cutoff = new Date(now - ROTATION_DUE_DAYS * 86_400_000);
  return db.transaction().execute(async (tx) => {
    const due = await tx
      .updateTable('api_keys')
      .set({ rotation_due_at: at })
      .where('environment', '=', 'live')
      .where('rotation_due_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('deleted_at', 'is', null)
      .where('replaced_by', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
      .where('created_at', '<=', cutoff)
      .returning(['id', 'account_id', 'name', 'last4', 'created_at'])
      .execute();
    for (const key of due) {
      const createdAt = new Date(key.created_at);
      await recordEvent(tx, {
        accountId: key.account_id,
        environment: 'live',
        type: 'key.rotation_due',
        data: {
          key: { id: key.id, name: key.name, last4: key.last4 },
          createdAt: createdAt.toISOString(),
          ageDays: Math.floor((now - createdAt.getTime()) / 86_400_000),
        },
        occurredAt: at,
      });
    }
    return due.length;
  });
}
