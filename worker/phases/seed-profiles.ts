import { randomUUID } from 'node:crypto';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { StoredProfile } from '../../shared/profile/profile';
import { insertNewProfiles, lockProfiles, type OnUnreadableState } from '../../shared/profile/profile.repository';
import { compareStrings } from '../../shared/util/compare';
import type { TenantBatch } from './event-batch';
import { insertDecisions } from './events.repository';
import type { LiveEvents } from './drop-voided';

/**
 * Locks the profile rows of the batch's users with outcomes — creating the missing ones from
 * the tenant's population prior — creates the missing profiles of users with only decisions
 * (without reading or locking theirs, and not at all for those this process has seen stored:
 * most are returning users), then stores the batch's decisions. Rows are locked in user order
 * (the existing ones, then those created now), always after the same users' advisory locks, so
 * workers never wait on each other in a cycle. The result's `seededProfiles` receives the
 * decision users whose row exists once this transaction commits. A stored state that cannot be
 * read comes back fresh, and `onUnreadable` hears of it.
 */
export async function seedAndLockProfiles(
  { tx, tenant, deps, result }: TenantBatch,
  live: LiveEvents,
  priorOf: () => Promise<CompiledPopulation>,
  onUnreadable: OnUnreadableState,
): Promise<Map<string, StoredProfile>> {
  const seeded = result.seededProfiles;
  // A decision's generation is the one the API gave its user's cached profile (docs/adr/0003-cache-versioning.md).
  const generations = new Map<string, string>();
  for (const d of live.decisions) if (!generations.has(d.userId)) generations.set(d.userId, d.generation);
  for (const { decision } of live.outcomes) if (!generations.has(decision.userId)) generations.set(decision.userId, randomUUID());
  const learning = new Set(live.outcomes.map(({ decision }) => decision.userId));
  const users = [...learning].sort(compareStrings);
  const profiles = users.length > 0 ? await lockProfiles(tx, tenant, users, onUnreadable) : new Map<string, StoredProfile>();
  // Users whose rows may be missing: those with only decisions here not seen stored, and the learning ones not found.
  const missing = [...generations.keys()].filter(
    (userId) =>
      !profiles.has(userId) && (learning.has(userId) || !deps.knownProfiles.has({ tenant, userId, generation: generations.get(userId)! })),
  );
  for (const [userId, generation] of generations) if (!learning.has(userId)) seeded.push({ userId, generation });
  if (missing.length > 0) {
    // The same for every new user of the tenant: computed once per batch.
    const initialState = deps.learner.initialState(await priorOf());
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
