import { readEngineState } from '../../shared/domain/engine/engine';
import type { EngineState } from '../../shared/domain/engine/state';
import type { StoredProfile } from '../../shared/profile/profile';
import type { KnownUser } from './known-users';

/**
 * The learner state of a user's profile, parsed once per stored version and kept with the
 * user (KnownUsers).
 *
 * Reading a stored state checks it against the learner's schema, which for a user with a full
 * history costs several times a decision, and the engine caches its beliefs per state object;
 * the profile cache hands out a new object whenever the profile changed, so both were redone on
 * every request. A profile's generation, version and update time name its state: every write of
 * a state bumps the version (the worker, one per outcome), and an erased profile comes back with
 * a new generation. A new user's two seeds (version 0, one by the API and one by the worker, each
 * from the prior of its moment) differ in their update time.
 */
export class ParsedStates {
  /** The learner's state of `profile`, the current profile of `user`. */
  get(user: KnownUser, profile: StoredProfile): EngineState {
    const tag = `${profile.generation}:${profile.version}:${profile.updatedAt}`;
    const known = user.parsed;
    if (known?.tag === tag) return known.state;
    const state = readEngineState(profile.state);
    user.parsed = { tag, state };
    return state;
  }
}
