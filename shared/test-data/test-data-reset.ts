import type { RedisKeys } from '../redis/key-names';
import { ERASED_TTL_SECONDS } from '../redis/key-names';
import { sql } from 'kysely';
import type { Db, DbOrTx } from '../db/database';
import { archivedTables, PARTITIONED_TABLES, type PartitionedTable } from '../db/partitions';
import { lockTestDataReset } from '../db/locks';
import { utcMonth } from '../util/calendar';
import { PopulationCache } from '../population/population-cache.repository';
import { nextPopulationVersion } from '../population/population.repository';
import type { Tenant } from '../domain/environment';
import { emptyPrior } from '../domain/engine/engine';
import { execEach, scanKeys, type RedisClient } from '../redis/redis';

/**
 * The monthly test-environment reset: deletes every test-environment profile,
 * version, decision, outcome (in detached months too), erasure record and population prior
 * (of all accounts, or of one), never live data, then drops the matching cache entries and
 * fences their generations (and the priors' versions) against late writes.
 * A scheduled run carries its period (YYYY-MM); a unique index on it makes it run once per
 * month however many workers race for it.
 */
export type ResetTrigger = 'schedule' | 'catch-up' | 'manual';

export interface ResetResult {
  ran: boolean;
  period: string | null;
  rowsRemoved: Record<string, number>;
}

/** Where a reset deletes: Postgres's rows, and Redis's cached profiles and priors. */
export interface ResetStores {
  db: Db;
  redis: RedisClient;
  keys: RedisKeys;
}

const TABLES = ['outcomes', 'decisions', 'profile_versions', 'erasures'] as const;

export async function resetTestData(
  { db, redis, keys }: ResetStores,
  options: { trigger: ResetTrigger; period?: string; accountId?: string; now?: number },
): Promise<ResetResult> {
  const startedAt = new Date(options.now ?? Date.now());
  const period = options.period ?? null;
  const outcome = await db.transaction().execute(async (tx) => {
    // Waits for batches applying test events to finish; later ones see this reset's record.
    await lockTestDataReset(tx, 'exclusive');
    const claimed = await tx
      .insertInto('test_data_resets')
      .values({
        period,
        account_id: options.accountId ?? null,
        trigger: options.trigger,
        started_at: startedAt,
        finished_at: startedAt,
        rows_removed: JSON.stringify({}),
      })
      .onConflict((oc) => oc.column('period').where('period', 'is not', null).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!claimed) return null;
    const rowsRemoved: Record<string, number> = {};
    for (const table of TABLES) {
      let query = tx.deleteFrom(table).where('environment', '=', 'test');
      if (options.accountId) query = query.where('account_id', '=', options.accountId);
      rowsRemoved[table] = Number((await query.executeTakeFirst()).numDeletedRows);
    }
    for (const table of PARTITIONED_TABLES) {
      rowsRemoved[table] = (rowsRemoved[table] ?? 0) + (await deleteArchivedTestRows(tx, table, options.accountId));
    }
    let profiles = tx.deleteFrom('profiles').where('environment', '=', 'test');
    if (options.accountId) profiles = profiles.where('account_id', '=', options.accountId);
    const generations = (await profiles.returning(['account_id', 'user_id', 'generation']).execute()).map((row) => ({
      tenant: { accountId: row.account_id, environment: 'test' as const },
      userId: row.user_id,
      generation: row.generation,
    }));
    rowsRemoved.profiles = generations.length;
    let priors = tx.deleteFrom('population_priors').where('environment', '=', 'test');
    if (options.accountId) priors = priors.where('account_id', '=', options.accountId);
    const priorAccounts = (await priors.returning('account_id').execute()).map((row) => row.account_id);
    rowsRemoved.population_priors = priorAccounts.length;
    const priorFence = priorAccounts.length > 0 ? await nextPopulationVersion(tx) : 0;
    await tx
      .updateTable('test_data_resets')
      .set({ finished_at: new Date(), rows_removed: JSON.stringify(rowsRemoved) })
      .where('id', '=', claimed.id)
      .execute();
    return { rowsRemoved, generations, priorAccounts, priorFence };
  });
  if (!outcome) return { ran: false, period, rowsRemoved: {} };
  await dropTestCaches({ redis, keys }, outcome.generations, options.accountId);
  // An empty prior under a version newer than any written before the reset.
  const empty = { version: outcome.priorFence, prior: emptyPrior() };
  await new PopulationCache(redis, keys).writeManyIfNewer(
    outcome.priorAccounts.map((accountId) => ({ tenant: { accountId, environment: 'test' as const }, population: empty })),
  );
  return { ran: true, period, rowsRemoved: outcome.rowsRemoved };
}

/** Test rows of detached months go with the reset too: only live data is kept indefinitely. */
async function deleteArchivedTestRows(tx: DbOrTx, table: PartitionedTable, accountId?: string): Promise<number> {
  let removed = 0;
  for (const archived of await archivedTables(tx, table)) {
    const result = await sql`delete from ${sql.table(archived)} where environment = 'test'
      and (${accountId ?? null}::text is null or account_id = ${accountId ?? null})`.execute(tx);
    removed += Number(result.numAffectedRows ?? 0);
  }
  return removed;
}

async function dropTestCaches(
  { redis, keys }: Pick<ResetStores, 'redis' | 'keys'>,
  generations: ErasedGeneration[],
  accountId?: string,
): Promise<void> {
  for (let i = 0; i < generations.length; i += 500) {
    await execEach(
      redis,
      generations
        .slice(i, i + 500)
        .map((erased) => (pipeline) => pipeline.set(keys.erasedGeneration(erased), '1', 'EX', ERASED_TTL_SECONDS)),
    );
  }
  // Each cached profile is in its user's slot: deleted one by one, on the node that holds it.
  await scanKeys(redis, keys.profilePattern(accountId ?? '*', 'test'), async (node, found) => {
    const pipeline = node.pipeline();
    for (const key of found) pipeline.unlink(key);
    await pipeline.exec();
  });
}

interface ErasedGeneration {
  tenant: Tenant;
  userId: string;
  generation: string;
}

/**
 * On worker start: run the current month's reset if it was missed while no worker ran. A fresh
 * install records a baseline instead, so its first reset is the coming 1st.
 */
export async function catchUpTestDataReset(stores: ResetStores, now = Date.now()): Promise<ResetResult | null> {
  const { db } = stores;
  const period = utcMonth(now);
  const last = await db
    .selectFrom('test_data_resets')
    .select((eb) => eb.fn.max('period').as('period'))
    .where('period', 'is not', null)
    .executeTakeFirst();
  if (!last?.period) {
    await db
      .insertInto('test_data_resets')
      .values({ period, trigger: 'baseline', started_at: new Date(now), finished_at: new Date(now), rows_removed: JSON.stringify({}) })
      .onConflict((oc) => oc.column('period').where('period', 'is not', null).doNothing())
      .execute();
    return null;
  }
  if (last.period >= period) return null;
  return resetTestData(stores, { trigger: 'catch-up', period, now });
}
