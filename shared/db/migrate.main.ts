import { loadDotCosEnv } from '../config/dev-env';
import { createDb, DB_ROLES } from './database';
import { migrateToLatest } from './migrator';

async function main(): Promise<void> {
  loadDotCosEnv();
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('migrate: DATABASE_URL is required\n');
    process.exit(1);
  }
  const db = createDb(url, DB_ROLES.migrate);
  const { error, results } = await migrateToLatest(db);
  for (const result of results ?? []) {
    process.stdout.write(`migration ${result.migrationName}: ${result.status}\n`);
  }
  await db.destroy();
  if (error) {
    process.stderr.write(`migrate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

void main();
