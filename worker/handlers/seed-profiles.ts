import { randomUUID } from 'node:crypto';
import type { DbOrTx } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { StoredProfile } from '../../shared/profile/profile';
import { insertNewProfiles, lockProfiles } from '../../shared/profile/profile.repository';
import { compareStrings } from '../../shared/util/compare';
import type { ApplyDeps } from './event-batch';
import { insertDecisions } from './events.repository';
import type { LiveEvents } from './drop-voided';

/**
 * Locks the profile rows of the batch's users with outcomes — creating the missing ones from
 * the tenant's population prior — creates the missing profiles of users with only decisions
 * (without reading or locking theirs: most are returning users), then stores the batch's
 * decisions. Rows are locked in user order (the existing ones, then those created now), always
 * after the same users' advisory locks, so workers never wait on each other in a cycle.
 */
export async function seedAndLockProfiles(
  tx: DbOrTx,
  tenant: Tenant,
  live: LiveEvents,
  prior: unknown,
  deps: Pick<ApplyDeps, 'learner' | 'now'>,
): Promise<Map<string, StoredProfile>> {
  // A decision's generation is the one the API gave its user's cached profile (docs/adr/0003-cache-versioning.md).
  const generations = new Map<string, string>();
  for (const d of live.decisions) if (!generations.has(d.userId)) generations.set(d.userId, d.generation);
  for (const { decision } of live.outcomes) if (!generations.has(decision.userId)) generations.set(decision.userId, randomUUID());
  const learning = new Set(live.outcomes.map(({ decision }) => decision.userId));
  const users = [...learning].sort(compareStrings);
  const profiles = await lockProfiles(tx, tenant, users);
  // Users whose rows may be missing: those with only decisions here, and the learning ones not found.
  const missing = [...generations.keys()].filter((userId) => !profiles.has(userId));
  if (missing.length > 0) {
    // The same for every new user of the tenant: computed once per batch.
    const initialState = deps.learner.initialState(prior);
    await insertNewProfiles(
      tx,
      tenant,
      missing.map((userId) => ({ userId, generation: generations.get(userId)! })),
      initialState,
      deps.now,
    );
    const created = missing.filter((userId) => learning.has(userId));
    for (const [userId, profile] of await lockProfiles(tx, tenant, created)) profiles.set(userId, profile);
  }
  await insertDecisions(tx, tenant, live.decisions);
  return profiles;
}
