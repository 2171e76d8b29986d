import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import { secondsInMonth, startOfNextMonth, utcDay, utcMonth } from '../util/calendar';
import { remaining, resetAt, retryAfter, type WindowState } from './sliding-window';
import type { RedisClient } from '../redis/redis';
import { defineScripts, sendScript } from '../redis/scripts';

/**
 * One atomic Redis script per live request, `cosLimitAndMeter` (shared/redis/lua/limitAndMeter-4.lua,
 * docs/adr/0005-rate-limiter.md): checks the account's monthly quota, then the key's per-second
 * limit as a sliding log, and meters the request — as 2xx optimistically, or as 429 when refused.
 * A request that ends with another status moves its count afterwards (`reclassify`). A request
 * refused before the limiter is metered by `cosMeterRefused` (meterRefused-4.lua).
 */
declare module '../redis/scripts' {
  interface SentScripts {
    cosLimitAndMeter(...keysThenArgs: [...LimitCall['keys'], ...LimitCall['args']]): Promise<LimitReply>;
  }
}
declare module 'ioredis' {
  interface RedisCommander<Context> {
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
export const usageField = ({ keyId, endpoint }: { keyId: string; endpoint: string }, cls: StatusClass) => `${keyId}|${endpoint}|${cls}`;

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
  args: [string, number, number, string, string, number, string];
  decide: (reply: LimitReply) => LimitDecision;
  /** The time (ms) whose day the request is metered in. */
  meteredAt: number;
}

/**
 * The time for the calendar (ms), and for a limiter's script: the injected time in µs, or ''
 * for Redis TIME, which every API instance shares.
 */
export function limiterTime(clock: (() => number) | undefined): { now: number; scriptNow: string } {
  const injected = clock?.();
  if (injected === undefined) return { now: Date.now(), scriptNow: '' };
  return { now: injected, scriptNow: String(Math.round(injected * 1000)) };
}

export class Limiter {
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
    defineScripts(redis, ['cosMeterRefused']);
  }

  private time(): { now: number; scriptNow: string } {
    return limiterTime(this.clock);
  }

  async check(input: LimitInput): Promise<LimitDecision> {
    return this.send(this.prepare(input));
  }

  /**
   * Sends a prepared call alone. `late` receives its decision when it comes after the client gave
   * up waiting (sendScript): the request was answered 503, and Redis admitted or refused it since.
   */
  async send(call: LimitCall, late: (decision: LimitDecision) => void = () => undefined): Promise<LimitDecision> {
    const reply = await sendScript(this.redis, 'cosLimitAndMeter', [...call.keys, ...call.args], (r) => late(call.decide(r)));
    return call.decide(reply);
  }

  /**
   * The script's keys and arguments for `input`, and how its reply reads as a decision: `send`
   * sends them alone, limited-read.ts with a read.
   */
  prepare(input: LimitInput): LimitCall {
    const { now, scriptNow } = this.time();
    const day = utcDay(now);
    const nextMonth = startOfNextMonth(now);
    const shard = this.keys.usageShard(input.accountId);
    const keys: LimitCall['keys'] = [
      this.keys.rateLog(input),
      this.keys.monthlyCount({ accountId: input.accountId, month: utcMonth(now) }),
      this.keys.usage(day, shard),
      this.keys.usageDays(shard),
    ];
    const args: LimitCall['args'] = [
      scriptNow,
      input.perSecond,
      input.perMonth ?? 0,
      usageField(input, '2xx'),
      usageField(input, '429'),
      Math.ceil((nextMonth - now) / 1000) + 40 * 86_400,
      day,
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
    return { keys, args, decide, meteredAt: now };
  }

  /**
   * Moves a metered request from the class it was metered as — its optimistic 2xx, or the 429 of
   * a refusal — to the class it ended with (same day).
   */
  async reclassify(
    input: { accountId: string; keyId: string; endpoint: string },
    cls: StatusClass,
    meteredAt: number,
    from: '2xx' | '429' = '2xx',
  ): Promise<void> {
    const shard = this.keys.usageShard(input.accountId);
    const usageKey = this.keys.usage(utcDay(meteredAt), shard);
    await this.redis
      .multi()
      .hincrby(usageKey, usageField(input, from), -1)
      .hincrby(usageKey, usageField(input, cls), 1)
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
      this.keys.rateLog(input),
      this.keys.monthlyCount({ accountId: input.accountId, month: utcMonth(now) }),
      this.keys.usage(day, shard),
      this.keys.usageDays(shard),
      scriptNow,
      usageField(input, '4xx'),
      day,
    );
    if (input.perMonth !== null && used >= input.perMonth) {
      return { limit: input.perMonth, remaining: 0, resetAt: startOfNextMonth(now) / 1000 };
    }
    const window: WindowState = { limit: input.perSecond, counted, oldestMicros, nowMicros };
    return { limit: input.perSecond, remaining: remaining(window), resetAt: resetAt(window) };
  }
}
