import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { applyOutcomes } from './apply-outcomes';
import { dropVoided } from './drop-voided';
import type { TenantBatch, TenantBatchResult } from './event-batch';
import { readPrior } from './population-prior';
import { resolveDecisions } from './resolve-decisions';
import { seedAndLockProfiles } from './seed-profiles';

/**
 * Applies one tenant's decisions and outcomes inside the caller's transaction
 * (docs/adr/0002-exactly-once-outcomes.md), in four phases: open each outcome's sealed decision; lock
 * the users and drop what erasures and resets voided; create and lock the profiles and store
 * the decisions; apply the outcomes exactly once.
 */
export async function applyTenantEvents(
  target: Omit<TenantBatch, 'result'>,
  { decisions, outcomes }: { decisions: DecisionJob[]; outcomes: OutcomeJob[] },
): Promise<TenantBatchResult> {
  const result: TenantBatchResult = {
    droppedDecisions: new Set(),
    appliedOutcomes: new Set(),
    droppedOutcomes: new Set(),
    outcomeUsers: new Map(),
    updatedProfiles: [],
    population: null,
    replacedStates: [],
    seededProfiles: [],
  };
  const batch: TenantBatch = { ...target, result };
  const { tx, tenant, deps } = batch;
  const resolved = resolveDecisions(batch, decisions, outcomes);
  for (const [requestId, { userHash }] of resolved.sealed) result.outcomeUsers.set(requestId, userHash);
  const live = await dropVoided(batch, resolved);
  // New profiles start from the population prior as it is now (read unlocked: it is locked,
  // merged and written only at the end, so batches queue on it briefly). Read only when a
  // profile is created or an outcome applied: a batch of returning users' decisions needs none.
  let prior: Promise<CompiledPopulation> | undefined;
  const priorOf = () => (prior ??= readPrior({ tx, tenant, learner: deps.learner, memo: deps.priors }));
  // Stored states that could not be read, by user: reported once an outcome replaces them.
  const unreadable = new Map<string, string>();
  const profiles = await seedAndLockProfiles(batch, live, priorOf, (userId, issue) => unreadable.set(userId, issue));
  if (live.outcomes.length > 0) await applyOutcomes(batch, { live, profiles, prior: await priorOf(), unreadable });
  return result;
}
