import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator } from 'kysely';
import { Client } from 'pg';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { withDatabase } from './global-setup';

/**
 * A new, empty database migrated up to `migration` and no further, for a migration's test to
 * write rows as they were before it and then migrate to the latest.
 */
export async function databaseMigratedTo(migration: string): Promise<Db> {
  const name = `cos_test_migration_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: process.env.COS_TEST_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const db = createDb(withDatabase(process.env.COS_TEST_ADMIN_URL!, name), { ...DB_ROLES.tool, poolSize: 2 });
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: path.join(__dirname, '../../shared/db/migrations') }),
  });
  const { error } = await migrator.migrateTo(migration);
  if (error) throw error;
  return db;
}
