import type { Result } from 'ioredis';
import type { RedisKeys } from '../cache/keys';
import type { FreshProfile, FreshRead, FreshReply } from '../profile/profile-cache.repository';
import { readFreshLua } from '../profile/profile-cache.repository';
import type { RedisClient } from '../redis/redis';
import { scriptSlots } from '../redis/script-slots';
import {
  LIMIT_ARGS,
  LIMIT_KEYS,
  limitAndMeterLua,
  type LimitCall,
  type LimitDecision,
  type LimitInput,
  type LimitReply,
  type Limiter,
} from './limiter';

/**
 * The limiter's script, then — when it admits the request — the profile read, in one script:
 * replies {verdict} or {verdict, read}.
 */
const LIMIT_THEN_READ = `
local function limit()
${limitAndMeterLua(scriptSlots())}
end
local function read()
${readFreshLua(scriptSlots(LIMIT_KEYS, LIMIT_ARGS))}
end
local verdict = limit()
if verdict[1] ~= 1 then return {verdict} end
return {verdict, read()}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosLimitThenReadProfile(
      ...keysThenArgs: [...LimitCall['keys'], ...FreshRead['keys'], ...LimitCall['args'], ...FreshRead['args']]
    ): Result<[LimitReply, FreshReply?], Context>;
  }
}

export interface LimitedRead {
  decision: LimitDecision;
  /** The profile read; null when the request was refused (the read was not made). */
  fresh: FreshProfile | null;
}

/**
 * A live context call's limiter check and first profile read in one Redis call
 * (docs/adr/0016-hot-path.md): a Redis command costs the API more CPU than most of a cached
 * call's own work. On one node the two scripts run as one, the read only when the limiter
 * admits; on a cluster the limiter's and the user's keys live in different slots, so the two
 * are sent together (one wait, two commands) and a refused request's read is dropped.
 */
export class LimitedProfileRead {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<RedisKeys, 'cluster'>,
    private readonly limiter: Limiter,
  ) {
    if (typeof (redis as Partial<RedisClient>).cosLimitThenReadProfile !== 'function') {
      redis.defineCommand('cosLimitThenReadProfile', { numberOfKeys: LIMIT_KEYS + 2, lua: LIMIT_THEN_READ });
    }
  }

  /** `read` must come from ProfileCache.prepareFresh (which defines its script on this client). */
  async run(input: LimitInput, read: FreshRead): Promise<LimitedRead> {
    const limit = this.limiter.prepare(input);
    if (this.keys.cluster) {
      const [verdict, fresh] = await Promise.all([
        this.redis.cosLimitAndMeter(...limit.keys, ...limit.args),
        this.redis.cosReadProfileFresh(...read.keys, ...read.args),
      ]);
      const decision = limit.decide(verdict);
      return { decision, fresh: decision.allowed ? read.read(fresh) : null };
    }
    const [verdict, fresh] = await this.redis.cosLimitThenReadProfile(...limit.keys, ...read.keys, ...limit.args, ...read.args);
    return { decision: limit.decide(verdict), fresh: fresh ? read.read(fresh) : null };
  }
}
