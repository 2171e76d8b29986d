import { randomUUID } from 'node:crypto';
import type { DbOrTx } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { Choice } from '../../shared/domain/arms';
import type { DecisionContext, Learner } from '../../shared/domain/learner';
import { computeReward } from '../../shared/domain/reward';
import { changedFields, newProfile, toProfileResponse, type StoredProfile } from '../../shared/profile/profile';
import {
  insertProfilesIfMissing,
  insertVersions,
  lockProfiles,
  updateProfiles,
  type VersionRow,
} from '../../shared/profile/profile.repository';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { erasedSince, findDecisions, insertDecisions, insertOutcomes, lastTestReset } from './events.repository';

export interface TenantBatchResult {
  /** Decision request ids dropped because the user was erased (or test data reset) since. */
  droppedDecisions: Set<string>;
  /** Outcomes newly applied; others in the batch had been applied before (retries). */
  appliedOutcomes: Set<string>;
  /** Outcomes dropped because their decision was erased with its user. */
  droppedOutcomes: Set<string>;
  /** Profiles changed by this batch or touched by a retried outcome, to refresh in the cache. */
  updatedProfiles: StoredProfile[];
}

const compareUser = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Applies one tenant's decisions and outcomes inside the caller's transaction
 * (docs/adr/0002-exactly-once-outcomes.md):
 * 1. find each outcome's decision: in Postgres, in this batch, or — when its own job has not
 *    been applied yet — from that queued job (`findQueuedDecision`), so outcomes never wait on
 *    decision jobs; store decisions, skipping users erased since they were issued;
 * 2. create missing profiles, then lock every involved profile row in user order;
 * 3. insert outcomes with ON CONFLICT DO NOTHING — only rows inserted now are applied, so a
 *    retried or duplicated job never counts twice;
 * 4. run the learner update per outcome in arrival order, one version per outcome.
 */
export async function applyTenantEvents(
  tx: DbOrTx,
  tenant: Tenant,
  decisions: DecisionJob[],
  outcomes: OutcomeJob[],
  learner: Learner,
  now: Date,
  findQueuedDecision: (requestId: string) => Promise<DecisionJob | null>,
): Promise<TenantBatchResult> {
  const result: TenantBatchResult = {
    droppedDecisions: new Set(),
    appliedOutcomes: new Set(),
    droppedOutcomes: new Set(),
    updatedProfiles: [],
  };

  outcomes = [...new Map(outcomes.map((o) => [o.requestId, o] as const)).values()];
  const stored = await findDecisions(tx, tenant, outcomes.map((o) => o.requestId));
  const inBatch = new Set(decisions.map((d) => d.requestId));
  const unresolved = outcomes.filter((o) => !stored.has(o.requestId) && !inBatch.has(o.requestId));
  const queued = await Promise.all(unresolved.map((o) => findQueuedDecision(o.requestId)));
  decisions = [...decisions, ...queued.filter((d): d is DecisionJob => d !== null && d.accountId === tenant.accountId && d.environment === tenant.environment)];

  const erased = await erasedSince(tx, tenant, [...new Set(decisions.map((d) => d.userId))]);
  const resetAt = decisions.length > 0 ? await lastTestReset(tx, tenant) : undefined;
  const keptDecisions = decisions.filter((d) => {
    const erasedAt = erased.get(d.userId);
    const drop = (erasedAt !== undefined && erasedAt >= d.issuedAt) || (resetAt !== undefined && resetAt >= d.issuedAt);
    if (drop) result.droppedDecisions.add(d.requestId);
    return !drop;
  });

  for (const d of keptDecisions) {
    stored.set(d.requestId, { userId: d.userId, choice: d.choice, context: { complexity: d.context.complexity, taskType: d.context.taskType } });
  }
  const applicable = outcomes.filter((o) => {
    if (stored.has(o.requestId)) return true;
    // Neither stored nor queued: its decision was erased with the user.
    result.droppedOutcomes.add(o.requestId);
    return false;
  });

  const seeds = new Map<string, StoredProfile>();
  for (const d of keptDecisions) if (!seeds.has(d.userId)) seeds.set(d.userId, newProfile(d.userId, d.generation, learner, now));
  for (const o of applicable) {
    const userId = stored.get(o.requestId)!.userId;
    if (!seeds.has(userId)) seeds.set(userId, newProfile(userId, randomUUID(), learner, now));
  }
  const userIds = [...seeds.keys()].sort(compareUser);
  await insertProfilesIfMissing(tx, tenant, userIds.map((id) => seeds.get(id)!));
  const profiles = await lockProfiles(tx, tenant, userIds);

  await insertDecisions(tx, tenant, keptDecisions);
  const inserted = await insertOutcomes(
    tx,
    tenant,
    applicable.map((o) => ({ job: o, userId: stored.get(o.requestId)!.userId, reward: computeReward(o.signals) })),
  );

  const versions: VersionRow[] = [];
  const changed = new Set<string>();
  const ordered = applicable.filter((o) => inserted.has(o.requestId)).sort((a, b) => a.receivedAt - b.receivedAt);
  // A retried outcome (already applied) may follow a failed cache refresh: refresh it again.
  for (const o of applicable) if (!inserted.has(o.requestId)) changed.add(stored.get(o.requestId)!.userId);
  for (const outcome of ordered) {
    const decision = stored.get(outcome.requestId)!;
    const profile = profiles.get(decision.userId)!;
    const before = toProfileResponse(profile, learner);
    const state = learner.update(
      learner.parseState(profile.state),
      decision.context,
      decision.choice,
      computeReward(outcome.signals),
      outcome.signals.started,
    );
    const next: StoredProfile = {
      ...profile,
      state,
      version: profile.version + 1,
      interactionCount: profile.interactionCount + 1,
      updatedAt: now.toISOString(),
    };
    profiles.set(decision.userId, next);
    changed.add(decision.userId);
    versions.push({
      userId: decision.userId,
      version: next.version,
      cause: 'outcome',
      changed: changedFields(before, toProfileResponse(next, learner)),
      createdAt: next.updatedAt,
    });
    result.appliedOutcomes.add(outcome.requestId);
  }
  result.updatedProfiles = [...changed].map((userId) => profiles.get(userId)!);
  await updateProfiles(tx, tenant, [...new Set(ordered.map((o) => stored.get(o.requestId)!.userId))].map((userId) => profiles.get(userId)!));
  await insertVersions(tx, tenant, versions);
  return result;
}

export type StoredDecision = { userId: string; choice: Choice; context: DecisionContext };
