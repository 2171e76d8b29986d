import type { Result } from 'ioredis';
import { ERASED_TTL_SECONDS, PROFILE_CACHE_TTL_SECONDS, type RedisKeys } from '../redis/key-names';
import type { Tenant } from '../domain/environment';
import { execEach, execPipeline, type RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';
import type { ClaimReply, KeyClaim } from '../idempotency/idempotency.repository';
import { storedProfileSchema, type StoredProfile } from './profile';
import { profileJson } from './profile-json';

/**
 * Redis cache of profiles (docs/adr/0003-cache-versioning.md). A write never replaces a newer
 * version of the same generation, and never revives a generation that was erased, so the
 * cache cannot move backwards whatever order API and workers write in. Its scripts are
 * shared/redis/lua/writeProfileIfNewer-2.lua, putProfileIfAbsent-1.lua and readProfileFresh-2.lua.
 */
/** Fingerprint keys deleted per command when a user is erased. */
const FINGERPRINTS_PER_DEL = 500;

/** A profile read's reply: {pending}, {pending, version} or {pending, version, JSON}. */
export type FreshReply = [number, string?, string?];

/** A cached profile and the user's outcomes not applied yet. */
export interface FreshProfile {
  profile: StoredProfile | null;
  pending: number;
}

/** One profile read, prepared: its keys, its arguments, and the reading of its reply. */
export interface FreshRead {
  keys: [profileKey: string, pendingKey: string];
  args: [since: number, knownVersion: string, knownGeneration: string, knownUpdatedAt: string];
  read: (reply: FreshReply) => FreshProfile;
  /** The request's idempotency key, claimed first in the same call; `read` throws IdempotencyKeyHeld when it is held. */
  claim: KeyClaim | undefined;
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosWriteProfileIfNewer(
      profileKey: string,
      erasedKey: string,
      version: number,
      generation: string,
      data: string,
      ttl: number,
      updatedAt: string,
    ): Result<number, Context>;
    cosPutProfileIfAbsent(
      profileKey: string,
      version: number,
      generation: string,
      data: string,
      ttl: number,
      updatedAt: string,
    ): Result<string, Context>;
    cosReadProfileFresh(...keysThenArgs: [...FreshRead['keys'], ...FreshRead['args']]): Result<FreshReply, Context>;
    cosClaimThenReadProfile(
      ...keysThenArgs: [...KeyClaim['keys'], ...FreshRead['keys'], ...KeyClaim['args'], ...FreshRead['args']]
    ): Result<ClaimReply<FreshReply>, Context>;
  }
}

function decode(data: string | null | undefined): StoredProfile | null {
  if (!data) return null;
  const parsed = storedProfileSchema.safeParse(JSON.parse(data));
  return parsed.success ? parsed.data : null;
}

export class ProfileCache {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    defineScripts(redis, ['cosWriteProfileIfNewer', 'cosPutProfileIfAbsent', 'cosReadProfileFresh', 'cosClaimThenReadProfile']);
  }

  async read(tenant: Tenant, userId: string): Promise<StoredProfile | null> {
    return decode(await this.redis.hget(this.keys.profile(tenant, userId), 'data'));
  }

  /**
   * The cached profile and how many of the user's outcomes accepted since `since` (ms) are not
   * applied yet (pending-outcomes.repository.ts), in one call; `at` names the user's profile key
   * and pending-marks key (keys.profile, keys.pendingOutcomes). A caller that holds a copy
   * (`known`) gets it back when it is current: the cached JSON travels, and is decoded, only
   * when the cached version, generation or update time differs.
   */
  async readFresh(at: { profileKey: string; pendingKey: string }, since: number, known: StoredProfile | null): Promise<FreshProfile> {
    return this.sendFresh(this.prepareFresh(at, since, known));
  }

  /** Sends a prepared read on its own (with its claim, when it carries one: claimThenReadProfile-4.lua). */
  async sendFresh(read: FreshRead): Promise<FreshProfile> {
    const { claim } = read;
    if (!claim) return read.read(await this.redis.cosReadProfileFresh(...read.keys, ...read.args));
    return read.read(claim.settle(await this.redis.cosClaimThenReadProfile(...claim.keys, ...read.keys, ...claim.args, ...read.args)));
  }

  /** `readFresh`'s keys and arguments, and the reading of its reply (sent alone or with the limiter, limited-read.ts). */
  prepareFresh(at: { profileKey: string; pendingKey: string }, since: number, known: StoredProfile | null, claim?: KeyClaim): FreshRead {
    // A property written out, not spread in: this runs on every context call (docs/adr/0016-hot-path.md).
    return {
      claim,
      keys: [at.profileKey, at.pendingKey],
      args: [since, known ? String(known.version) : '', known?.generation ?? '', known?.updatedAt ?? ''],
      read: ([pending, version, data]) => {
        if (version === undefined) return { profile: null, pending };
        return { profile: data === undefined ? known : decode(data), pending };
      },
    };
  }

  /** Arguments of cosWriteProfileIfNewer for one profile. */
  private writeArgs(tenant: Tenant, profile: StoredProfile) {
    return [
      this.keys.profile(tenant, profile.userId),
      this.keys.erasedGeneration({ tenant, userId: profile.userId, generation: profile.generation }),
      profile.version,
      profile.generation,
      profileJson(profile),
      PROFILE_CACHE_TTL_SECONDS,
      profile.updatedAt,
    ] as const;
  }

  async writeIfNewer(tenant: Tenant, profile: StoredProfile): Promise<boolean> {
    return (await this.redis.cosWriteProfileIfNewer(...this.writeArgs(tenant, profile))) === 1;
  }

  /** Many writes in one round trip (the worker refreshes a whole batch at once). */
  async writeManyIfNewer(entries: Array<{ tenant: Tenant; profile: StoredProfile }>): Promise<void> {
    await execEach(
      this.redis,
      entries.map(
        ({ tenant, profile }) =>
          (pipeline) =>
            pipeline.cosWriteProfileIfNewer(...this.writeArgs(tenant, profile)),
      ),
    );
  }

  /** Caches a brand-new profile unless one is cached already; returns the cached one. */
  async putIfAbsent(tenant: Tenant, profile: StoredProfile): Promise<StoredProfile> {
    const data = await this.redis.cosPutProfileIfAbsent(
      this.keys.profile(tenant, profile.userId),
      profile.version,
      profile.generation,
      profileJson(profile),
      PROFILE_CACHE_TTL_SECONDS,
      profile.updatedAt,
    );
    return decode(data) ?? profile;
  }

  /**
   * Drops the cached profile and fences off late writes of the erased generations; given the
   * user's outcomes, drops their fingerprints too — those of `outcomeRequestIds` and of every
   * outcome still pending (all in the user's slot).
   */
  async erase(
    tenant: Tenant,
    userId: string,
    generations: string[],
    outcomes?: { userHash: string; outcomeRequestIds: string[] },
  ): Promise<void> {
    const multi = this.redis.multi();
    for (const generation of generations) {
      multi.set(this.keys.erasedGeneration({ tenant, userId, generation }), '1', 'EX', ERASED_TTL_SECONDS);
    }
    multi.del(this.keys.profile(tenant, userId));
    await execPipeline(multi);
    if (!outcomes) return;
    const pendingKey = this.keys.pendingOutcomes(tenant, outcomes.userHash);
    const pending = await this.redis.zrange(pendingKey, 0, -1);
    const requestIds = [...new Set([...outcomes.outcomeRequestIds, ...pending])];
    for (let i = 0; i < requestIds.length; i += FINGERPRINTS_PER_DEL) {
      const keys = requestIds
        .slice(i, i + FINGERPRINTS_PER_DEL)
        .map((requestId) => this.keys.outcomeFingerprint({ requestId, userHash: outcomes.userHash }));
      await this.redis.del(...keys);
    }
  }
}
