import type { Db } from '../db/database';

/**
 * Deletes delivery rows, and relayed outbox events, written more than `retentionMs` before
 * `now` (an event's remaining deliveries go with it). Returns what was deleted.
 */
export async function pruneWebhooks(db: Db, now: number, retentionMs: number): Promise<{ deliveries: number; events: number }> {
  const before = new Date(now - retentionMs);
  const deliveries = await db.deleteFrom('webhook_deliveries').where('created_at', '<', before).executeTakeFirst();
  const events = await db
    .deleteFrom('webhook_events')
    .where('occurred_at', '<', before)
    .where('relayed_at', 'is not', null)
    .executeTakeFirst();
  return { deliveries: Number(deliveries.numDeletedRows), events: Number(events.numDeletedRows) };
}
