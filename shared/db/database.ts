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
  // A connection that dies (Postgres stopped, network cut) makes its client emit 'error': the
  // pool listens for idle clients, this listener for clients checked out between two statements
  // of a transaction, where an unheard 'error' would crash the process. The failure surfaces on
  // the next query instead, and the pool replaces the client.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
