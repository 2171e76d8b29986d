import { sql } from 'kysely';
import { startOfMonth, utcMonth } from '../util/calendar';
import type { Db, DbOrTx } from './database';

/**
 * Monthly partitions of the large tables (docs/adr/0013-monthly-partitions.md). The worker
 * attaches the current month's and the next ones' ahead of time; rows of a month with no
 * partition land in the table's DEFAULT partition and move into the month's when it is made.
 * Event rows are never dropped: an operator may detach old months, which stay queryable as plain
 * tables listed in archived_partitions.
 */
export const PARTITIONED_TABLES = ['decisions', 'outcomes', 'profile_versions'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/**
 * The dashboard's traffic counters, partitioned the same way but never detached: their old rows
 * are deleted by the traffic retention (docs/adr/0012-traffic-recording.md).
 */
export const TRAFFIC_PARTITIONED_TABLES = ['traffic_minute', 'traffic_hour'] as const;
/** Every table the upkeep makes months for. */
export const MONTHLY_TABLES = [...PARTITIONED_TABLES, ...TRAFFIC_PARTITIONED_TABLES] as const;
export type MonthlyTable = (typeof MONTHLY_TABLES)[number];
const isEventTable = (table: MonthlyTable): table is PartitionedTable => PARTITIONED_TABLES.some((t) => t === table);

/** Months made ahead of the current one, so a month's partition exists long before its rows. */
export const MONTHS_AHEAD = 2;
/** A partition's creation waits at most this long for queries holding the default partition. */
const PARTITION_LOCK_TIMEOUT = '5s';

export const MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

/** `2026-11` → `decisions_y2026m11`. */
export const partitionName = (table: MonthlyTable, month: string) => `${table}_y${month.slice(0, 4)}m${month.slice(5, 7)}`;

/** The month `offset` months after the one containing `ms`, as YYYY-MM. */
export function monthAfter(ms: number, offset: number): string {
  const d = new Date(startOfMonth(ms));
  return utcMonth(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1));
}

/** Creates the partitions of the current month and MONTHS_AHEAD after it; returns those created now. */
export async function ensurePartitions(db: Db, now: number): Promise<string[]> {
  const created: string[] = [];
  for (const table of MONTHLY_TABLES) {
    for (let offset = 0; offset <= MONTHS_AHEAD; offset++) {
      const month = monthAfter(now, offset);
      if (await ensureMonthPartition(db, table, month)) created.push(partitionName(table, month));
    }
  }
  return created;
}

/** One month's partition, in a transaction of its own: a lock timeout leaves the others made. */
export async function ensureMonthPartition(db: Db, table: MonthlyTable, month: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('lock_timeout', ${PARTITION_LOCK_TIMEOUT}, true)`.execute(tx);
    const { rows } = await sql<{ created: boolean }>`select ensure_month_partition(${table}, ${`${month}-01`}::date) as created`.execute(
      tx,
    );
    return rows[0]?.created === true;
  });
}

export interface PartitionInfo {
  table: MonthlyTable;
  name: string;
  /** YYYY-MM, or null for the DEFAULT partition. */
  month: string | null;
  state: 'attached' | 'archived';
  /** Rows by the planner's estimate (exact after ANALYZE): counting a month is a full scan. */
  estimatedRows: number;
  bytes: number;
}

const NAME_MONTH = /_y(\d{4})m(\d{2})$/;
const monthOf = (name: string) => {
  const match = NAME_MONTH.exec(name);
  return match ? `${match[1]}-${match[2]}` : null;
};

/** Every attached partition of the monthly tables and every archived (detached) one. */
export async function listPartitions(db: DbOrTx): Promise<PartitionInfo[]> {
  const { rows } = await sql<{ parent: MonthlyTable; name: string; archived: boolean; estimated_rows: number; bytes: number }>`
    select parent.relname as parent, child.relname as name, false as archived,
           greatest(child.reltuples, 0)::bigint as estimated_rows, pg_total_relation_size(child.oid) as bytes
    from pg_inherits i
    join pg_class parent on parent.oid = i.inhparent
    join pg_class child on child.oid = i.inhrelid
    where parent.relname in (${sql.join([...MONTHLY_TABLES])}) and parent.relnamespace = 'public'::regnamespace
    union all
    select a.parent, a.table_name, true, greatest(c.reltuples, 0)::bigint, pg_total_relation_size(c.oid)
    from archived_partitions a join pg_class c on c.oid = to_regclass(a.table_name)
    order by 1, 2`.execute(db);
  return rows.map((row) => ({
    table: row.parent,
    name: row.name,
    month: monthOf(row.name),
    state: row.archived ? 'archived' : 'attached',
    estimatedRows: Number(row.estimated_rows),
    bytes: Number(row.bytes),
  }));
}

/** The archived months of a table still in the database (erasure and the test reset reach them). */
export async function archivedTables(db: DbOrTx, table: PartitionedTable): Promise<string[]> {
  const rows = await db
    .selectFrom('archived_partitions')
    .select('table_name')
    .where('parent', '=', table)
    .where(sql<boolean>`to_regclass(table_name) is not null`)
    .orderBy('table_name')
    .execute();
  return rows.map((row) => row.table_name);
}

/**
 * Detaches every monthly partition of the event tables of a month before `before` (YYYY-MM) and
 * records it as archived; the rows stay in the database as plain tables. Traffic months stay
 * attached: retention empties them. Returns the names detached.
 */
export async function detachPartitionsBefore(db: Db, before: string): Promise<string[]> {
  const candidates = (await listPartitions(db)).filter((p) => p.state === 'attached' && p.month !== null && p.month < before);
  const detached: string[] = [];
  for (const partition of candidates) {
    const parent = partition.table;
    if (!isEventTable(parent)) continue;
    await db.transaction().execute(async (tx) => {
      await sql`select set_config('lock_timeout', ${PARTITION_LOCK_TIMEOUT}, true)`.execute(tx);
      await sql`alter table ${sql.table(partition.table)} detach partition ${sql.table(partition.name)}`.execute(tx);
      await tx.insertInto('archived_partitions').values({ table_name: partition.name, parent, month: partition.month! }).execute();
    });
    detached.push(partition.name);
  }
  return detached;
}
