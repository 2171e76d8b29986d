import { BoundedMap } from '../../shared/cache/bounded-map';
import type { RedisKeys } from '../../shared/redis/key-names';
import type { Tenant } from '../../shared/domain/environment';
import { userHash } from '../../shared/ids/user-hash';
import type { StoredProfile } from '../../shared/profile/profile';

/** Users the API keeps in memory (each holds its profile, whose learner state is ≤ 8 KiB stored). */
export const MAX_KNOWN_USERS = 4096;

/** What the API remembers of one user of one tenant between requests. */
export interface KnownUser {
  readonly tenant: Tenant;
  readonly userId: string;
  /** userHash(secret, tenant, userId). */
  readonly hash: string;
  /** The Redis keys of the user's cached profile and pending-outcome marks. */
  readonly profileKey: string;
  readonly pendingKey: string;
  /**
   * The profile last read, decoded with its learner state (docs/adr/0003-cache-versioning.md);
   * never mutated, so the engine keeps its inference for the state while neither changes.
   */
  profile: StoredProfile | null;
}

/**
 * Everything the API keeps per user, in one place and one lookup per request: the keyed hash,
 * the Redis keys and the last profile read, state included. A returning user's context call
 * then computes no HMAC, builds no key and parses no state (docs/adr/0016-hot-path.md). Bounded;
 * evicted by CLOCK (shared/cache/bounded-map.ts). Profiles and states are checked against Redis
 * on every read (ProfileLoader), so a forgotten or stale entry costs work, never a wrong answer.
 */
export class KnownUsers {
  private readonly users: BoundedMap<string, KnownUser>;

  constructor(
    private readonly keys: RedisKeys,
    private readonly secret: string,
    capacity = MAX_KNOWN_USERS,
  ) {
    this.users = new BoundedMap(capacity);
  }

  of(tenant: Tenant, userId: string): KnownUser {
    // NUL cannot occur in an account id, an environment or a userId (control characters are refused).
    const id = `${tenant.accountId}\u0000${tenant.environment}\u0000${userId}`;
    let user = this.users.get(id);
    if (user === undefined) {
      const hash = userHash(this.secret, tenant, userId);
      user = {
        tenant: { accountId: tenant.accountId, environment: tenant.environment },
        userId,
        hash,
        profileKey: this.keys.profile(tenant, userId),
        pendingKey: this.keys.pendingOutcomes(tenant, hash),
        profile: null,
      };
      this.users.set(id, user);
    }
    return user;
  }
}
