import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import type { Tenant } from '../domain/environment';

/** A tenant's population prior as stored: the engine's JSON and a version that only grows. */
export interface StoredPopulation {
  version: number;
  prior: unknown;
}

export async function findPopulation(db: DbOrTx, tenant: Tenant): Promise<StoredPopulation | null> {
  const row = await db
    .selectFrom('population_priors')
    .select(['version', 'prior'])
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .executeTakeFirst();
  return row ? { version: Number(row.version), prior: row.prior } : null;
}

/**
 * Read-modify-write of a tenant's prior inside the caller's transaction: creates the row if
 * missing, locks it, and stores `merge(current)` under a new version. Workers call this last in
 * a batch (after the user locks), so concurrent batches of one tenant queue only briefly here.
 */
export async function mergeIntoPopulation(
  tx: DbOrTx,
  tenant: Tenant,
  empty: unknown,
  merge: (current: unknown) => unknown,
): Promise<StoredPopulation> {
  await tx
    .insertInto('population_priors')
    .values({ account_id: tenant.accountId, environment: tenant.environment, prior: JSON.stringify(empty) })
    .onConflict((oc) => oc.columns(['account_id', 'environment']).doNothing())
    .execute();
  const current = await tx
    .selectFrom('population_priors')
    .select('prior')
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const prior = merge(current.prior);
  const row = await tx
    .updateTable('population_priors')
    .set({ prior: JSON.stringify(prior), version: sql`nextval('population_version_seq')`, updated_at: sql`now()` })
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .returning('version')
    .executeTakeFirstOrThrow();
  return { version: Number(row.version), prior };
}

/** A version newer than any stored so far (fences Redis copies of a deleted prior). */
export async function nextPopulationVersion(db: DbOrTx): Promise<number> {
  const { rows } = await sql<{ version: string }>`select nextval('population_version_seq') as version`.execute(db);
  return Number(rows[0]!.version);
}
