import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import { Pool, types } from 'pg';
import type { Database } from './schema';

// bigint columns (bigserial ids, counts) come back as strings unless parsed.
types.setTypeParser(20, (value) => Number(value));

export type Db = Kysely<Database>;
/** Repositories take the database or a transaction. */
export type DbOrTx = Kysely<Database> | Transaction<Database>;

/**
 * Connections per process: the API serves many requests at once, the worker a few batch
 * transactions and maintenance jobs at a time, the CLI and npm start's setup one statement at a
 * time, migrations one transaction.
 */
export const POOL_SIZE = { api: 20, worker: 10, tool: 2, migrate: 1 } as const;

export function createDb(databaseUrl: string, poolSize: number): Db {
  const pool = new Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => undefined); // idle client errors surface on the next query instead
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
