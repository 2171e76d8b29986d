import type { Redis, Result } from 'ioredis';
import type { RedisKeys } from '../cache/keys';
import { secondsInMonth, startOfNextMonth, utcDay, utcMonth } from './calendar';

/**
 * One atomic Redis script per live request (docs/adr/0005-rate-limiter.md): checks the key's
 * monthly quota, counts the request in its fixed one-second window (Redis server time, so every
 * API instance shares the same windows), and meters it — as 2xx optimistically, or as 429 when
 * refused. A request that ends with another status moves its count afterwards (`reclassify`).
 */
const LIMIT_AND_METER = `
local limit = tonumber(ARGV[1])
local quota = tonumber(ARGV[2])
local t = redis.call('TIME')
local sec = tonumber(t[1])
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('SADD', KEYS[4], ARGV[6])
if quota > 0 and used >= quota then
  redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
  return {0, 1, used, sec}
end
local skey = KEYS[1] .. ':' .. sec
local n = redis.call('INCR', skey)
if n == 1 then redis.call('EXPIRE', skey, 5) end
if n > limit then
  redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
  return {0, 0, n, sec}
end
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
return {1, 0, n, sec}`;

/**
 * Meters a request refused before the limiter (403: restricted account or missing scope) and
 * reads the key's current window and monthly count, without counting the request in either.
 */
const METER_REFUSED = `
local t = redis.call('TIME')
local sec = tonumber(t[1])
redis.call('HINCRBY', KEYS[3], ARGV[1], 1)
redis.call('SADD', KEYS[4], ARGV[2])
local n = tonumber(redis.call('GET', KEYS[1] .. ':' .. sec) or '0')
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
return {n, used, sec}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosLimitAndMeter(
      secondKey: string,
      monthKey: string,
      usageKey: string,
      usageDaysKey: string,
      limit: number,
      quota: number,
      successField: string,
      refusedField: string,
      monthTtl: number,
      day: string,
    ): Result<[number, number, number, number], Context>;
    cosMeterRefused(
      secondKey: string,
      monthKey: string,
      usageKey: string,
      usageDaysKey: string,
      refusedField: string,
      day: string,
    ): Result<[number, number, number], Context>;
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
  /** Unix epoch seconds when the window resets. */
  resetAt: number;
}

export type LimitInput = { keyId: string; endpoint: string; perSecond: number; perMonth: number | null };

export type LimitDecision =
  | { allowed: true; limit: number; remaining: number; resetAt: number; meteredAt: number }
  | { allowed: false; scope: 'second'; limit: number; resetAt: number; retryAfter: number }
  | { allowed: false; scope: 'month'; limit: number; resetAt: number; retryAfter: number; windowSeconds: number };

export class Limiter {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly clock: () => number = Date.now,
  ) {
    if (typeof (redis as Partial<Redis>).cosLimitAndMeter !== 'function') {
      redis.defineCommand('cosLimitAndMeter', { numberOfKeys: 4, lua: LIMIT_AND_METER });
    }
    if (typeof (redis as Partial<Redis>).cosMeterRefused !== 'function') {
      redis.defineCommand('cosMeterRefused', { numberOfKeys: 4, lua: METER_REFUSED });
    }
  }

  async check(input: LimitInput): Promise<LimitDecision> {
    const now = this.clock();
    const day = utcDay(now);
    const nextMonth = startOfNextMonth(now);
    const [allowed, monthRefusal, count, second] = await this.redis.cosLimitAndMeter(
      this.keys.rateWindow(input.keyId),
      this.keys.monthlyCount(input.keyId, utcMonth(now)),
      this.keys.usage(day),
      this.keys.usageDays,
      input.perSecond,
      input.perMonth ?? 0,
      usageField(input.keyId, input.endpoint, '2xx'),
      usageField(input.keyId, input.endpoint, '429'),
      Math.ceil((nextMonth - now) / 1000) + 40 * 86_400,
      day,
    );
    if (allowed === 1) {
      return {
        allowed: true,
        limit: input.perSecond,
        remaining: Math.max(0, input.perSecond - count),
        resetAt: second + 1,
        meteredAt: now,
      };
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
    return { allowed: false, scope: 'second', limit: input.perSecond, resetAt: second + 1, retryAfter: 1 };
  }

  /** Moves a metered request from its optimistic 2xx to the class it ended with (same day). */
  async reclassify(keyId: string, endpoint: string, cls: StatusClass, meteredAt: number): Promise<void> {
    const usageKey = this.keys.usage(utcDay(meteredAt));
    await this.redis
      .multi()
      .hincrby(usageKey, usageField(keyId, endpoint, '2xx'), -1)
      .hincrby(usageKey, usageField(keyId, endpoint, cls), 1)
      // The day may have been flushed since the request was metered: flush it again.
      .sadd(this.keys.usageDays, utcDay(meteredAt))
      .exec();
  }

  /**
   * Meters a request refused before the limiter (e.g. 403) as 4xx without counting it against
   * the limits, and returns the key's current state for its X-RateLimit-* headers.
   */
  async meterRefused(input: LimitInput): Promise<RateLimitState> {
    const now = this.clock();
    const day = utcDay(now);
    const [count, used, second] = await this.redis.cosMeterRefused(
      this.keys.rateWindow(input.keyId),
      this.keys.monthlyCount(input.keyId, utcMonth(now)),
      this.keys.usage(day),
      this.keys.usageDays,
      usageField(input.keyId, input.endpoint, '4xx'),
      day,
    );
    if (input.perMonth !== null && used >= input.perMonth) {
      return { limit: input.perMonth, remaining: 0, resetAt: startOfNextMonth(now) / 1000 };
    }
    return { limit: input.perSecond, remaining: Math.max(0, input.perSecond - count), resetAt: second + 1 };
  }
}
