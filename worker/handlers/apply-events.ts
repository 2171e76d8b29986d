import { randomUUID } from 'node:crypto';
import type { DbOrTx } from '../../shared/db/database';
import { lockTestDataReset, lockUsers } from '../../shared/db/locks';
import type { Tenant } from '../../shared/domain/environment';
import type { Choice } from '../../shared/domain/arms';
import type { DecisionContext, Learner, SelectionProbabilities } from '../../shared/domain/learner';
import { findPopulation, mergeIntoPopulation, type StoredPopulation } from '../../shared/population/population.repository';
import { computeReward } from '../../shared/domain/reward';
import { readRequestIdClaims } from '../../shared/keys/request-id';
import { changedFields, newProfile, toProfileResponse, type StoredProfile } from '../../shared/profile/profile';
import {
  insertProfilesIfMissing,
  insertVersions,
  lockProfiles,
  updateProfiles,
  type VersionRow,
} from '../../shared/profile/profile.repository';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { erasuresByHash, findDecisions, insertDecisions, insertOutcomes, lastTestReset } from './events.repository';

export type StoredDecision = {
  userId: string;
  choice: Choice;
  probabilities: SelectionProbabilities;
  context: DecisionContext;
  issuedAt: number;
};

export interface ApplyDeps {
  learner: Learner;
  now: Date;
  /** The payload of a decision job still in the queue, or null. */
  findQueuedDecision: (requestId: string) => Promise<DecisionJob | null>;
  /** userHash(secret, tenant, userId) — erasures are recorded under it. */
  hashUser: (tenant: Tenant, userId: string) => string;
}

export interface TenantBatchResult {
  /** Decision request ids dropped because the user was erased (or test data reset) since. */
  droppedDecisions: Set<string>;
  /** Outcomes newly applied; others in the batch had been applied before (retries). */
  appliedOutcomes: Set<string>;
  /** Outcomes dropped because their user was erased (or test data reset) after the decision. */
  droppedOutcomes: Set<string>;
  /** Outcomes whose decision is nowhere to be found and whose user was not erased: retry. */
  missingOutcomes: Set<string>;
  /** Profiles changed by this batch or touched by a retried outcome, to refresh in the cache. */
  updatedProfiles: StoredProfile[];
  /** The tenant's population prior after this batch's outcomes, when they changed it. */
  population: StoredPopulation | null;
  /** Users whose stored learner state was unreadable and replaced by a fresh one (`issue`: what was wrong), by user hash. */
  replacedStates: Array<{ userHash: string; issue: string }>;
}

const compareUser = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Applies one tenant's decisions and outcomes inside the caller's transaction
 * (docs/adr/0002-exactly-once-outcomes.md):
 * 1. find each outcome's decision: in Postgres, in this batch, or — when its own job has not
 *    been applied yet — from that queued job, so outcomes never wait on decision jobs;
 * 2. take the users' advisory locks (shared with erasure; test tenants also share the reset
 *    lock), then drop whatever an erasure or test-data reset issued after has made void;
 * 3. create missing profiles, lock their rows in user order, store the decisions;
 * 4. insert outcomes with ON CONFLICT DO NOTHING — only rows inserted now are applied, so a
 *    retried or duplicated job never counts twice — and run the learner update per outcome in
 *    arrival order, one version per outcome.
 */
export async function applyTenantEvents(
  tx: DbOrTx,
  tenant: Tenant,
  decisions: DecisionJob[],
  outcomes: OutcomeJob[],
  deps: ApplyDeps,
): Promise<TenantBatchResult> {
  const { learner, now } = deps;
  const result: TenantBatchResult = {
    droppedDecisions: new Set(),
    appliedOutcomes: new Set(),
    droppedOutcomes: new Set(),
    missingOutcomes: new Set(),
    updatedProfiles: [],
    population: null,
    replacedStates: [],
  };

  // 1. Decisions of the outcomes.
  outcomes = [...new Map(outcomes.map((o) => [o.requestId, o] as const)).values()];
  const stored = await findDecisions(
    tx,
    tenant,
    outcomes.map((o) => o.requestId),
  );
  const inBatch = new Set(decisions.map((d) => d.requestId));
  const unresolved = outcomes.filter((o) => !stored.has(o.requestId) && !inBatch.has(o.requestId));
  const queued = (await Promise.all(unresolved.map((o) => deps.findQueuedDecision(o.requestId)))).filter(
    (d): d is DecisionJob => d !== null && d.accountId === tenant.accountId && d.environment === tenant.environment,
  );
  decisions = [...decisions, ...queued];
  // A decision job may have completed (and been removed) since the first read: read again.
  const queuedIds = new Set(queued.map((d) => d.requestId));
  const recheck = unresolved.filter((o) => !queuedIds.has(o.requestId)).map((o) => o.requestId);
  for (const [requestId, decision] of await findDecisions(tx, tenant, recheck)) stored.set(requestId, decision);

  // 2. Serialise with erasure and resets, then drop what they voided.
  const userIds = [...new Set([...decisions.map((d) => d.userId), ...[...stored.values()].map((d) => d.userId)])].sort(compareUser);
  if (tenant.environment === 'test') await lockTestDataReset(tx, 'shared');
  await lockUsers(tx, tenant, userIds);
  const missing = outcomes.filter((o) => !stored.has(o.requestId) && !decisions.some((d) => d.requestId === o.requestId));
  const missingClaims = new Map(missing.map((o) => [o.requestId, readRequestIdClaims(o.requestId)] as const));
  const hashOf = new Map(userIds.map((userId) => [userId, deps.hashUser(tenant, userId)] as const));
  const erased = await erasuresByHash(tx, tenant, [
    ...hashOf.values(),
    ...[...missingClaims.values()].flatMap((claims) => (claims ? [claims.userHash] : [])),
  ]);
  const resetAt = await lastTestReset(tx, tenant);
  const voided = (hash: string | undefined, issuedAt: number) => {
    const erasedAt = hash === undefined ? undefined : erased.get(hash);
    return (erasedAt !== undefined && erasedAt >= issuedAt) || (resetAt !== undefined && resetAt >= issuedAt);
  };

  const keptDecisions = decisions.filter((d) => {
    const drop = voided(hashOf.get(d.userId), d.issuedAt);
    if (drop) result.droppedDecisions.add(d.requestId);
    return !drop;
  });
  for (const [requestId, d] of stored) if (voided(hashOf.get(d.userId), d.issuedAt)) stored.delete(requestId);
  for (const d of keptDecisions) {
    stored.set(d.requestId, {
      userId: d.userId,
      choice: d.choice,
      probabilities: d.probabilities,
      context: { complexity: d.context.complexity, taskType: d.context.taskType },
      issuedAt: d.issuedAt,
    });
  }
  const applicable = outcomes.filter((o) => {
    if (stored.has(o.requestId)) return true;
    const claims = missingClaims.get(o.requestId);
    if (claims === null || claims === undefined || voided(claims.userHash, claims.issuedAt)) result.droppedOutcomes.add(o.requestId);
    else result.missingOutcomes.add(o.requestId);
    return false;
  });

  // 3. Profiles and decisions. New profiles start from the population prior (read unlocked:
  // it is locked, merged and written only at the end, so batches queue on it briefly).
  const prior = learner.parsePrior((await findPopulation(tx, tenant))?.prior);
  // The same for every new user of the tenant: computed once per batch.
  const initialState = learner.initialState(prior);
  const seeds = new Map<string, StoredProfile>();
  for (const d of keptDecisions) if (!seeds.has(d.userId)) seeds.set(d.userId, newProfile(d.userId, d.generation, initialState, now));
  for (const o of applicable) {
    const userId = stored.get(o.requestId)!.userId;
    if (!seeds.has(userId)) seeds.set(userId, newProfile(userId, randomUUID(), initialState, now));
  }
  const profileUsers = [...seeds.keys()].sort(compareUser);
  await insertProfilesIfMissing(
    tx,
    tenant,
    profileUsers.map((id) => seeds.get(id)!),
  );
  const profiles = await lockProfiles(tx, tenant, profileUsers);
  await insertDecisions(tx, tenant, keptDecisions);

  // 4. Outcomes, exactly once.
  const inserted = await insertOutcomes(
    tx,
    tenant,
    applicable.map((o) => ({ job: o, userId: stored.get(o.requestId)!.userId, reward: computeReward(o.signals) })),
  );
  const versions: VersionRow[] = [];
  // A user's profile as seen by clients after its latest outcome in this batch: the "before"
  // of the next one, so each outcome summarises the profile once, not twice.
  const shown = new Map<string, ReturnType<typeof toProfileResponse>>();
  const changed = new Set<string>();
  const delta = learner.emptyPrior();
  const ordered = applicable.filter((o) => inserted.has(o.requestId)).sort((a, b) => a.receivedAt - b.receivedAt);
  // A retried outcome (already applied) may follow a failed cache refresh: refresh it again.
  for (const o of applicable) if (!inserted.has(o.requestId)) changed.add(stored.get(o.requestId)!.userId);
  for (const outcome of ordered) {
    const decision = stored.get(outcome.requestId)!;
    const profile = profiles.get(decision.userId)!;
    const before = shown.get(decision.userId) ?? toProfileResponse(profile, learner);
    const reward = computeReward(outcome.signals);
    const current = learner.parseState(profile.state, (issue) =>
      result.replacedStates.push({ userHash: hashOf.get(decision.userId)!, issue }),
    );
    const state = learner.update(current, decision.context, decision.choice, reward, outcome.signals.started, prior);
    learner.observe(delta, prior, current, state, decision.context, decision.choice, decision.probabilities, reward);
    const next: StoredProfile = {
      ...profile,
      state,
      version: profile.version + 1,
      interactionCount: profile.interactionCount + 1,
      updatedAt: now.toISOString(),
    };
    profiles.set(decision.userId, next);
    const after = toProfileResponse(next, learner);
    shown.set(decision.userId, after);
    changed.add(decision.userId);
    versions.push({
      userId: decision.userId,
      version: next.version,
      cause: 'outcome',
      changed: changedFields(before, after),
      createdAt: next.updatedAt,
    });
    result.appliedOutcomes.add(outcome.requestId);
  }
  result.updatedProfiles = [...changed].map((userId) => profiles.get(userId)!);
  await updateProfiles(
    tx,
    tenant,
    [...new Set(ordered.map((o) => stored.get(o.requestId)!.userId))].map((userId) => profiles.get(userId)!),
  );
  await insertVersions(tx, tenant, versions);
  // Every newly applied outcome was folded into the delta.
  if (ordered.length > 0) {
    result.population = await mergeIntoPopulation(tx, tenant, learner.emptyPrior(), (stored) =>
      learner.mergePrior(learner.parsePrior(stored), delta),
    );
  }
  return result;
}
