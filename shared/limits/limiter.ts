import { randomBytes } from 'node:crypto';
import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import { secondsInMonth, startOfNextMonth, utcDay, utcMonth } from '../util/calendar';
import { remaining, resetAt, retryAfter, WINDOW_MICROS, type WindowState } from './sliding-window';
import type { RedisClient } from '../redis/redis';
import { scriptSlots, type ScriptSlots } from '../redis/script-slots';

/**
 * A key's log expires this long after its last admission (real time): by then every entry is
 * older than the window, and an idle key costs no memory.
 */
const LOG_TTL_MS = 5000;

/** Reads the script's clock: the injected time (first argument, epoch µs) or Redis server time. */
const now = (at: ScriptSlots) => `
local now = tonumber(${at.arg(1)})
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end`;

/** Keys and arguments of the limiter's script: LIMIT_KEYS keys, then LIMIT_ARGS arguments. */
export const LIMIT_KEYS = 4;
export const LIMIT_ARGS = 8;

/**
 * One atomic Redis script per live request (docs/adr/0005-rate-limiter.md): checks the account's
 * monthly quota, then the key's per-second limit as a sliding log (a sorted set of the admission
 * times of the last second, at most `limit` entries), and meters the request — as 2xx
 * optimistically, or as 429 when refused. A request that ends with another status moves its
 * count afterwards (`reclassify`). Returns {admitted, monthRefusal, counted, now, oldest}.
 * Written as a fragment (script-slots.ts) so that a request's first read can ride in the same
 * script (limited-read.ts).
 */
export const limitAndMeterLua = (at: ScriptSlots) => `${now(at)}
local limit = tonumber(${at.arg(2)})
local quota = tonumber(${at.arg(3)})
redis.call('SADD', ${at.key(4)}, ${at.arg(7)})
local used = tonumber(redis.call('GET', ${at.key(2)}) or '0')
if quota > 0 and used >= quota then
  redis.call('HINCRBY', ${at.key(3)}, ${at.arg(5)}, 1)
  return {0, 1, used, now, now}
end
redis.call('ZREMRANGEBYSCORE', ${at.key(1)}, '-inf', now - ${WINDOW_MICROS})
local n = redis.call('ZCARD', ${at.key(1)})
if n >= limit then
  redis.call('HINCRBY', ${at.key(3)}, ${at.arg(5)}, 1)
  return {0, 0, n, now, tonumber(redis.call('ZRANGE', ${at.key(1)}, 0, 0, 'WITHSCORES')[2] or now)}
end
redis.call('ZADD', ${at.key(1)}, now, ${at.arg(8)})
redis.call('PEXPIRE', ${at.key(1)}, ${LOG_TTL_MS})
redis.call('INCR', ${at.key(2)})
redis.call('EXPIRE', ${at.key(2)}, ${at.arg(6)})
redis.call('HINCRBY', ${at.key(3)}, ${at.arg(4)}, 1)
local oldest = now
if n > 0 then oldest = tonumber(redis.call('ZRANGE', ${at.key(1)}, 0, 0, 'WITHSCORES')[2]) end
return {1, 0, n + 1, now, oldest}`;

const LIMIT_AND_METER = limitAndMeterLua(scriptSlots());

/**
 * Meters a request refused before the limiter (403: restricted account or missing scope) and
 * reads the key's sliding log and monthly count, without counting the request in either.
 * Returns {counted, used, now, oldest}.
 */
const METER_REFUSED = `${now(scriptSlots())}
redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
redis.call('SADD', KEYS[4], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${WINDOW_MICROS})
local n = redis.call('ZCARD', KEYS[1])
local oldest = now
if n > 0 then oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
return {n, used, now, oldest}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosLimitAndMeter(...keysThenArgs: [...LimitCall['keys'], ...LimitCall['args']]): Result<LimitReply, Context>;
    cosMeterRefused(
      logKey: string,
      monthKey: string,
      usageKey: string,
      usageDaysKey: string,
      nowMicros: string,
      refusedField: string,
      day: string,
    ): Result<[number, number, number, number], Context>;
  }
}

export type StatusClass = '2xx' | '4xx' | '5xx' | '429';

export function statusClass(status: number): StatusClass {
  if (status === 429) return '429';
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  return '2xx';
}

/** The field of a usage hash: key, endpoint and status class. */
export const usageField = (keyId: string, endpoint: string, cls: StatusClass) => `${keyId}|${endpoint}|${cls}`;

/** What the X-RateLimit-* headers of a live response say. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix epoch seconds (see sliding-window.ts, or the 1st of next month past the quota). */
  resetAt: number;
}

/** A live request's limits: its key's per second, its account's per month (all its live keys together). */
export type LimitInput = { accountId: string; keyId: string; endpoint: string; perSecond: number; perMonth: number | null };

export type LimitDecision =
  | { allowed: true; limit: number; remaining: number; resetAt: number; meteredAt: number }
  | { allowed: false; scope: 'second'; limit: number; resetAt: number; retryAfter: number }
  | { allowed: false; scope: 'month'; limit: number; resetAt: number; retryAfter: number; windowSeconds: number };

/** The limiter script's reply: {admitted, monthRefusal, counted, now µs, oldest µs}. */
export type LimitReply = [number, number, number, number, number];

/** One limiter script call, prepared: its keys, its arguments, and the reading of its reply. */
export interface LimitCall {
  keys: [string, string, string, string];
  args: [string, number, number, string, string, number, string, string];
  decide: (reply: LimitReply) => LimitDecision;
}

export class Limiter {
  /** Log entries need unique members: this process's prefix and a sequence number. */
  private readonly memberPrefix = randomBytes(6).toString('base64url');
  private sequence = 0;

  /**
   * `clock` is injected by tests only: the calendar (month, day) and the per-second window then
   * follow it. Otherwise the calendar follows Date.now and the window Redis server time, which
   * every API instance shares (docs/adr/0005-rate-limiter.md).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly clock?: () => number,
  ) {
    if (typeof (redis as Partial<RedisClient>).cosLimitAndMeter !== 'function') {
      redis.defineCommand('cosLimitAndMeter', { numberOfKeys: 4, lua: LIMIT_AND_METER });
    }
    if (typeof (redis as Partial<RedisClient>).cosMeterRefused !== 'function') {
      redis.defineCommand('cosMeterRefused', { numberOfKeys: 4, lua: METER_REFUSED });
    }
  }

  /** The time for the calendar, and for the script: the injected time in µs, or '' for TIME. */
  private time(): { now: number; scriptNow: string } {
    const injected = this.clock?.();
    if (injected === undefined) return { now: Date.now(), scriptNow: '' };
    return { now: injected, scriptNow: String(Math.round(injected * 1000)) };
  }

  async check(input: LimitInput): Promise<LimitDecision> {
    const call = this.prepare(input);
    return call.decide(await this.redis.cosLimitAndMeter(...call.keys, ...call.args));
  }

  /**
   * The script's keys and arguments for `input` (LIMIT_KEYS and LIMIT_ARGS of them), and how
   * its reply reads as a decision: `check` sends them alone, limited-read.ts with a read.
   */
  prepare(input: LimitInput): LimitCall {
    const { now, scriptNow } = this.time();
    const day = utcDay(now);
    const nextMonth = startOfNextMonth(now);
    const shard = this.keys.usageShard(input.accountId);
    const keys: LimitCall['keys'] = [
      this.keys.rateLog(input.accountId, input.keyId),
      this.keys.monthlyCount(input.accountId, utcMonth(now)),
      this.keys.usage(day, shard),
      this.keys.usageDays(shard),
    ];
    const args: LimitCall['args'] = [
      scriptNow,
      input.perSecond,
      input.perMonth ?? 0,
      usageField(input.keyId, input.endpoint, '2xx'),
      usageField(input.keyId, input.endpoint, '429'),
      Math.ceil((nextMonth - now) / 1000) + 40 * 86_400,
      day,
      `${this.memberPrefix}:${(this.sequence++).toString(36)}`,
    ];
    const decide = ([admitted, monthRefusal, counted, nowMicros, oldestMicros]: LimitReply): LimitDecision => {
      const window: WindowState = { limit: input.perSecond, counted, oldestMicros, nowMicros };
      if (admitted === 1) {
        return { allowed: true, limit: input.perSecond, remaining: remaining(window), resetAt: resetAt(window), meteredAt: now };
      }
      if (monthRefusal === 1) {
        return {
          allowed: false,
          scope: 'month',
          limit: input.perMonth!,
          resetAt: nextMonth / 1000,
          retryAfter: Math.max(1, Math.ceil((nextMonth - now) / 1000)),
          windowSeconds: secondsInMonth(now),
        };
      }
      return { allowed: false, scope: 'second', limit: input.perSecond, resetAt: resetAt(window), retryAfter: retryAfter(window) };
    };
    return { keys, args, decide };
  }

  /** Moves a metered request from its optimistic 2xx to the class it ended with (same day). */
  async reclassify(input: { accountId: string; keyId: string; endpoint: string }, cls: StatusClass, meteredAt: number): Promise<void> {
    const { accountId, keyId, endpoint } = input;
    const shard = this.keys.usageShard(accountId);
    const usageKey = this.keys.usage(utcDay(meteredAt), shard);
    await this.redis
      .multi()
      .hincrby(usageKey, usageField(keyId, endpoint, '2xx'), -1)
      .hincrby(usageKey, usageField(keyId, endpoint, cls), 1)
      // The day may have been flushed since the request was metered: flush it again.
      .sadd(this.keys.usageDays(shard), utcDay(meteredAt))
      .exec();
  }

  /**
   * Meters a request refused before the limiter (e.g. 403) as 4xx without counting it against
   * the limits, and returns the key's current state for its X-RateLimit-* headers.
   */
  async meterRefused(input: LimitInput): Promise<RateLimitState> {
    const { now, scriptNow } = this.time();
    const day = utcDay(now);
    const shard = this.keys.usageShard(input.accountId);
    const [counted, used, nowMicros, oldestMicros] = await this.redis.cosMeterRefused(
      this.keys.rateLog(input.accountId, input.keyId),
      this.keys.monthlyCount(input.accountId, utcMonth(now)),
      this.keys.usage(day, shard),
      this.keys.usageDays(shard),
      scriptNow,
      usageField(input.keyId, input.endpoint, '4xx'),
      day,
    );
    if (input.perMonth !== null && used >= input.perMonth) {
      return { limit: input.perMonth, remaining: 0, resetAt: startOfNextMonth(now) / 1000 };
    }
    const window: WindowState = { limit: input.perSecond, counted, oldestMicros, nowMicros };
    return { limit: input.perSecond, remaining: remaining(window), resetAt: resetAt(window) };
  }
}
