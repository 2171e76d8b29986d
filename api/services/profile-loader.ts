import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { Learner } from '../../shared/domain/learner';
import { newProfile, type StoredProfile } from '../../shared/profile/profile';
import type { ProfileCache } from '../../shared/profile/profile-cache.repository';
import { findProfile } from '../../shared/profile/profile.repository';
import type { PopulationLoader } from './population-loader';

/**
 * Cache-first profile reads. A hit is one Redis round trip; a miss reads Postgres once and
 * caches the row (never over a newer cached version).
 */
export class ProfileLoader {
  constructor(
    private readonly db: Db,
    private readonly cache: ProfileCache,
    private readonly learner: Learner,
    private readonly populations: PopulationLoader,
  ) {}

  /** The user's profile, or null when it exists neither in the cache nor in Postgres. */
  async find(tenant: Tenant, userId: string): Promise<StoredProfile | null> {
    const cached = await this.cache.read(tenant, userId);
    if (cached) return cached;
    const stored = await findProfile(this.db, tenant, userId);
    if (stored) await this.cache.writeIfNewer(tenant, stored);
    return stored;
  }

  /** The user's profile, created lazily in cold_start (persisted by the worker). */
  async findOrCreate(tenant: Tenant, userId: string): Promise<StoredProfile> {
    const found = await this.find(tenant, userId);
    if (found) return found;
    return this.cache.putIfAbsent(tenant, await this.seed(tenant, userId, randomUUID(), new Date()));
  }

  /** A new profile for this user, starting from the tenant's population prior. */
  async seed(tenant: Tenant, userId: string, generation: string, now: Date): Promise<StoredProfile> {
    return newProfile(userId, generation, this.learner.initialState(await this.populations.get(tenant)), now);
  }
}
