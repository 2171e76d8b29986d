import { sql, type Kysely } from 'kysely';

/**
 * A profile's learner state as `json` rather than `jsonb`: the service only ever writes a
 * state whole and reads it whole, never into it, and `jsonb` parses each of its several hundred
 * numbers into a numeric on every write and prints them again on every read — about three
 * times the Postgres work of the worker's batched profile update (docs/BENCHMARKS.md, "Worker").
 * `json` keeps the text as sent. A state of a long history is beyond the 2 KB from which
 * Postgres compresses a value: lz4 compresses it in a fraction of pglz's time, where this
 * Postgres was built with lz4 (else the default stays). Rewrites the table once, holding its
 * lock meanwhile (docs/OPERATIONS.md, "Upgrading").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table profiles alter column state type json using state::json`.execute(db);
  await sql`
    do $$
    begin
      alter table profiles alter column state set compression lz4;
    exception when feature_not_supported then
      null;
    end
    $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
