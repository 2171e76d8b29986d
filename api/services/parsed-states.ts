import { BoundedMap } from '../../shared/cache/bounded-map';
import { tenantKey } from '../../shared/cache/keys';
import type { Tenant } from '../../shared/domain/environment';
import type { Learner } from '../../shared/domain/learner';
import type { StoredProfile } from '../../shared/profile/profile';

/** Users whose parsed state the API keeps (≈ 17 KB each with a full history and the beliefs cached for it). */
export const MAX_PARSED_STATES = 4096;

/**
 * The learner states the API has parsed, one per user, least recently used dropped first.
 *
 * Reading a stored state checks it against the learner's schema, which for a user with a full
 * history costs several times a decision, and the engine caches its beliefs per state object;
 * the profile cache hands out a new object on every read, so both were redone on every request.
 * A profile's generation, version and update time name its state: every write of a state bumps
 * the version (the worker, one per outcome), and an erased profile comes back with a new
 * generation. A new user's two seeds (version 0, one by the API and one by the worker, each
 * from the prior of its moment) differ in their update time.
 */
export class ParsedStates<State = unknown> {
  private readonly entries: BoundedMap<string, { tag: string; state: State }>;

  constructor(
    private readonly learner: Learner<State>,
    capacity = MAX_PARSED_STATES,
  ) {
    this.entries = new BoundedMap(capacity);
  }

  /** The learner's state of `profile`, the profile of user `hash` in `tenant`. */
  get(tenant: Tenant, hash: string, profile: StoredProfile): State {
    const key = tenantKey(tenant, hash);
    const tag = `${profile.generation}:${profile.version}:${profile.updatedAt}`;
    const known = this.entries.get(key);
    if (known?.tag === tag) return known.state;
    const entry = { tag, state: this.learner.parseState(profile.state) };
    this.entries.set(key, entry);
    return entry.state;
  }
}
