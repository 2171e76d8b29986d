import { sql, type Kysely } from 'kysely';

/**
 * A profile's learner state as `json` rather than `jsonb`: the service only ever writes a
 * state whole and reads it whole, never into it, and `jsonb` parses each of its several hundred
 * numbers into a numeric on every write and prints them again on every read — about three
 * times the Postgres work of the worker's batched profile update (docs/BENCHMARKS.md, "Worker").
 * `json` keeps the text as sent. Rewrites the table once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table profiles alter column state type json using state::json`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
