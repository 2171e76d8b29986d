import { BoundedMap } from '../../shared/cache/bounded-map';
import type { Db } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { Engine } from '../../shared/domain/engine/engine';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { Logger } from '../../shared/logger/logger';
import type { PopulationCache } from '../../shared/population/population-cache.repository';
import { findPopulation } from '../../shared/population/population.repository';
import { tenantKey } from '../../shared/domain/environment';

/**
 * How long a tenant's prior is served from memory before the background refresh asks Redis for
 * its version (and fetches and parses it only when it is newer). A young tenant's prior changes
 * with every batch, and each round of lag costs its new users some of their first outcomes
 * (docs/BENCHMARKS.md, bench:live), so the check is frequent; it is one small HGET.
 */
export const POPULATION_REFRESH_MS = 200;
/** While Redis has no copy of a tenant's prior, Postgres is asked at most this often (the context path never queries it). */
export const POPULATION_STORE_REFRESH_MS = 1_000;

/** Tenants whose prior an API process keeps, least recently used dropped (reloaded on its next request). */
export const MAX_TENANT_PRIORS = 10_000;

interface Loaded {
  version: number;
  prior: CompiledPopulation;
}

interface Entry extends Loaded {
  loadedAt: number;
  /**
   * When Postgres was last allowed to answer for this tenant: the first load (which falls back to
   * it when Redis has no copy) and each refresh that went to it. A refresh that finds no Redis
   * copy goes to Postgres only POPULATION_STORE_REFRESH_MS after this.
   */
  storeReadAt: number;
  refreshing: Promise<void> | null;
}

export interface PopulationLoaderDeps {
  /** Answers for a tenant whose prior Redis has no copy of. */
  db: Db;
  cache: PopulationCache;
  learner: Engine;
  logger: Logger;
  /** Ages the priors in memory (injected in tests); Date.now by default. */
  now?: () => number;
}

/**
 * Population priors for the API, kept in process memory: a prior is what a tenant's users have
 * in common, so serving one a fraction of a second old costs little, and keeping it off the
 * request path keeps a cached context call at its two Redis round trips. The first request of a
 * tenant waits for Redis (or Postgres when Redis has no copy); later ones are answered from
 * memory while a refresh runs in the background. A failed refresh keeps serving what is in memory.
 */
export class PopulationLoader {
  private readonly entries = new BoundedMap<string, Entry>(MAX_TENANT_PRIORS);
  /** Background refreshes under way (refreshesDone). */
  private readonly refreshing = new Set<Promise<void>>();
  /** First loads under way, so that concurrent first requests of a tenant share one read. */
  private readonly loading = new Map<string, Promise<Entry>>();

  private readonly db: Db;
  private readonly cache: PopulationCache;
  private readonly learner: Engine;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(deps: PopulationLoaderDeps) {
    ({ db: this.db, cache: this.cache, learner: this.learner, logger: this.logger, now: this.now = Date.now } = deps);
  }

  async get(tenant: Tenant): Promise<CompiledPopulation> {
    const key = tenantKey(tenant);
    const entry = this.entries.get(key);
    if (!entry) {
      let first = this.loading.get(key);
      if (!first) {
        first = this.load(tenant)
          .then((loaded) => {
            const at = this.now();
            const fresh: Entry = { ...loaded, loadedAt: at, storeReadAt: at, refreshing: null };
            this.entries.set(key, fresh);
            return fresh;
          })
          .finally(() => this.loading.delete(key));
        this.loading.set(key, first);
      }
      return (await first).prior;
    }
    if (!entry.refreshing && this.now() - entry.loadedAt >= POPULATION_REFRESH_MS) {
      const refreshing = this.refresh(tenant, entry)
        .then(() => {
          entry.loadedAt = this.now();
        })
        .catch((error: unknown) => this.logger.warn({ err: error }, 'population prior refresh failed'))
        .finally(() => {
          entry.refreshing = null;
          this.refreshing.delete(refreshing);
        });
      entry.refreshing = refreshing;
      this.refreshing.add(refreshing);
    }
    return entry.prior;
  }

  /** Resolves once the background refreshes under way have finished. */
  async refreshesDone(): Promise<void> {
    await Promise.all(this.refreshing);
  }

  /** Replaces the entry's prior by a newer version, if there is one; the same version is the same prior, so its parsed object is kept. */
  private async refresh(tenant: Tenant, entry: Entry): Promise<void> {
    const cachedVersion = await this.cache.readVersion(tenant);
    if (cachedVersion !== null && cachedVersion <= entry.version) return;
    let loaded: Loaded;
    if (cachedVersion === null) {
      const at = this.now();
      if (at - entry.storeReadAt < POPULATION_STORE_REFRESH_MS) return;
      entry.storeReadAt = at;
      loaded = await this.loadFromStore(tenant);
    } else {
      loaded = await this.load(tenant);
    }
    if (loaded.version > entry.version) Object.assign(entry, loaded);
  }

  /** Redis's copy, else Postgres's (the copy can expire or be evicted between the version read and this one). */
  private async load(tenant: Tenant): Promise<Loaded> {
    const cached = await this.cache.read(tenant);
    if (cached) return cached;
    return this.loadFromStore(tenant);
  }

  /** Postgres's prior, copied to Redis for the other API processes. */
  private async loadFromStore(tenant: Tenant): Promise<Loaded> {
    // A prior is an optimisation, not the user's data: when Postgres cannot be read, serve an
    // empty one for now (version -1, replaced by the next successful refresh) rather than fail
    // a context call whose profile is cached.
    const stored = await findPopulation(this.db, tenant).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'population prior unavailable; serving an empty prior');
      return undefined;
    });
    if (stored === undefined) return { version: -1, prior: this.learner.emptyPrior() };
    if (!stored) return { version: 0, prior: this.learner.emptyPrior() };
    await this.cache.writeManyIfNewer([{ tenant, population: stored }]);
    return stored;
  }
}
