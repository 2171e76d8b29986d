import type { DbOrTx } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { applyOutcomes } from './apply-outcomes';
import { dropVoided } from './drop-voided';
import type { ApplyDeps, TenantBatchResult } from './event-batch';
import { readPrior } from './population-prior';
import { resolveDecisions } from './resolve-decisions';
import { seedAndLockProfiles } from './seed-profiles';

/**
 * Applies one tenant's decisions and outcomes inside the caller's transaction
 * (docs/adr/0002-exactly-once-outcomes.md), in four phases: find each outcome's decision; lock
 * the users and drop what erasures and resets voided; create and lock the profiles and store
 * the decisions; apply the outcomes exactly once.
 */
export async function applyTenantEvents(
  tx: DbOrTx,
  tenant: Tenant,
  decisions: DecisionJob[],
  outcomes: OutcomeJob[],
  deps: ApplyDeps,
): Promise<TenantBatchResult> {
  const result: TenantBatchResult = {
    droppedDecisions: new Set(),
    appliedOutcomes: new Set(),
    droppedOutcomes: new Set(),
    missingOutcomes: new Set(),
    updatedProfiles: [],
    population: null,
    replacedStates: [],
    seededProfiles: [],
  };
  const resolved = await resolveDecisions(tx, tenant, decisions, outcomes, deps);
  const live = await dropVoided(tx, tenant, resolved, deps.hashUser, result);
  // New profiles start from the population prior as it is now (read unlocked: it is locked,
  // merged and written only at the end, so batches queue on it briefly). Read only when a
  // profile is created or an outcome applied: a batch of returning users' decisions needs none.
  let prior: Promise<unknown> | undefined;
  const priorOf = () => (prior ??= readPrior(tx, tenant, deps.learner, deps.priors));
  const profiles = await seedAndLockProfiles(tx, tenant, live, priorOf, deps, result.seededProfiles);
  if (live.outcomes.length > 0) await applyOutcomes(tx, tenant, live, profiles, await priorOf(), deps, result);
  return result;
}
