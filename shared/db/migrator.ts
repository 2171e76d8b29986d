import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator, sql, type Kysely, type MigrationResultSet } from 'kysely';

/**
 * The first migration: the schema as of the first release (docs/adr/0019-one-baseline.md).
 * Later migrations are dated after it.
 */
export const BASELINE_MIGRATION = '202611290000_baseline';

/** A database made by a release before the baseline: its migrations are not this release's. */
export class PreBaselineDatabaseError extends Error {
  constructor(readonly applied: string[]) {
    super(
      `this database was made by a release before the schema baseline (${BASELINE_MIGRATION}): it holds migrations ` +
        `${applied.join(', ')}, and its data cannot be carried over (the service is pre-1.0). ` +
        'Point DATABASE_URL at an empty database, or drop and recreate this one.',
    );
    this.name = 'PreBaselineDatabaseError';
  }
}

/** The migrations a database ran that come before the baseline (none for a new or current one). */
export async function preBaselineMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ exists: boolean }>`select to_regclass('kysely_migration') is not null as exists`.execute(db);
  if (!rows[0]?.exists) return [];
  const applied = await sql<{ name: string }>`select name from kysely_migration where name < ${BASELINE_MIGRATION} order by name`.execute(
    db,
  );
  return applied.rows.map((row) => row.name);
}

/**
 * Runs every pending migration (forward-only, one file each) with Kysely's Migrator; a
 * database from before the baseline is refused with PreBaselineDatabaseError, never changed.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const earlier = await preBaselineMigrations(db);
  if (earlier.length > 0) return { error: new PreBaselineDatabaseError(earlier) };
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: path.join(__dirname, 'migrations') }),
  });
  return migrator.migrateToLatest();
}

/** Empties a database of its own (npm start's) that a release before the baseline made: everything in it goes. */
export async function discardSchema(db: Kysely<any>): Promise<void> {
  await sql`drop schema public cascade`.execute(db);
  await sql`create schema public`.execute(db);
}
