import { BoundedMap } from '../../shared/cache/bounded-map';
import type { Tenant } from '../../shared/domain/environment';
import { tenantKey } from '../../shared/domain/environment';

/** Profiles a worker remembers as stored; the least recently used are forgotten first. */
export const MAX_KNOWN_PROFILES = 100_000;

/**
 * Profile rows this worker process has seen committed, by tenant, user and generation: a
 * decision of a returning user needs no profile insert. A generation names one life of a
 * profile — an erased or reset profile comes back under a new one — so a remembered row is
 * never taken for its successor (docs/adr/0016-hot-path.md). Entries are added only after the
 * transaction that made or saw the row has committed.
 */
export class KnownProfiles {
  private readonly known = new BoundedMap<string, true>(MAX_KNOWN_PROFILES);

  has(profile: { tenant: Tenant; userId: string; generation: string }): boolean {
    const { tenant, userId, generation } = profile;
    return this.known.get(tenantKey(tenant, generation, userId)) === true;
  }

  add(tenant: Tenant, users: Iterable<{ userId: string; generation: string }>): void {
    for (const { userId, generation } of users) this.known.set(tenantKey(tenant, generation, userId), true);
  }
}
