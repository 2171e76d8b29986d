import { sql, type Insertable } from 'kysely';
import type { RedisKeys } from '../redis/key-names';
import type { DbOrTx } from '../db/database';
import type { TrafficMinute } from '../db/schema';
import {
  flushSnapshots,
  keyOwners,
  type FlushHooks,
  type FlushResult,
  type FlushStores,
  type SnapshotSource,
} from '../flush/snapshot-flush';
import { MINUTE_PERIOD, parseTrafficField } from './traffic-fields';

/**
 * Moves recorded traffic from Redis into Postgres exactly once, with the same snapshot flush as
 * usage (docs/adr/0012-traffic-recording.md): each minute's counts are added to its minute row
 * and to its hour row in the snapshot's transaction, so hour rows are the exact sum of their
 * minutes (histograms included) without a separate rollup.
 */
export async function flushTraffic({ redis, keys, db }: FlushStores, hooks: FlushHooks = {}): Promise<FlushResult> {
  return flushSnapshots({ redis, sources: trafficSource(keys), db, write: writeTraffic, hooks });
}

const trafficSource = (keys: RedisKeys): SnapshotSource => ({
  periods: keys.trafficMinutes,
  hash: keys.traffic,
  snapshot: keys.trafficSnapshot,
  snapshots: keys.trafficSnapshots,
  isPeriod: (minute) => MINUTE_PERIOD.test(minute),
  ledger: 'traffic_flushes',
});

async function writeTraffic(tx: DbOrTx, minute: string, counts: Record<string, string>): Promise<number> {
  const counters = Object.entries(counts).flatMap(([field, value]) => parseTrafficField(field, value) ?? []);
  const owners = await keyOwners(tx, [...new Set(counters.map((counter) => counter.keyId))]);
  const minuteAt = new Date(`${minute}:00Z`);
  const hourAt = new Date(`${minute.slice(0, 13)}:00:00Z`);
  const rows = counters.flatMap((counter) => {
    const owner = owners.get(counter.keyId);
    if (!owner) return [];
    return [
      {
        account_id: owner.accountId,
        environment: owner.environment,
        key_id: counter.keyId,
        metric: counter.metric,
        label: counter.label,
        count: counter.count,
      },
    ];
  });
  if (rows.length === 0) return 0;
  await addTrafficQuery(tx, 'traffic_minute', minuteAt, rows).execute();
  await addTrafficQuery(tx, 'traffic_hour', hourAt, rows).execute();
  return rows.length;
}

export type TrafficCounterRow = Omit<Insertable<TrafficMinute>, 'at'>;

/** Adds counts to one minute's or hour's rows; every row carries the same `at`, so one month's partition takes them. */
export function addTrafficQuery(db: DbOrTx, table: 'traffic_minute' | 'traffic_hour', at: Date, rows: TrafficCounterRow[]) {
  return db
    .insertInto(table)
    .values(rows.map((row) => ({ ...row, at })))
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'environment', 'at', 'key_id', 'metric', 'label'])
        .doUpdateSet({ count: sql`${sql.table(table)}.count + excluded.count` }),
    );
}
