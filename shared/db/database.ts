import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import { Pool, types } from 'pg';
import type { Database } from './schema';

// bigint columns (bigserial ids, counts) come back as strings unless parsed.
types.setTypeParser(20, (value) => Number(value));

export type Db = Kysely<Database>;
/** Repositories take the database or a transaction. */
export type DbOrTx = Kysely<Database> | Transaction<Database>;

export function createDb(databaseUrl: string, poolSize = 10): Db {
  const pool = new Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => undefined); // idle client errors surface on the next query instead
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
