import { sql } from 'kysely';
import { createDb, type Db } from '../../shared/db/database';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * A statement's deadline on a Postgres that hangs (connections open, nothing answered: the
 * proxy's hold), for a pool with a short one: the caller hears of it at the client's read
 * deadline, a transaction's ROLLBACK does not wait a second deadline behind the hung statement,
 * and the connection is not handed out again.
 */
const STATEMENT_MS = 300;
/** The client's read deadline: a fifth after the server's. */
const READ_DEADLINE_MS = STATEMENT_MS + STATEMENT_MS / 5;

let env: TestEnv;
let proxy: CountingProxy;
let db: Db;
beforeAll(async () => {
  env = await createTestEnv();
  proxy = await startCountingProxy(env.databaseUrl);
  db = createDb(proxy.via(env.databaseUrl), { poolSize: 1, connectMs: 2000, statementMs: STATEMENT_MS });
});
afterAll(async () => {
  proxy.release();
  await db.destroy();
  await proxy.close();
  await env.close();
});

it('ends a transaction whose statement hangs at the read deadline, once, and then serves from a fresh connection', async () => {
  expect((await sql<{ n: number }>`select 1 as n`.execute(db)).rows).toEqual([{ n: 1 }]); // the pool's one connection is open
  let started = 0;
  const failure = await db
    .transaction()
    .execute(async (tx) => {
      // Postgres hangs inside the transaction: its statement, then the ROLLBACK, meet it.
      proxy.hold();
      started = performance.now();
      return sql`select 1`.execute(tx);
    })
    .then(
      () => null,
      (error: unknown) => error,
    );
  const took = performance.now() - started;
  expect(failure).toMatchObject({ message: 'Query read timeout' });
  // One deadline: the statement timed out, and the ROLLBACK failed at once instead of waiting another.
  expect(took).toBeGreaterThanOrEqual(READ_DEADLINE_MS - 20);
  expect(took).toBeLessThan(2 * READ_DEADLINE_MS - 50);
  proxy.release();
  // The timed-out connection was closed, not reused: the next statement gets a new one and answers.
  expect((await sql<{ n: number }>`select 2 as n`.execute(db)).rows).toEqual([{ n: 2 }]);
});
