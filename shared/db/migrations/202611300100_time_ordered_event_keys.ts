import { sql, type Kysely } from 'kysely';

/**
 * The keys of the two append-only event tables ordered by issue time before the request id:
 * `(account_id, environment, issued_at, request_id)`. A request id is random, so the old order
 * put every insert at a random leaf of the key's B-tree — a batch touched about as many leaf
 * pages as it had rows, more of them out of memory as a month's index grew — where rows issued
 * in time order land at the right edge of their tenant's part of the index (docs/BENCHMARKS.md,
 * "Worker"). The key holds the
 * same columns, so it is unique exactly when it was (docs/adr/0013-monthly-partitions.md) and
 * `ON CONFLICT (account_id, environment, request_id, issued_at)` still finds it. Rebuilds both
 * indexes on every attached month, holding the tables' locks meanwhile (docs/OPERATIONS.md,
 * "Upgrading"); detached months keep their old index.
 */
const TABLES = ['decisions', 'outcomes'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    const key = sql.id(`${table}_pk`);
    await sql`alter table ${sql.table(table)} drop constraint ${key},
      add constraint ${key} primary key (account_id, environment, issued_at, request_id)`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
