import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import { emptyPrior, readPopulation } from '../domain/engine/engine';
import { emptyPopulation } from '../domain/engine/population';
import type { CompiledPopulation } from '../domain/engine/population-model';
import type { Tenant } from '../domain/environment';

/**
 * A tenant's population prior and a version that only grows. Read here, once, into the
 * engine's prior (its stored sums checked and compiled); written as those sums.
 */
export interface StoredPopulation {
  version: number;
  prior: CompiledPopulation;
}

export async function findPopulation(db: DbOrTx, tenant: Tenant): Promise<StoredPopulation | null> {
  const row = await db
    .selectFrom('population_priors')
    .select(['version', 'prior'])
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .executeTakeFirst();
  return row ? { version: Number(row.version), prior: readPopulation(row.prior) } : null;
}

/** A stored prior's version, and the prior unless it is the version the caller already holds. */
export interface PopulationRead {
  version: number;
  /** Absent when `version` is the known version. */
  prior?: CompiledPopulation;
}

const readUnless = (knownVersion: number | null) =>
  sql`select version, case when version = ${knownVersion}::bigint then null else prior end as prior`;

const toRead = (row: { version: string; prior?: unknown }): PopulationRead =>
  row.prior === null || row.prior === undefined
    ? { version: Number(row.version) }
    : { version: Number(row.version), prior: readPopulation(row.prior) };

/** Like findPopulation, without sending the prior back when it is still `knownVersion`. */
export async function findPopulationUnless(db: DbOrTx, tenant: Tenant, knownVersion: number | null): Promise<PopulationRead | null> {
  const { rows } = await sql<{ version: string; prior: unknown }>`${readUnless(knownVersion)} from population_priors
    where account_id = ${tenant.accountId} and environment = ${tenant.environment}`.execute(db);
  return rows[0] ? toRead(rows[0]) : null;
}

/**
 * Locks a tenant's prior row inside the caller's transaction, creating it empty when missing.
 * Workers lock it last in a batch (after the user locks), so concurrent batches of one tenant
 * queue only briefly here.
 */
export async function lockPopulation(tx: DbOrTx, tenant: Tenant, knownVersion: number | null): Promise<PopulationRead> {
  const lock = () =>
    sql<{ version: string; prior: unknown }>`${readUnless(knownVersion)} from population_priors
      where account_id = ${tenant.accountId} and environment = ${tenant.environment} for update`.execute(tx);
  let { rows } = await lock();
  if (!rows[0]) {
    await tx
      .insertInto('population_priors')
      .values({ account_id: tenant.accountId, environment: tenant.environment, prior: JSON.stringify(emptyPopulation()) })
      .onConflict((oc) => oc.columns(['account_id', 'environment']).doNothing())
      .execute();
    ({ rows } = await lock());
  }
  return toRead(rows[0]!);
}

/** Stores a locked row's new prior (its sums) under a new version. */
export async function storePopulation(tx: DbOrTx, tenant: Tenant, prior: CompiledPopulation): Promise<StoredPopulation> {
  const row = await tx
    .updateTable('population_priors')
    .set({ prior: JSON.stringify(prior.sums), version: sql`nextval('population_version_seq')`, updated_at: sql`now()` })
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .returning('version')
    .executeTakeFirstOrThrow();
  return { version: Number(row.version), prior };
}

/** Read-modify-write of a tenant's prior inside the caller's transaction (lockPopulation, then `merge(current)` stored). */
export async function mergeIntoPopulation(
  tx: DbOrTx,
  tenant: Tenant,
  merge: (current: CompiledPopulation) => CompiledPopulation,
): Promise<StoredPopulation> {
  const current = await lockPopulation(tx, tenant, null);
  return storePopulation(tx, tenant, merge(current.prior ?? emptyPrior()));
}

/** A version newer than any stored so far (fences Redis copies of a deleted prior). */
export async function nextPopulationVersion(db: DbOrTx): Promise<number> {
  const { rows } = await sql<{ version: string }>`select nextval('population_version_seq') as version`.execute(db);
  return Number(rows[0]!.version);
}
