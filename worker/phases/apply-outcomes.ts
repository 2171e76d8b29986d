import type { Engine } from '../../shared/domain/engine/engine';
import type { PopulationPrior } from '../../shared/domain/engine/population';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import { computeReward } from '../../shared/domain/reward';
import { changedFields, shownProfile, type StoredProfile } from '../../shared/profile/profile';
import { insertVersions, updateProfiles, type VersionRow } from '../../shared/profile/profile.repository';
import type { TenantBatch } from './event-batch';
import { insertOutcomes } from './events.repository';
import type { LiveEvents } from './drop-voided';
import { mergeDelta } from './population-prior';

type LiveOutcome = LiveEvents['outcomes'][number] & { reward: number };

/** What a batch's users' outcomes are applied with, and where their population delta and version rows go. */
interface Application {
  learner: Engine;
  now: Date;
  prior: CompiledPopulation;
  delta: PopulationPrior;
  versions: VersionRow[];
}

/**
 * Applies one user's newly inserted outcomes in arrival order: the learner update, one version
 * (and version row) per outcome, the population delta. The profile is written once for all of them.
 */
function applyUserOutcomes(
  profile: StoredProfile,
  outcomes: LiveOutcome[],
  { learner, now, prior, delta, versions }: Application,
): StoredProfile {
  const updatedAt = now.toISOString();
  let state = profile.state;
  let count = profile.interactionCount;
  let shown = shownProfile(profile.pins, learner.summarize(state), count);
  for (const { job, decision, reward } of outcomes) {
    const { context, choice, probabilities } = decision;
    const feedback = { context, choice, probabilities, reward, started: job.signals.started };
    const next = learner.update(state, feedback, prior);
    learner.observe(delta, prior, { before: state, after: next, feedback });
    state = next;
    count += 1;
    const after = shownProfile(profile.pins, learner.summarize(state), count);
    versions.push({
      userId: profile.userId,
      version: profile.version + (count - profile.interactionCount),
      cause: 'outcome',
      changed: changedFields(shown, after),
      createdAt: updatedAt,
    });
    shown = after;
  }
  const applied = count - profile.interactionCount;
  return {
    userId: profile.userId,
    generation: profile.generation,
    pins: profile.pins,
    state,
    version: profile.version + applied,
    interactionCount: count,
    updatedAt,
  };
}

/**
 * Inserts the outcomes with ON CONFLICT DO NOTHING — only rows inserted now are applied, so a
 * retried or duplicated job never counts twice (docs/adr/0002-exactly-once-outcomes.md) — and
 * applies them per user; then one statement each for the profiles and the version rows, and the
 * batch's delta merged into the tenant's population prior. `unreadable` holds, per user, what
 * was wrong with a stored state the profile read replaced by a fresh one: it is reported when the
 * fresh one is written, that is when an outcome is applied.
 */
export async function applyOutcomes(
  { tx, tenant, deps, result }: TenantBatch,
  {
    live,
    profiles,
    prior,
    unreadable,
  }: { live: LiveEvents; profiles: Map<string, StoredProfile>; prior: CompiledPopulation; unreadable: Map<string, string> },
): Promise<void> {
  const rewarded = live.outcomes.map(({ job, decision }) => ({ job, decision, reward: computeReward(job.signals) }));
  const inserted = await insertOutcomes(
    tx,
    tenant,
    rewarded.map(({ job, decision, reward }) => ({ job, userId: decision.userId, reward, issuedAt: decision.issuedAt })),
  );
  const byUser = new Map<string, LiveOutcome[]>();
  const touched = new Set<string>();
  for (const o of [...rewarded].sort((a, b) => a.job.receivedAt - b.job.receivedAt)) {
    const userId = o.decision.userId;
    // A retried outcome (already applied) may follow a failed cache refresh: refresh its profile again.
    touched.add(userId);
    if (!inserted.has(o.job.requestId)) continue;
    const list = byUser.get(userId);
    if (list) list.push(o);
    else byUser.set(userId, [o]);
    result.appliedOutcomes.add(o.job.requestId);
  }
  const application: Application = { learner: deps.learner, now: deps.now, prior, delta: deps.learner.emptyDelta(), versions: [] };
  const { delta, versions } = application;
  const updated: StoredProfile[] = [];
  for (const [userId, outcomes] of byUser) {
    const issue = unreadable.get(userId);
    if (issue !== undefined) result.replacedStates.push({ userHash: live.hashOf.get(userId)!, issue });
    const next = applyUserOutcomes(profiles.get(userId)!, outcomes, application);
    profiles.set(userId, next);
    updated.push(next);
  }
  result.updatedProfiles = [...touched].map((userId) => profiles.get(userId)!);
  if (updated.length === 0) return;
  await updateProfiles(tx, tenant, updated);
  await insertVersions(tx, tenant, versions);
  result.population = await mergeDelta({ tx, tenant, learner: deps.learner, memo: deps.priors }, delta);
}
