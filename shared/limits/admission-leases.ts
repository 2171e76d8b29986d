import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';
import type { Logger } from '../logger/logger';
import { utcDay, utcMonth, startOfNextMonth } from '../util/calendar';
import { limiterTime, usageField, type LimitDecision, type LimitInput, type StatusClass } from './limiter';
import { resetAt } from './sliding-window';

/**
 * cosLeaseAdmissions (shared/redis/lua/leaseAdmissions-3.lua) gives back an ended lease's
 * unused slots and leases new ones; cosMeterCounts (meterCounts-2.lua) adds the counts of
 * requests admitted on leased slots to a day's usage.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosLeaseAdmissions(
      logKey: string,
      monthKey: string,
      givenBackMonthKey: string,
      now: string,
      limit: number,
      quota: number,
      want: number,
      lifetimeMicros: number,
      givenBack: number,
      givenBackDate: number,
      monthTtl: number,
    ): Result<LeaseReply, Context>;
    cosMeterCounts(usageKey: string, usageDaysKey: string, day: string, ...fieldsAndCounts: (string | number)[]): Result<number, Context>;
  }
}

/** {granted, counted, now µs, oldest µs, date µs}: see leaseAdmissions-3.lua. */
type LeaseReply = [number, number, number, number, number];

/** How long a lease's slots may be used, from the moment it is asked for. */
export const LEASE_MS = 100;
/** Fewer slots than this are not worth a lease: the key's requests ask Redis one by one. */
export const MIN_LEASE = 16;
/** A lease takes at most this fraction of the key's limit: every API process may hold one. */
export const LEASE_SHARE = 1 / 8;
/** At most this many slots a lease: the script pushes them in one call. */
export const MAX_LEASE = 4000;

/** A request admitted on a leased slot: the limiter's decision, and when it was metered. */
export type LeasedAdmission = Extract<LimitDecision, { allowed: true }>;

/** One live key's lease and demand in this process. */
interface KeyLease {
  accountId: string;
  keyId: string;
  /** Slots of the current lease not used yet, and until when (`now()`) they may be. */
  slots: number;
  endsAt: number;
  /** The slots' date in the key's log (µs) and the month count they were taken from. */
  date: number;
  monthKey: string;
  /** When it was granted (calendar ms): its requests are metered on that day. */
  grantedAt: number;
  day: string;
  /** For the X-RateLimit-* headers: the last second's count before the lease, and when its oldest entry leaves. */
  countedBefore: number;
  used: number;
  resetAt: number;
  /** Requests admitted on its slots and not yet in the counts to send, by endpoint. */
  unmetered: Map<string, number>;
  /** A lease asked for, on its way: resolves true when granted. */
  granting: Promise<boolean> | null;
  /** Unused slots on their way back to Redis. */
  givingBack: boolean;
  /** No lease is asked before this time: the last ask was refused. */
  quietUntil: number;
  /** Requests of the current LEASE_MS period, and of the one before it. */
  periodStart: number;
  demand: number;
  lastDemand: number;
}

export interface AdmissionLeasesDeps {
  redis: RedisClient;
  keys: RedisKeys;
  logger: Logger;
  /** Injected by tests only, as the Limiter's: the calendar, the script's time and the leases' lifetimes follow it. */
  clock?: () => number;
}

/**
 * Leased admissions for live keys with a high limit (docs/adr/0005-rate-limiter.md, "Leases"):
 * a key whose requests come faster than MIN_LEASE per LEASE_MS in this process takes a lease of
 * slots from its sliding log and month count in one Redis call, and admits that many requests
 * without asking Redis, metering them in memory (flushed every LEASE_MS). Leases are granted
 * only while the key's last second holds at most half its limit, so near the limit every
 * request is checked on its own, as the limiter always did. A key whose limit is below
 * MIN_LEASE / LEASE_SHARE never leases.
 */
export class AdmissionLeases {
  private readonly leases = new Map<string, KeyLease>();
  /** Counts of requests admitted on leased slots, by usage shard and day, then field. */
  private tally = new Map<string, { shard: number; day: string; counts: Map<string, number> }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly logger: Logger;
  private readonly clock: (() => number) | undefined;

  constructor(deps: AdmissionLeasesDeps) {
    ({ redis: this.redis, keys: this.keys, logger: this.logger, clock: this.clock } = deps);
    defineScripts(this.redis, ['cosLeaseAdmissions', 'cosMeterCounts']);
  }

  /** Gives back ended leases' unused slots and sends the counts, every LEASE_MS. */
  start(): void {
    this.timer = setInterval(() => void this.tick(), LEASE_MS);
    this.timer.unref();
  }

  /** Gives back every lease's unused slots and sends the counts: the process stops admitting. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const lease of this.leases.values()) this.meter(lease);
    await Promise.all([...this.leases.values()].filter((lease) => lease.slots > 0).map((lease) => this.giveBack(lease)));
    await this.flush();
  }

  /**
   * A slot for this request: at once when this process holds one, a promise when it asks Redis
   * for a lease, undefined when the request is to be checked on its own (Limiter.check). A
   * request admitted here is metered as 2xx on the day its lease was granted (`meteredAt`);
   * `reclassify` moves it.
   */
  take(input: LimitInput): LeasedAdmission | Promise<LeasedAdmission | undefined> | undefined {
    const cap = Math.min(MAX_LEASE, Math.floor(input.perSecond * LEASE_SHARE));
    if (cap < MIN_LEASE) return undefined;
    const t = this.now();
    const lease = this.leaseOf(input, t);
    if (lease.slots > 0 && t < lease.endsAt) return this.use(lease, input);
    // A lease asked for by an earlier request: wait for it rather than ask Redis alone.
    if (lease.granting) return this.after(lease.granting, lease, input);
    if (lease.givingBack || t < lease.quietUntil) return undefined;
    const want = Math.min(cap, Math.max(lease.demand, lease.lastDemand));
    if (want < MIN_LEASE) {
      if (lease.slots > 0) void this.giveBack(lease);
      return undefined;
    }
    const granting = this.ask(lease, input, want, t);
    lease.granting = granting;
    const done = () => {
      if (lease.granting === granting) lease.granting = null;
    };
    granting.then(done, done);
    return this.after(granting, lease, input);
  }

  /** A slot of the lease once it is granted, if any is left for this request by then. */
  private async after(granting: Promise<boolean>, lease: KeyLease, input: LimitInput): Promise<LeasedAdmission | undefined> {
    if (!(await granting)) return undefined;
    return lease.slots > 0 && this.now() < lease.endsAt ? this.use(lease, input) : undefined;
  }

  /** Moves a request admitted on a leased slot from its 2xx to the class it ended with. */
  reclassify(input: { accountId: string; keyId: string; endpoint: string }, cls: StatusClass, meteredAt: number): void {
    const day = utcDay(meteredAt);
    const shard = this.keys.usageShard(input.accountId);
    this.count(shard, day, usageField(input, '2xx'), -1);
    this.count(shard, day, usageField(input, cls), 1);
  }

  private now(): number {
    return this.clock ? this.clock() : performance.now();
  }

  private leaseOf(input: LimitInput, t: number): KeyLease {
    let lease = this.leases.get(input.keyId);
    if (!lease) {
      lease = {
        accountId: input.accountId,
        keyId: input.keyId,
        slots: 0,
        endsAt: 0,
        date: 0,
        monthKey: '',
        grantedAt: 0,
        day: '',
        countedBefore: 0,
        used: 0,
        resetAt: 0,
        unmetered: new Map(),
        granting: null,
        givingBack: false,
        quietUntil: 0,
        periodStart: t,
        demand: 0,
        lastDemand: 0,
      };
      this.leases.set(input.keyId, lease);
    }
    if (t - lease.periodStart >= LEASE_MS) {
      lease.lastDemand = t - lease.periodStart < 2 * LEASE_MS ? lease.demand : 0;
      lease.demand = 0;
      lease.periodStart = t;
    }
    lease.demand++;
    return lease;
  }

  /** Nothing but counting here: this runs for every request on a leased slot. */
  private use(lease: KeyLease, input: LimitInput): LeasedAdmission {
    lease.slots--;
    lease.used++;
    lease.unmetered.set(input.endpoint, (lease.unmetered.get(input.endpoint) ?? 0) + 1);
    return {
      allowed: true,
      limit: input.perSecond,
      remaining: Math.max(0, input.perSecond - lease.countedBefore - lease.used),
      resetAt: lease.resetAt,
      meteredAt: lease.grantedAt,
    };
  }

  /** Moves the lease's admissions into the counts to send. */
  private meter(lease: KeyLease): void {
    const shard = this.keys.usageShard(lease.accountId);
    for (const [endpoint, n] of lease.unmetered) this.count(shard, lease.day, usageField({ keyId: lease.keyId, endpoint }, '2xx'), n);
    lease.unmetered.clear();
  }

  /** Asks for `want` slots, giving back the ended lease's unused ones in the same call; true when granted. */
  private async ask(lease: KeyLease, input: LimitInput, want: number, t: number): Promise<boolean> {
    const { now, scriptNow } = limiterTime(this.clock);
    const monthKey = this.keys.monthlyCount({ accountId: input.accountId, month: utcMonth(now) });
    const givenBack = lease.slots;
    const givenBackMonth = givenBack > 0 ? lease.monthKey : monthKey;
    lease.slots = 0;
    try {
      const [granted, counted, nowMicros, oldestMicros, date] = await this.redis.cosLeaseAdmissions(
        this.keys.rateLog(input),
        monthKey,
        givenBackMonth,
        scriptNow,
        input.perSecond,
        input.perMonth ?? 0,
        want,
        LEASE_MS * 1000,
        givenBack,
        lease.date,
        Math.ceil((startOfNextMonth(now) - now) / 1000) + 40 * 86_400,
      );
      if (granted === 0) {
        lease.quietUntil = t + LEASE_MS;
        return false;
      }
      this.meter(lease);
      const window = { limit: input.perSecond, counted, oldestMicros, nowMicros };
      Object.assign(lease, {
        slots: granted,
        endsAt: t + LEASE_MS,
        date,
        monthKey,
        grantedAt: now,
        day: utcDay(now),
        countedBefore: counted - granted,
        used: 0,
        resetAt: resetAt(window),
      });
      return true;
    } catch (error) {
      if (givenBack > 0) this.logger.warn({ err: error, unused: givenBack }, 'could not give back leased admissions');
      throw error;
    }
  }

  /** Gives back an ended lease's unused slots (its own call: the key asks for no new lease). */
  private async giveBack(lease: KeyLease): Promise<void> {
    const { slots, date, monthKey } = lease;
    lease.slots = 0;
    lease.givingBack = true;
    try {
      const log = this.keys.rateLog(lease);
      await this.redis.cosLeaseAdmissions(log, monthKey, monthKey, limiterTime(this.clock).scriptNow, 0, 0, 0, 0, slots, date, 0);
    } catch (error) {
      // The slots leave the log a second after their date; the month keeps counting them.
      this.logger.warn({ err: error, unused: slots }, 'could not give back leased admissions');
    } finally {
      lease.givingBack = false;
    }
  }

  private count(shard: number, day: string, field: string, n: number): void {
    const at = `${shard}|${day}`;
    let entry = this.tally.get(at);
    if (!entry) this.tally.set(at, (entry = { shard, day, counts: new Map() }));
    entry.counts.set(field, (entry.counts.get(field) ?? 0) + n);
  }

  private async tick(): Promise<void> {
    const t = this.now();
    for (const lease of this.leases.values()) {
      this.meter(lease);
      if (lease.givingBack || lease.granting) continue;
      if (lease.slots > 0 && t >= lease.endsAt) void this.giveBack(lease);
      else if (lease.slots === 0 && t - lease.periodStart >= 2 * LEASE_MS) this.leases.delete(lease.keyId);
    }
    await this.flush();
  }

  /** Sends the counts so far, a call per usage shard and day. */
  private async flush(): Promise<void> {
    if (this.tally.size === 0) return;
    const batch = [...this.tally.values()];
    this.tally = new Map();
    const sent: typeof batch = [];
    const pipeline = this.redis.pipeline();
    for (const entry of batch) {
      const args: (string | number)[] = [];
      for (const [field, n] of entry.counts) if (n !== 0) args.push(field, n);
      if (args.length === 0) continue;
      sent.push(entry);
      pipeline.cosMeterCounts(this.keys.usage(entry.day, entry.shard), this.keys.usageDays(entry.shard), entry.day, ...args);
    }
    let results: Array<[Error | null, unknown]>;
    try {
      results = (await pipeline.exec()) ?? [];
    } catch (error) {
      results = sent.map(() => [error as Error, null]);
    }
    const dropped: typeof batch = [];
    sent.forEach((entry, i) => {
      const error = results[i]?.[0];
      if (!error) return;
      // A command that never left (Redis unreachable) is kept for the next flush; resending one
      // that may have run could count it twice, so it is dropped and logged.
      if (NOT_SENT.test(error.message)) for (const [field, n] of entry.counts) this.count(entry.shard, entry.day, field, n);
      else dropped.push(entry);
    });
    if (dropped.length > 0) {
      const counts = dropped.map(({ day, counts }) => ({ day, counts: Object.fromEntries(counts) }));
      this.logger.error({ err: results.find(([error]) => error)?.[0], counts }, 'could not meter leased admissions');
    }
  }
}

/** ioredis's refusal of a command it could not write (the connection is down and it queues nothing). */
const NOT_SENT = /Stream isn't writeable/;
