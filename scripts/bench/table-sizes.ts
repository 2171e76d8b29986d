import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';

/**
 * Bytes on disk per row of the tables that grow with traffic (heap, indexes and TOAST, summed
 * over a partitioned table's partitions), for the capacity model in docs/SCALING.md.
 */
export interface TableSize {
  table: string;
  rows: number;
  bytes: number;
  bytesPerRow: number | null;
}

const TABLES = ['decisions', 'outcomes', 'profile_versions', 'profiles'] as const;

export async function tableSizes(db: Db): Promise<TableSize[]> {
  const sizes: TableSize[] = [];
  for (const table of TABLES) {
    const { rows } = await sql<{ rows: number; bytes: number }>`
      select (select count(*) from ${sql.table(table)})::bigint as rows,
             coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree(${table}::regclass)),
                      pg_total_relation_size(${table}::regclass))::bigint as bytes`.execute(db);
    const { rows: count, bytes } = rows[0]!;
    sizes.push({
      table,
      rows: Number(count),
      bytes: Number(bytes),
      bytesPerRow: count > 0 ? Math.round(Number(bytes) / Number(count)) : null,
    });
  }
  return sizes;
}
