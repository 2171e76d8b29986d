import type { Db } from '../db/database';

/** How long traffic rows are kept (docs/OPERATIONS.md): minutes for two weeks, hours for 400 days. */
export const MINUTE_ROWS_KEPT_MS = 14 * 86_400_000;
export const HOUR_ROWS_KEPT_MS = 400 * 86_400_000;

export interface RetentionResult {
  minuteRows: number;
  hourRows: number;
  flushLedgerRows: number;
}

/**
 * Deletes traffic rows past their retention at `now`. The flush ledger goes with the minute
 * rows: a snapshot older than that would only add to minutes already deleted.
 */
export async function pruneTraffic(db: Db, now: number): Promise<RetentionResult> {
  const minuteCutoff = new Date(now - MINUTE_ROWS_KEPT_MS);
  const minutes = await db.deleteFrom('traffic_minute').where('at', '<', minuteCutoff).executeTakeFirst();
  const hours = await db
    .deleteFrom('traffic_hour')
    .where('at', '<', new Date(now - HOUR_ROWS_KEPT_MS))
    .executeTakeFirst();
  const ledger = await db.deleteFrom('traffic_flushes').where('flushed_at', '<', minuteCutoff).executeTakeFirst();
  return {
    minuteRows: Number(minutes.numDeletedRows),
    hourRows: Number(hours.numDeletedRows),
    flushLedgerRows: Number(ledger.numDeletedRows),
  };
}
