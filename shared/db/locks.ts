import { sql } from 'kysely';
import type { Tenant } from '../domain/environment';
import type { DbOrTx } from './database';

/**
 * Transaction-scoped advisory locks that serialise work on the same user across API
 * instances and workers: applying events, erasure. Taken in one statement, in hash order, so
 * two transactions never wait on each other in a cycle.
 */
export async function lockUsers(tx: DbOrTx, tenant: Tenant, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  // \u001f cannot occur in a userId (control characters are refused); Postgres text takes it.
  const names = userIds.map((userId) => `user:${tenant.accountId}\u001f${tenant.environment}\u001f${userId}`);
  await sql`
    select count(pg_advisory_xact_lock(h)) from (
      select distinct hashtextextended(name, 0) as h from unnest(${names}::text[]) as name order by 1
    ) as ordered`.execute(tx);
}

const TEST_RESET_LOCK = sql`hashtextextended('cos:test-data-reset', 0)`;

/**
 * What a worker batch takes for a tenant's events, in one statement: the test-data-reset lock
 * in shared mode first (test environment only), then the users' locks in hash order — the same
 * order as taking lockTestDataReset('shared') and then lockUsers.
 */
export async function lockEventUsers(tx: DbOrTx, tenant: Tenant, userIds: string[]): Promise<void> {
  const test = tenant.environment === 'test';
  if (userIds.length === 0 && !test) return;
  const names = userIds.map((userId) => `user:${tenant.accountId}\u001f${tenant.environment}\u001f${userId}`);
  await sql`
    select count(case when l.shared then pg_advisory_xact_lock_shared(l.h) else pg_advisory_xact_lock(l.h) end) from (
      select ${TEST_RESET_LOCK} as h, true as shared where ${test}
      union
      select distinct hashtextextended(name, 0), false from unnest(${names}::text[]) as name
      order by 2 desc, 1
    ) as l`.execute(tx);
}

/** Held shared by every transaction applying test-environment events, exclusive by a reset. */
export async function lockTestDataReset(tx: DbOrTx, mode: 'shared' | 'exclusive'): Promise<void> {
  if (mode === 'shared') await sql`select pg_advisory_xact_lock_shared(${TEST_RESET_LOCK})`.execute(tx);
  else await sql`select pg_advisory_xact_lock(${TEST_RESET_LOCK})`.execute(tx);
}
