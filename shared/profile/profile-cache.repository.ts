import type { Result } from 'ioredis';
import { ERASED_TTL_SECONDS, PROFILE_CACHE_TTL_SECONDS, type RedisKeys } from '../redis/key-names';
import type { Tenant } from '../domain/environment';
import { execEach, execPipeline, type RedisClient } from '../redis/redis';
import { scriptSlots, type ScriptSlots } from '../redis/script-slots';
import { storedProfileSchema, type StoredProfile } from './profile';

/**
 * Redis cache of profiles (docs/adr/0003-cache-versioning.md). A write never replaces a newer
 * version of the same generation, and never revives a generation that was erased, so the
 * cache cannot move backwards whatever order API and workers write in.
 */
/** Fingerprint keys deleted per command when a user is erased. */
const FINGERPRINTS_PER_DEL = 500;

const WRITE_IF_NEWER = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local cur = redis.call('HMGET', KEYS[1], 'v', 'g')
if cur[1] and cur[2] == ARGV[2] and tonumber(cur[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'g', ARGV[2], 'u', ARGV[5], 'd', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1`;

const PUT_IF_ABSENT = `
local cur = redis.call('HGET', KEYS[1], 'd')
if cur then return cur end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'g', ARGV[2], 'u', ARGV[5], 'd', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return ARGV[3]`;

/**
 * A profile read with its user's pending outcomes, in one call (a fragment, script-slots.ts).
 * KEYS: profile hash, the user's pending marks. ARGV: marks counted from (ms), the version, generation and update time the
 * caller holds. Returns {pending} when nothing is cached, {pending, version} when the caller's
 * copy is current, and the cached JSON as a third element otherwise. The update time tells
 * apart the two seeds of a new user (version 0), made by the API and by the worker.
 */
export const readFreshLua = (at: ScriptSlots) => `
local pending = redis.call('ZCOUNT', ${at.key(2)}, ${at.arg(1)}, '+inf')
local cur = redis.call('HMGET', ${at.key(1)}, 'v', 'g', 'u')
if not cur[1] then return {pending} end
if cur[1] == ${at.arg(2)} and cur[2] == ${at.arg(3)} and cur[3] == ${at.arg(4)} then return {pending, cur[1]} end
return {pending, cur[1], redis.call('HGET', ${at.key(1)}, 'd')}`;

const READ_FRESH = readFreshLua(scriptSlots());

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
  }
}

export function defineProfileCacheScripts(redis: RedisClient): void {
  if (typeof (redis as Partial<RedisClient>).cosWriteProfileIfNewer === 'function') return;
  redis.defineCommand('cosWriteProfileIfNewer', { numberOfKeys: 2, lua: WRITE_IF_NEWER });
  redis.defineCommand('cosPutProfileIfAbsent', { numberOfKeys: 1, lua: PUT_IF_ABSENT });
  redis.defineCommand('cosReadProfileFresh', { numberOfKeys: 2, lua: READ_FRESH });
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
    defineProfileCacheScripts(redis);
  }

  async read(tenant: Tenant, userId: string): Promise<StoredProfile | null> {
    return decode(await this.redis.hget(this.keys.profile(tenant, userId), 'd'));
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

  /** Sends a prepared read on its own. */
  async sendFresh(read: FreshRead): Promise<FreshProfile> {
    return read.read(await this.redis.cosReadProfileFresh(...read.keys, ...read.args));
  }

  /** `readFresh`'s keys and arguments, and the reading of its reply (sent alone or with the limiter, limited-read.ts). */
  prepareFresh(at: { profileKey: string; pendingKey: string }, since: number, known: StoredProfile | null): FreshRead {
    return {
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
      this.keys.erasedGeneration(tenant, profile.userId, profile.generation),
      profile.version,
      profile.generation,
      JSON.stringify(profile),
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
      JSON.stringify(profile),
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
    for (const generation of generations) multi.set(this.keys.erasedGeneration(tenant, userId, generation), '1', 'EX', ERASED_TTL_SECONDS);
    multi.del(this.keys.profile(tenant, userId));
    await execPipeline(multi);
    if (!outcomes) return;
    const pendingKey = this.keys.pendingOutcomes(tenant, outcomes.userHash);
    const pending = await this.redis.zrange(pendingKey, 0, -1);
    const requestIds = [...new Set([...outcomes.outcomeRequestIds, ...pending])];
    for (let i = 0; i < requestIds.length; i += FINGERPRINTS_PER_DEL) {
      const keys = requestIds
        .slice(i, i + FINGERPRINTS_PER_DEL)
        .map((requestId) => this.keys.outcomeFingerprint(requestId, outcomes.userHash));
      await this.redis.del(...keys);
    }
  }
}
