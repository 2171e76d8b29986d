import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import { sql } from 'kysely';
import type { RedisKeys } from '../cache/keys';
import type { Db } from '../db/database';

/**
 * Moves metered usage from Redis into Postgres `usage_daily`, exactly once
 * (docs/adr/0006-usage-flush.md):
 * 1. snapshot: each day's hash is atomically renamed to a snapshot and the snapshot id recorded;
 *    new requests start a fresh hash;
 * 2. for each recorded snapshot, one transaction inserts its id into `usage_flushes` and, only
 *    when that insert is new, adds its counts to `usage_daily`;
 * 3. after the commit, the snapshot is deleted.
 * A crash before 2 leaves the snapshot for the next run; a crash between 2 and 3 makes the next
 * run find the id already flushed and only delete the snapshot. Nothing is lost or counted twice.
 */
const SNAPSHOT_DAY = `
redis.call('SREM', KEYS[4], ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('SADD', KEYS[3], ARGV[1])
  return 1
end
return 0`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosSnapshotUsageDay(
      usageKey: string,
      snapshotKey: string,
      snapshotsKey: string,
      daysKey: string,
      snapshotId: string,
      day: string,
    ): Result<number, Context>;
  }
}

export interface FlushHooks {
  /** Test seam: called after the Postgres commit of a snapshot, before it is deleted. */
  afterCommit?: (snapshotId: string) => Promise<void> | void;
  /** Test seam: called after the snapshots are taken, before any is written. */
  afterSnapshot?: () => Promise<void> | void;
}

export interface FlushResult {
  snapshots: number;
  rows: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export async function flushUsage(redis: Redis, keys: RedisKeys, db: Db, hooks: FlushHooks = {}): Promise<FlushResult> {
  if (typeof (redis as Partial<Redis>).cosSnapshotUsageDay !== 'function') {
    redis.defineCommand('cosSnapshotUsageDay', { numberOfKeys: 4, lua: SNAPSHOT_DAY });
  }
  for (const day of await redis.smembers(keys.usageDays)) {
    if (!DAY.test(day)) continue;
    const snapshotId = `${day}:${randomUUID()}`;
    await redis.cosSnapshotUsageDay(keys.usage(day), keys.usageSnapshot(snapshotId), keys.usageSnapshots, keys.usageDays, snapshotId, day);
  }
  await hooks.afterSnapshot?.();

  const result: FlushResult = { snapshots: 0, rows: 0 };
  for (const snapshotId of await redis.smembers(keys.usageSnapshots)) {
    const counts = await redis.hgetall(keys.usageSnapshot(snapshotId));
    const rows = await toRows(db, snapshotId.slice(0, 10), counts);
    const flushed = await db.transaction().execute(async (tx) => {
      const claimed = await tx
        .insertInto('usage_flushes')
        .values({ flush_id: snapshotId, rows: rows.length })
        .onConflict((oc) => oc.column('flush_id').doNothing())
        .returning('flush_id')
        .executeTakeFirst();
      if (!claimed || rows.length === 0) return claimed ? 0 : -1;
      await tx
        .insertInto('usage_daily')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['key_id', 'day', 'endpoint', 'status_class']).doUpdateSet({ count: sql`usage_daily.count + excluded.count` }),
        )
        .execute();
      return rows.length;
    });
    await hooks.afterCommit?.(snapshotId);
    await redis.multi().del(keys.usageSnapshot(snapshotId)).srem(keys.usageSnapshots, snapshotId).exec();
    if (flushed >= 0) {
      result.snapshots += 1;
      result.rows += flushed;
    }
  }
  return result;
}

type UsageRow = {
  key_id: string;
  account_id: string;
  day: string;
  endpoint: string;
  status_class: '2xx' | '4xx' | '5xx' | '429';
  count: number;
};

async function toRows(db: Db, day: string, counts: Record<string, string>): Promise<UsageRow[]> {
  const parsed = Object.entries(counts)
    .map(([field, value]) => {
      const [keyId, endpoint, cls] = field.split('|');
      return { keyId: keyId!, endpoint: endpoint!, cls: cls as UsageRow['status_class'], count: Number(value) };
    })
    .filter((row) => row.keyId && row.endpoint && ['2xx', '4xx', '5xx', '429'].includes(row.cls) && row.count !== 0);
  if (parsed.length === 0) return [];
  const keyIds = [...new Set(parsed.map((row) => row.keyId))];
  const owners = await db.selectFrom('api_keys').select(['id', 'account_id']).where('id', 'in', keyIds).execute();
  const accountOf = new Map(owners.map((row) => [row.id, row.account_id]));
  return parsed
    .filter((row) => accountOf.has(row.keyId))
    .map((row) => ({
      key_id: row.keyId,
      account_id: accountOf.get(row.keyId)!,
      day,
      endpoint: row.endpoint,
      status_class: row.cls,
      count: row.count,
    }));
}
