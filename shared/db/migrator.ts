import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator, type Kysely, type MigrationResultSet } from 'kysely';

/** Runs every pending migration (forward-only, one file each) with Kysely's Migrator. */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: path.join(__dirname, 'migrations') }),
  });
  return migrator.migrateToLatest();
}
