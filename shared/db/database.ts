import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type Transaction } from 'kysely';
import { Pool, types, type PoolClient } from 'pg';
import type { DB } from './schema';

// The generated table types (schema.ts, kysely-codegen) map these as the parsers return them:
// bigint columns (bigserial ids, counts, versions) as numbers, dates as their 'YYYY-MM-DD' text.
types.setTypeParser(20, (value) => Number(value));
types.setTypeParser(1082, (value) => value);

/** The database's tables and views, as generated from the migrated schema. */
export type Database = DB;

export type Db = Kysely<Database>;
/** Repositories take the database or a transaction. */
export type DbOrTx = Kysely<Database> | Transaction<Database>;

/**
 * How a process uses Postgres: its connections and how long it waits. `connectMs` bounds the
 * wait for a connection (a new one, or a free one of a busy pool); `statementMs` is the server's
 * `statement_timeout`, and — a fifth later, at most a second — the client's own read deadline for one statement,
 * so a statement ends also when the server cannot say so (frozen, or the network gone). `null`:
 * no deadline.
 */
export interface PoolSettings {
  poolSize: number;
  connectMs: number;
  statementMs: number | null;
}

/**
 * Per role (docs/adr/0018-deadlines.md): request paths get a share of their request's deadline
 * (`requestPoolSettings`); the worker's batches one derived from the largest batch
 * (worker/job-timings.ts); its maintenance (the monthly reset, partition upkeep) and the CLI
 * minutes; its webhooks a pool of their own; migrations none.
 */
export const DB_ROLES = {
  maintenance: { poolSize: 2, connectMs: 5_000, statementMs: 15 * 60_000 },
  // The worker's webhook deliveries and relay: short statements, apart from the batches' pool.
  webhooks: { poolSize: 4, connectMs: 5_000, statementMs: 30_000 },
  tool: { poolSize: 2, connectMs: 10_000, statementMs: 15 * 60_000 },
  migrate: { poolSize: 1, connectMs: 10_000, statementMs: null },
} as const satisfies Record<string, PoolSettings>;

/**
 * A request path's pool: a connection within half the request's deadline, a statement within
 * three quarters of it — what remains answers 503 in time (shared/http/request-deadlines.ts).
 */
export function requestPoolSettings(poolSize: number, requestDeadlineMs: number): PoolSettings {
  return { poolSize, connectMs: Math.ceil(requestDeadlineMs / 2), statementMs: Math.ceil((requestDeadlineMs * 3) / 4) };
}

export function createDb(databaseUrl: string, settings: PoolSettings): Db {
  const { poolSize, connectMs, statementMs } = settings;
  const pool = new Pool({
    connectionString: databaseUrl,
    max: poolSize,
    connectionTimeoutMillis: connectMs,
    ...(statementMs === null
      ? {}
      : {
          statement_timeout: statementMs,
          // A little later than the server's own: the server's cancel leaves the connection
          // usable; this one is for a server that cannot answer at all.
          query_timeout: statementMs + Math.min(1000, Math.ceil(statementMs / 5)),
          // A transaction whose client went quiet (its process frozen) gives its locks back.
          idle_in_transaction_session_timeout: Math.max(statementMs * 2, 10_000),
        }),
  });
  // A connection that dies (Postgres stopped, network cut) makes its client emit 'error': the
  // pool listens for idle clients, this listener for clients checked out between two statements
  // of a transaction, where an unheard 'error' would crash the process. The failure surfaces on
  // the next query instead, and the pool replaces the client.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: new DeadlinePool(pool) }) });
}

/** node-postgres's message when a statement passed the client's read deadline (`query_timeout`). */
const READ_TIMEOUT = 'Query read timeout';

/**
 * The pool as Kysely sees it, with one change: a connection whose statement passed the client's
 * read deadline is closed when released instead of going back to the pool. node-postgres
 * answers the caller at the deadline but leaves the statement on the connection, so the next
 * statement given to it would wait behind the one that hangs.
 */
class DeadlinePool implements PostgresPool {
  private readonly clients = new WeakMap<PoolClient, PostgresPoolClient>();

  constructor(private readonly pool: Pool) {}

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    let wrapped = this.clients.get(client);
    if (!wrapped) {
      wrapped = closingWhenTimedOut(client);
      this.clients.set(client, wrapped);
    }
    return wrapped;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

function closingWhenTimedOut(client: PoolClient): PostgresPoolClient {
  let timedOut: Error | undefined;
  const query = ((text: unknown, parameters?: ReadonlyArray<unknown>) => {
    // The hung statement still holds the connection: what follows (a transaction's ROLLBACK)
    // would wait a whole deadline behind it, then fail alike.
    if (timedOut) return Promise.reject(timedOut);
    const result = (client.query as (text: unknown, parameters?: ReadonlyArray<unknown>) => unknown)(text, parameters);
    if (!(result instanceof Promise)) return result; // a cursor
    return result.catch((error: unknown) => {
      if (error instanceof Error && error.message === READ_TIMEOUT) timedOut = error;
      throw error;
    });
  }) as PostgresPoolClient['query'];
  return {
    query,
    release: () => {
      const error = timedOut;
      timedOut = undefined;
      client.release(error);
    },
  };
}
