import type { RedisKeys } from '../redis/key-names';
import type { ClaimReply, KeyClaim } from '../idempotency/idempotency.repository';
import type { FreshProfile, FreshRead, FreshReply, ProfileCache } from '../profile/profile-cache.repository';
import type { RedisClient } from '../redis/redis';
import { sendScript } from '../redis/scripts';
import type { LimitCall, LimitDecision, LimitReply, Limiter } from './limiter';

/**
 * The limiter's script, then — when it admits the request — the profile read, in one script
 * (shared/redis/lua/limitThenReadProfile-6.lua): replies {verdict}, {verdict, read}, or
 * {verdict, error message} when the read failed (a script does not roll back: the limiter's
 * counts stand, and the caller must still meter the request).
 */
declare module '../redis/scripts' {
  interface SentScripts {
    cosLimitThenReadProfile(
      ...keysThenArgs: [...LimitCall['keys'], ...FreshRead['keys'], ...LimitCall['args'], ...FreshRead['args']]
    ): Promise<[LimitReply, (FreshReply | string)?]>;
    cosLimitClaimThenReadProfile(
      ...keysThenArgs: [
        ...LimitCall['keys'],
        ...KeyClaim['keys'],
        ...FreshRead['keys'],
        ...LimitCall['args'],
        ...KeyClaim['args'],
        ...FreshRead['args'],
      ]
    ): Promise<[LimitReply, (ClaimReply<FreshReply> | string)?]>;
  }
}

type Admitted = Extract<LimitDecision, { allowed: true }>;
type Refused = Extract<LimitDecision, { allowed: false }>;

/** The limiter's verdict and, for an admitted request, what its profile read gave. */
export type LimitedRead =
  | { kind: 'refused'; decision: Refused }
  | { kind: 'read'; decision: Admitted; fresh: FreshProfile }
  | { kind: 'read-failed'; decision: Admitted; error: unknown };

function settle(decision: LimitDecision, read: () => FreshProfile): LimitedRead {
  if (!decision.allowed) return { kind: 'refused', decision };
  try {
    return { kind: 'read', decision, fresh: read() };
  } catch (error) {
    return { kind: 'read-failed', decision, error };
  }
}

/** The reply of the part of a script that runs after the limiter admitted the request, or its failure thrown. */
function succeeded<Reply>(reply: Reply | string | undefined): Reply {
  if (reply === undefined || typeof reply === 'string') throw new Error(`the profile read failed: ${reply ?? 'no reply'}`);
  return reply;
}

export interface LimitedProfileReadDeps {
  /** The client the limiter's and the profile cache's scripts are sent on. */
  redis: RedisClient;
  /** Whether Redis is a cluster: the two scripts are then sent side by side. */
  keys: Pick<RedisKeys, 'cluster'>;
  limiter: Limiter;
  /** Sends the read alone on a cluster. */
  cache: Pick<ProfileCache, 'sendFresh'>;
}

/**
 * A live context call's limiter check and first profile read in one Redis call
 * (docs/adr/0016-hot-path.md): a Redis command costs the API more CPU than most of a cached
 * call's own work. On one node the two scripts run as one, the read only when the limiter
 * admits; on a cluster the limiter's and the user's keys live in different slots, so the two
 * are sent together (one wait, two commands) and a refused request's read is dropped. A read
 * that carries an idempotency claim takes the key after the limiter admitted the request
 * (limitClaimThenReadProfile-8.lua); on a cluster, at the same time, and a refused request's
 * caller gives the key back.
 */
export class LimitedProfileRead {
  private readonly redis: RedisClient;
  private readonly keys: Pick<RedisKeys, 'cluster'>;
  private readonly limiter: Limiter;
  private readonly cache: Pick<ProfileCache, 'sendFresh'>;

  constructor(deps: LimitedProfileReadDeps) {
    ({ redis: this.redis, keys: this.keys, limiter: this.limiter, cache: this.cache } = deps);
  }

  /** The read alone, for a request admitted on a leased slot (AdmissionLeases). */
  readAlone(read: FreshRead): Promise<FreshProfile> {
    return this.cache.sendFresh(read);
  }

  /**
   * `limit` comes from Limiter.prepare, `read` from ProfileCache.prepareFresh (whose cache, on
   * this client, also sends it alone). `late` receives the limiter's decision when it comes after
   * the client gave up waiting (Limiter.send).
   */
  async run(limit: LimitCall, read: FreshRead, late: (decision: LimitDecision) => void): Promise<LimitedRead> {
    if (this.keys.cluster) {
      const [verdict, fresh] = await Promise.allSettled([this.limiter.send(limit, late), this.cache.sendFresh(read)]);
      if (verdict.status === 'rejected') throw verdict.reason;
      return settle(verdict.value, () => {
        if (fresh.status === 'rejected') throw fresh.reason;
        return fresh.value;
      });
    }
    const lateVerdict = ([verdict]: [LimitReply, ...unknown[]]) => late(limit.decide(verdict));
    const { claim } = read;
    if (claim) {
      const [verdict, reply] = await sendScript(
        this.redis,
        'cosLimitClaimThenReadProfile',
        [...limit.keys, ...claim.keys, ...read.keys, ...limit.args, ...claim.args, ...read.args],
        lateVerdict,
      );
      return settle(limit.decide(verdict), () => read.read(claim.settle(succeeded(reply))));
    }
    const [verdict, fresh] = await sendScript(
      this.redis,
      'cosLimitThenReadProfile',
      [...limit.keys, ...read.keys, ...limit.args, ...read.args],
      lateVerdict,
    );
    return settle(limit.decide(verdict), () => read.read(succeeded(fresh)));
  }
}
