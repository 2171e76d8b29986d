import { BoundedMap } from '../../shared/cache/bounded-map';
import type { DbOrTx } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { Engine } from '../../shared/domain/engine/engine';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { PopulationPrior } from '../../shared/domain/engine/population';
import {
  findPopulationUnless,
  lockPopulation,
  storePopulation,
  type StoredPopulation,
} from '../../shared/population/population.repository';
import { tenantKey } from '../../shared/domain/environment';

/** Tenants whose parsed prior a worker keeps, least recently used dropped (read again from Postgres when next needed). */
export const MAX_MEMO_PRIORS = 10_000;

/**
 * The population prior of each tenant this worker process last read or wrote, parsed. Prior
 * versions come from a sequence, so a version names one prior: a batch reads and parses the
 * prior's JSON only when another process has stored a newer one since.
 */
export class PriorMemo {
  private readonly byTenant: BoundedMap<string, { version: number; prior: CompiledPopulation }>;

  constructor(capacity = MAX_MEMO_PRIORS) {
    this.byTenant = new BoundedMap(capacity);
  }

  get(tenant: Tenant): { version: number; prior: CompiledPopulation } | undefined {
    return this.byTenant.get(tenantKey(tenant));
  }

  set(tenant: Tenant, version: number, prior: CompiledPopulation): void {
    this.byTenant.set(tenantKey(tenant), { version, prior });
  }
}

/** Whose prior, in which transaction, and what parses, merges and remembers it. */
export interface PriorAccess {
  tx: DbOrTx;
  tenant: Tenant;
  learner: Engine;
  memo: PriorMemo;
}

/** The tenant's prior as it is now (read unlocked: the merge at the end of a batch locks it). */
export async function readPrior({ tx, tenant, learner, memo }: PriorAccess): Promise<CompiledPopulation> {
  const known = memo.get(tenant);
  const read = await findPopulationUnless(tx, tenant, known?.version ?? null);
  if (!read) return learner.emptyPrior();
  // Without a known version the row's prior is always read.
  const prior = read.prior ?? known?.prior ?? learner.emptyPrior();
  memo.set(tenant, read.version, prior);
  return prior;
}

/** Locks the tenant's prior, adds a batch's delta to it and stores it under a new version. */
export async function mergeDelta({ tx, tenant, learner, memo }: PriorAccess, delta: PopulationPrior): Promise<StoredPopulation> {
  const known = memo.get(tenant);
  const read = await lockPopulation(tx, tenant, known?.version ?? null);
  const current = read.prior ?? known?.prior ?? learner.emptyPrior();
  const stored = await storePopulation(tx, tenant, learner.mergePrior(current, delta));
  // Should the transaction roll back, no row ever holds this version: the memo cannot be misled.
  memo.set(tenant, stored.version, stored.prior);
  return stored;
}
