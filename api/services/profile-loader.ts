import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { Engine } from '../../shared/domain/engine/engine';
import { newProfile, type StoredProfile } from '../../shared/profile/profile';
import type { KeyClaim } from '../../shared/idempotency/idempotency.repository';
import type { FreshProfile, FreshRead, ProfileCache } from '../../shared/profile/profile-cache.repository';
import { PENDING_OUTCOME_HORIZON_MS, type SettledOutcomes } from '../../shared/profile/pending-outcomes.repository';
import { findProfile } from '../../shared/profile/profile.repository';
import type { ApiMetrics } from '../../shared/metrics/metrics';
import type { KnownUser, KnownUsers } from './known-users';
import type { PopulationLoader } from './population-loader';

/** A live request's limit check, made together with its first profile read (one Redis call). */
export interface LimitWithRead {
  withRead(read: FreshRead): Promise<FreshProfile>;
}

/**
 * One request's read of a user's profile: whose, and what its first Redis round trip settles
 * with it — a live key's limit check that the route deferred (`limit`, which throws its
 * refusal) and the request's idempotency claim (`claim`, which throws IdempotencyKeyHeld). The
 * route makes it and only the loader reads it: the one seam through which a request's other
 * checks ride on its profile read (docs/adr/0016-hot-path.md).
 */
export interface ProfileRead {
  user: KnownUser;
  limit?: LimitWithRead | undefined;
  claim?: KeyClaim | undefined;
}

/** How long a profile read waits for a worker to apply the user's pending outcomes. */
export const OUTCOME_WAIT_MS = 250;
/** While waiting, the marks are read again at least this often (should a notice be lost). */
const RECHECK_MS = 50;

export interface ProfileLoaderDeps {
  /** Answers a cache miss. */
  db: Db;
  cache: ProfileCache;
  learner: Engine;
  /** The tenant's prior, a new profile's starting point. */
  populations: PopulationLoader;
  /** The worker's notices that a user's pending outcomes are applied, which a read waits for. */
  settled: SettledOutcomes;
  /** The profile last read of each user, kept decoded. */
  users: KnownUsers;
  metrics: Pick<ApiMetrics, 'profileCacheRead'>;
}

/**
 * Cache-first profile reads. A hit is one Redis round trip; a miss reads Postgres once and
 * caches the row (never over a newer cached version). Reads see the user's own outcomes: while
 * an outcome accepted in the last few seconds is not applied yet, the read waits for the
 * worker's notice that it is (or re-checks), for up to OUTCOME_WAIT_MS
 * (docs/adr/0008-read-your-outcomes.md), then answers with what it has.
 *
 * The profile it last read of each user stays decoded in memory (KnownUsers), named by version,
 * generation and update time (docs/adr/0003-cache-versioning.md): Redis sends a cached profile
 * only when it differs from the copy held, so a returning user's read moves and parses no JSON.
 * Callers never mutate a profile they are given.
 */
export class ProfileLoader {
  /** Reads that waited for the user's pending outcomes, by how the wait ended (for tests and metrics). */
  readonly waits = { settled: 0, timedOut: 0 };

  private readonly db: Db;
  private readonly cache: ProfileCache;
  private readonly learner: Engine;
  private readonly populations: PopulationLoader;
  private readonly settled: SettledOutcomes;
  private readonly users: KnownUsers;
  private readonly metrics: Pick<ApiMetrics, 'profileCacheRead'>;

  constructor(deps: ProfileLoaderDeps) {
    ({
      db: this.db,
      cache: this.cache,
      learner: this.learner,
      populations: this.populations,
      settled: this.settled,
      users: this.users,
      metrics: this.metrics,
    } = deps);
  }

  /** The user's profile, or null when it exists neither in the cache nor in Postgres. */
  async find(tenant: Tenant, userId: string): Promise<StoredProfile | null> {
    return this.findKnown({ user: this.users.of(tenant, userId) });
  }

  /** `find` for one request's read: its first round trip carries what `read` settles with it. */
  private async findKnown(read: ProfileRead): Promise<StoredProfile | null> {
    const { user } = read;
    const { tenant, userId } = user;
    const known = user.profile;
    const since = () => Date.now() - PENDING_OUTCOME_HORIZON_MS;
    const readAgain = () => this.cache.readFresh(user, since(), known);
    const firstRead = this.cache.prepareFresh(user, since(), known, read.claim);
    let current = read.limit ? await read.limit.withRead(firstRead) : await this.cache.sendFresh(firstRead);
    if (current.pending > 0) {
      const deadline = Date.now() + OUTCOME_WAIT_MS;
      const key = this.settled.keyOf(tenant, user.hash);
      for (;;) {
        const settlement = this.settled.listen(key);
        current = await readAgain();
        const left = deadline - Date.now();
        if (current.pending === 0 || left <= 0) {
          settlement.cancel();
          this.waits[current.pending === 0 ? 'settled' : 'timedOut']++;
          break;
        }
        await settlement.wait(Math.min(RECHECK_MS, left));
      }
    }
    const cached = current.profile;
    this.metrics.profileCacheRead(cached !== null);
    if (cached) {
      user.profile = cached;
      return cached;
    }
    const stored = await findProfile(this.db, tenant, userId);
    if (stored) await this.cache.writeIfNewer(tenant, stored);
    return stored;
  }

  /** The user's profile, created lazily in cold_start (persisted by the worker). */
  async findOrCreate(read: ProfileRead): Promise<StoredProfile> {
    const found = await this.findKnown(read);
    if (found) return found;
    const { tenant, userId } = read.user;
    return this.cache.putIfAbsent(tenant, await this.seed({ tenant, userId, generation: randomUUID() }, new Date()));
  }

  /** A new profile for this user under `generation`, starting from the tenant's population prior. */
  async seed(profile: { tenant: Tenant; userId: string; generation: string }, now: Date): Promise<StoredProfile> {
    const { tenant, userId, generation } = profile;
    return newProfile({ userId, generation }, this.learner.initialState(await this.populations.get(tenant)), now);
  }
}
