import { sql, type Kysely } from 'kysely';

/**
 * The keys of the two append-only event tables ordered by issue time before the request id:
 * `(account_id, environment, issued_at, request_id)`. A request id is random, so the old order
 * put every insert at a random leaf of the key's B-tree — a batch touched about as many leaf
 * pages as it had rows, more of them out of memory as a month's index grew — where rows issued
 * in time order land at the right edge of their tenant's part of the index
 * (docs/adr/0013-monthly-partitions.md). The key holds the same columns, so it is unique exactly
 * when it was, and `ON CONFLICT (account_id, environment, request_id, issued_at)` still finds it.
 * Rebuilds the key of every attached month, holding the tables' locks meanwhile
 * (docs/OPERATIONS.md, "Upgrading"), and of every archived month still in the database, so that
 * one can be attached again.
 */
const TABLES = ['decisions', 'outcomes'] as const;
const KEY = sql.raw('(account_id, environment, issued_at, request_id)');

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    const key = sql.id(`${table}_pk`);
    await sql`alter table ${sql.table(table)} drop constraint ${key}, add constraint ${key} primary key ${KEY}`.execute(db);
  }
  // A detached month is a table of its own: its key is its own primary key constraint.
  await sql`
    do $$
    declare
      archived record;
      key name;
    begin
      for archived in
        select table_name from archived_partitions
        where parent in ('decisions', 'outcomes') and to_regclass(table_name) is not null
      loop
        select conname into key from pg_constraint where conrelid = to_regclass(archived.table_name) and contype = 'p';
        if key is not null then
          execute format('alter table %I drop constraint %I', archived.table_name, key);
        end if;
        execute format('alter table %I add primary key ${KEY}', archived.table_name);
      end loop;
    end
    $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
