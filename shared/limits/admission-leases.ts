import { randomUUID } from 'node:crypto';
import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';
import { defineScripts, sendScript } from '../redis/scripts';
import type { Logger } from '../logger/logger';
import { utcDay, utcMonth, startOfNextMonth } from '../util/calendar';
import { limiterTime, usageField, type LimitDecision, type LimitInput, type StatusClass } from './limiter';
import { resetAt } from './sliding-window';

/**
 * cosLeaseAdmissions (shared/redis/lua/leaseAdmissions-4.lua) gives back an ended lease's
 * unused slots and leases new ones; cosMeterCounts (meterCounts-3.lua) adds a batch of counts of
 * requests admitted on leased slots to a day's usage. Both do their part once however often a
 * call is sent, so a failed one is sent again.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosLeaseAdmissions(
      logKey: string,
      monthKey: string,
      givenBackMonthKey: string,
      givenBackMark: string,
      now: string,
      limit: number,
      quota: number,
      want: number,
      lifetimeMicros: number,
      givenBack: number,
      givenBackDate: number,
      monthTtl: number,
    ): Result<LeaseReply, Context>;
    cosMeterCounts(
      usageKey: string,
      usageDaysKey: string,
      batchMark: string,
      day: string,
      ...fieldsAndCounts: (string | number)[]
    ): Result<number, Context>;
  }
}

/** {granted, counted, now µs, oldest µs, date µs}: see leaseAdmissions-4.lua. */
type LeaseReply = [number, number, number, number, number];

/** How long a lease's slots may be used, from the moment it is asked for. */
export const LEASE_MS = 100;
/** Fewer slots than this are not worth a lease: the key's requests ask Redis one by one. */
export const MIN_LEASE = 16;
/** A lease takes at most this fraction of the key's limit: several API processes may hold one each. */
export const LEASE_SHARE = 1 / 8;
/** At most this many slots a lease: the script pushes them in one call. */
export const MAX_LEASE = 4000;

/** A request admitted on a leased slot: the limiter's decision, and when it was metered. */
export type LeasedAdmission = Extract<LimitDecision, { allowed: true }>;

/** Unused slots of an ended lease, on their way back to the key's log and its account's month. */
interface GivenBack {
  accountId: string;
  keyId: string;
  /** The lease's id: its give-back's mark is named by it. */
  lease: string;
  slots: number;
  /** The slots' date in the log (µs). */
  date: number;
  monthKey: string;
}

/** Counts of one usage shard and day, sent as one call under an id of their own. */
interface UsageBatch {
  id: string;
  shard: number;
  day: string;
  fieldsAndCounts: (string | number)[];
}

/** Batches and give-backs kept for another try while Redis does not take them; beyond, the oldest are dropped. */
const MAX_KEPT = 10_000;

/** One live key's lease and demand in this process. */
interface KeyLease {
  accountId: string;
  keyId: string;
  /** Slots of the current lease not used yet, and until when (`now()`) they may be. */
  slots: number;
  endsAt: number;
  /** Its id, the slots' date in the key's log (µs) and the month count they were taken from. */
  id: string;
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
  /** Batches and give-backs that failed, sent again as they were (their scripts take each once). */
  private unsent: UsageBatch[] = [];
  private notGivenBack: GivenBack[] = [];
  /** Names this process's batches and leases. */
  private readonly processId = randomUUID();
  private batches = 0;
  private leasesGranted = 0;
  private sending: Promise<void> = Promise.resolve();
  /** Leases asked for and give-backs on their way: `close` waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
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

  /**
   * Gives back every lease's unused slots and sends the counts: the process stops admitting.
   * What Redis still does not take is logged, the counts with their fields.
   */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.inFlight]);
    for (const lease of this.leases.values()) {
      this.meter(lease);
      if (lease.slots > 0) this.endLease(lease);
    }
    await this.send();
    if (this.unsent.length > 0 || this.notGivenBack.length > 0) {
      const counts = this.unsent.map(({ day, fieldsAndCounts }) => ({ day, fieldsAndCounts }));
      this.logger.error({ counts, slots: this.notGivenBack }, 'leased admissions not metered or given back at shutdown');
    }
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
    if (t < lease.quietUntil) return undefined;
    const want = Math.min(cap, Math.max(lease.demand, lease.lastDemand));
    if (want < MIN_LEASE) {
      if (lease.slots > 0) this.endLease(lease);
      return undefined;
    }
    const granting = this.ask(lease, input, want, t);
    lease.granting = granting;
    this.inFlight.add(granting);
    const done = () => {
      this.inFlight.delete(granting);
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
        id: '',
        date: 0,
        monthKey: '',
        grantedAt: 0,
        day: '',
        countedBefore: 0,
        used: 0,
        resetAt: 0,
        unmetered: new Map(),
        granting: null,
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
    const givenBack = this.unusedOf(lease);
    // Granted after this process gave up waiting (Redis hung, then ran the call): nobody uses those slots.
    const late = ([slots, , , , date]: LeaseReply) => {
      const { accountId, keyId } = input;
      if (slots > 0)
        this.notGivenBack.push({ accountId, keyId, lease: `${this.processId}:${++this.leasesGranted}`, slots, date, monthKey });
    };
    try {
      const [granted, counted, nowMicros, oldestMicros, date] = await sendScript(
        this.redis,
        'cosLeaseAdmissions',
        [
          this.keys.rateLog(input),
          monthKey,
          givenBack.slots > 0 ? givenBack.monthKey : monthKey,
          this.keys.leaseGivenBack(input, givenBack.lease),
          scriptNow,
          input.perSecond,
          input.perMonth ?? 0,
          want,
          LEASE_MS * 1000,
          givenBack.slots,
          givenBack.date,
          Math.ceil((startOfNextMonth(now) - now) / 1000) + 40 * 86_400,
        ],
        late,
      );
      if (granted === 0) {
        lease.quietUntil = t + LEASE_MS;
        return false;
      }
      this.meter(lease);
      const window = { limit: input.perSecond, counted, oldestMicros, nowMicros };
      Object.assign(lease, {
        id: `${this.processId}:${++this.leasesGranted}`,
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
      // Granted after its lifetime (Redis slower than a lease period): back off; the tick returns it.
      if (this.now() >= lease.endsAt) lease.quietUntil = this.now() + LEASE_MS;
      return true;
    } catch (error) {
      // Sent again with the next counts: the script gives a lease's slots back once.
      if (givenBack.slots > 0) this.notGivenBack.push(givenBack);
      throw error;
    }
  }

  /** Queues an ended lease's unused slots to be given back with the next counts. */
  private endLease(lease: KeyLease): void {
    this.notGivenBack.push(this.unusedOf(lease));
  }

  /** Takes the lease's unused slots out of it, to give back (none when it has none left). */
  private unusedOf(lease: KeyLease): GivenBack {
    const { accountId, keyId, id, slots, date, monthKey } = lease;
    lease.slots = 0;
    return { accountId, keyId, lease: id, slots, date, monthKey };
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
      if (lease.granting) continue;
      if (lease.slots > 0 && t >= lease.endsAt) this.endLease(lease);
      else if (lease.slots === 0 && t - lease.periodStart >= 2 * LEASE_MS) this.leases.delete(lease.keyId);
    }
    await this.flush();
  }

  /** Sends the counts and give-backs so far; one send at a time. */
  private flush(): Promise<void> {
    this.sending = this.sending.then(() => this.send());
    return this.sending;
  }

  /**
   * The counts as batches (one call per usage shard and day: a cluster runs each on its shard's
   * master), with the batches and give-backs that failed before, each as it was sent then.
   */
  private async send(): Promise<void> {
    for (const { shard, day, counts } of this.tally.values()) {
      const fieldsAndCounts: (string | number)[] = [];
      for (const [field, n] of counts) if (n !== 0) fieldsAndCounts.push(field, n);
      if (fieldsAndCounts.length > 0) this.unsent.push({ id: `${this.processId}:${++this.batches}`, shard, day, fieldsAndCounts });
    }
    this.tally = new Map();
    const batches = this.unsent.splice(0);
    const givenBack = this.notGivenBack.splice(0);
    if (batches.length === 0 && givenBack.length === 0) return;
    const { scriptNow } = limiterTime(this.clock);
    const [metered, returned] = await Promise.all([
      Promise.allSettled(
        batches.map(({ id, shard, day, fieldsAndCounts }) =>
          this.redis.cosMeterCounts(
            this.keys.usage(day, shard),
            this.keys.usageDays(shard),
            this.keys.usageBatch(id, shard),
            day,
            ...fieldsAndCounts,
          ),
        ),
      ),
      Promise.allSettled(
        givenBack.map((back) =>
          this.redis.cosLeaseAdmissions(
            this.keys.rateLog(back),
            back.monthKey,
            back.monthKey,
            this.keys.leaseGivenBack(back, back.lease),
            scriptNow,
            0,
            0,
            0,
            0,
            back.slots,
            back.date,
            0,
          ),
        ),
      ),
    ]);
    const failed = [...metered, ...returned].find((result) => result.status === 'rejected');
    if (!failed) return;
    this.unsent.unshift(...batches.filter((_, i) => metered[i]!.status === 'rejected'));
    this.notGivenBack.unshift(...givenBack.filter((_, i) => returned[i]!.status === 'rejected'));
    const dropped = {
      counts: this.unsent.splice(0, Math.max(0, this.unsent.length - MAX_KEPT)),
      slots: this.notGivenBack.splice(0, Math.max(0, this.notGivenBack.length - MAX_KEPT)),
    };
    const err = (failed as PromiseRejectedResult).reason as unknown;
    this.logger.warn(
      { err, kept: { batches: this.unsent.length, givenBack: this.notGivenBack.length } },
      'could not meter or give back leased admissions; kept for the next try',
    );
    if (dropped.counts.length > 0 || dropped.slots.length > 0) this.logger.error(dropped, 'leased admissions dropped: too many kept');
  }
}
