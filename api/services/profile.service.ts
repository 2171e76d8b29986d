import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db/database';
import type { Pins } from '../../shared/domain/arms';
import type { Tenant } from '../../shared/domain/environment';
import type { Engine } from '../../shared/domain/engine/engine';
import type { Logger } from '../../shared/logger/logger';
import { AppError } from '../../shared/errors/app-error';
import { changedFields, toProfileResponse, type ProfileResponse } from '../../shared/profile/profile';
import type { ProfileCache } from '../../shared/profile/profile-cache.repository';
import type { IdempotencyRecords } from '../../shared/idempotency/idempotency.repository';
import {
  eraseUser,
  findProfile,
  insertProfilesIfMissing,
  insertVersions,
  listVersions,
  updateProfiles,
} from '../../shared/profile/profile.repository';
import type { ProfileUpdate } from '../schemas/request.schemas';
import type { VersionsPage } from '../schemas/response.schemas';
import { lockUsers } from '../../shared/db/locks';
import { userHash } from '../../shared/ids/user-hash';
import { compareStrings } from '../../shared/util/compare';
import type { ProfileLoader } from './profile-loader';
import { requestedPins } from './profile-update';

const userNotFound = (userId: string) => new AppError('USER_NOT_FOUND', `No profile for user ${JSON.stringify(userId)}`);

/** GET/PUT/DELETE /v1/profile/:userId and its version history. */
export interface ProfileServiceDeps {
  db: Db;
  cache: ProfileCache;
  loader: ProfileLoader;
  learner: Engine;
  /** Erased with the user. */
  idempotency: IdempotencyRecords;
  secret: string;
  /** Hears of a stored learner state a PUT replaced because it could not be read. */
  logger: Pick<Logger, 'warn'>;
}

export class ProfileService {
  private readonly db: Db;
  private readonly cache: ProfileCache;
  private readonly loader: ProfileLoader;
  private readonly learner: Engine;
  private readonly idempotency: IdempotencyRecords;
  private readonly secret: string;
  private readonly logger: Pick<Logger, 'warn'>;

  constructor(deps: ProfileServiceDeps) {
    ({
      db: this.db,
      cache: this.cache,
      loader: this.loader,
      learner: this.learner,
      idempotency: this.idempotency,
      secret: this.secret,
      logger: this.logger,
    } = deps);
  }

  async get(tenant: Tenant, userId: string): Promise<ProfileResponse> {
    const profile = await this.loader.find(tenant, userId);
    if (!profile) throw userNotFound(userId);
    return toProfileResponse(profile, this.learner);
  }

  /** Pins (value) and unpins (null) dimensions (profile-update.ts); a no-op change does not bump the version. */
  async update(tenant: Tenant, userId: string, update: ProfileUpdate): Promise<ProfileResponse> {
    const cached = await this.cache.read(tenant, userId);
    const now = new Date();
    const seed = await this.loader.seed({ tenant, userId, generation: cached?.generation ?? randomUUID() }, now);
    // A stored state that cannot be read is written back fresh with the new pins: said once committed, as the worker says it.
    let replaced: string | undefined;
    const saved = await this.db.transaction().execute(async (tx) => {
      replaced = undefined;
      await insertProfilesIfMissing(tx, tenant, [seed]);
      const current = (await findProfile(tx, tenant, userId, true, (_, issue) => (replaced = issue)))!;
      // Read-only fields are compared with the profile as GET shows it: the cached copy of this
      // version (a new user's is cached by the API before the worker stores it, at another time).
      const shown = cached && cached.generation === current.generation && cached.version === current.version ? cached : current;
      const before = toProfileResponse(shown, this.learner);
      const pins = requestedPins(update, before, current.pins);
      const pinsChanged = JSON.stringify(sortKeys(pins)) !== JSON.stringify(sortKeys(current.pins));
      if (!pinsChanged) {
        replaced = undefined;
        return shown;
      }
      const next = { ...current, pins, version: current.version + 1, updatedAt: now.toISOString() };
      const after = toProfileResponse(next, this.learner);
      await updateProfiles(tx, tenant, [next]);
      await insertVersions(tx, tenant, [
        { userId, version: next.version, cause: 'manual', changed: changedFields(before, after), createdAt: next.updatedAt },
      ]);
      return next;
    });
    if (replaced !== undefined) {
      this.logger.warn(
        { accountId: tenant.accountId, environment: tenant.environment, userHash: userHash(this.secret, tenant, userId), issue: replaced },
        "a profile's learner state was unreadable: its learning starts again from the population prior",
      );
    }
    await this.cache.writeIfNewer(tenant, saved);
    return toProfileResponse(saved, this.learner);
  }

  /**
   * Right to erasure; idempotent. Also the outcomes' fingerprints go — those applied and those
   * still pending — so a requestId of the erased user can be posted again with other signals
   * (the worker drops it: the user was erased after its decision).
   */
  async erase(tenant: Tenant, userId: string): Promise<void> {
    const cached = await this.cache.read(tenant, userId);
    const hash = userHash(this.secret, tenant, userId);
    const erased = await this.db.transaction().execute(async (tx) => {
      // Serialises with workers applying this user's events: none can revive the profile.
      await lockUsers(tx, tenant, [userId]);
      return eraseUser(tx, { tenant, userId, userHash: hash }, new Date());
    });
    const generations = [erased.generation, cached?.generation].filter((g): g is string => typeof g === 'string');
    await this.cache.erase(tenant, userId, [...new Set(generations)], { userHash: hash, outcomeRequestIds: erased.outcomeRequestIds });
    await this.idempotency.erase(tenant, hash);
  }

  async versions(tenant: Tenant, userId: string, limit: number, before?: number): Promise<VersionsPage> {
    const profile = await this.loader.find(tenant, userId);
    if (!profile) throw userNotFound(userId);
    const page = await listVersions(this.db, tenant, userId, limit, before);
    return {
      data: page.data.map((row) => ({
        profileVersion: `v${row.version}`,
        cause: row.cause,
        changed: row.changed,
        createdAt: row.createdAt,
      })),
      hasMore: page.hasMore,
    };
  }
}

function sortKeys(pins: Pins): Array<[string, string]> {
  return Object.entries(pins).sort(([a], [b]) => compareStrings(a, b)) as Array<[string, string]>;
}
