import { sql } from 'kysely';
import type { RedisKeys } from '../redis/key-names';
import type { DbOrTx } from '../db/database';
import {
  flushSnapshots,
  keyOwners,
  type FlushHooks,
  type FlushResult,
  type FlushStores,
  type SnapshotSource,
} from '../flush/snapshot-flush';
import { recordQuotaThresholds } from './quota-thresholds';

export type { FlushHooks, FlushResult, FlushStores } from '../flush/snapshot-flush';

/**
 * Moves metered usage from Redis into Postgres `usage_daily`, exactly once, with the snapshot
 * flush (shared/flush/snapshot-flush.ts, docs/adr/0006-usage-flush.md): one hash per UTC day and
 * usage shard (one shard on a single node, docs/adr/0014-redis-cluster-partitions.md).
 */
export async function flushUsage({ redis, keys, db }: FlushStores, hooks: FlushHooks = {}): Promise<FlushResult> {
  const shards = Array.from({ length: keys.usageShards }, (_, shard) => usageSource(keys, shard));
  return flushSnapshots({ redis, sources: shards, db, write: writeUsage, hooks });
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

const usageSource = (keys: RedisKeys, shard: number): SnapshotSource => ({
  periods: keys.usageDays(shard),
  hash: (day) => keys.usage(day, shard),
  snapshot: (snapshotId) => keys.usageSnapshot(snapshotId, shard),
  snapshots: keys.usageSnapshots(shard),
  isPeriod: (day) => DAY.test(day),
  ledger: 'usage_flushes',
});

type UsageRow = {
  key_id: string;
  account_id: string;
  day: string;
  endpoint: string;
  status_class: '2xx' | '4xx' | '5xx' | '429';
  count: number;
};

async function writeUsage(tx: DbOrTx, day: string, counts: Record<string, string>): Promise<number> {
  const rows = await toRows(tx, day, counts);
  if (rows.length === 0) return 0;
  await tx
    .insertInto('usage_daily')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['key_id', 'day', 'endpoint', 'status_class']).doUpdateSet({ count: sql`usage_daily.count + excluded.count` }),
    )
    .execute();
  // Usage is metered for live keys only: the accounts written to are the ones whose month moved.
  await recordQuotaThresholds(tx, [...new Set(rows.map((row) => row.account_id))], day, new Date());
  return rows.length;
}

async function toRows(db: DbOrTx, day: string, counts: Record<string, string>): Promise<UsageRow[]> {
  const parsed = Object.entries(counts)
    .map(([field, value]) => {
      const [keyId, endpoint, cls] = field.split('|');
      return { keyId: keyId!, endpoint: endpoint!, cls: cls as UsageRow['status_class'], count: Number(value) };
    })
    .filter((row) => row.keyId && row.endpoint && ['2xx', '4xx', '5xx', '429'].includes(row.cls) && row.count !== 0);
  const owners = await keyOwners(db, [...new Set(parsed.map((row) => row.keyId))]);
  return parsed
    .filter((row) => owners.has(row.keyId))
    .map((row) => ({
      key_id: row.keyId,
      account_id: owners.get(row.keyId)!.accountId,
      day,
      endpoint: row.endpoint,
      status_class: row.cls,
      count: row.count,
    }));
}
