import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';
import type { RedisKeys } from '../redis/key-names';
import type { Logger } from '../logger/logger';
import { LATENCY_BUCKETS, latencyBucket } from './latency-histogram';
import { trafficField, trafficStatus, UNKNOWN_COUNTRY, utcMinute, type TrafficStatus } from './traffic-fields';

/** What the recorder needs to place a request's client. */
export interface CountryLookup {
  countryOf(address: string | undefined | null): string | null;
}

/** One finished request, as the recorder sees it. */
export interface RecordedRequest {
  keyId: string;
  endpoint: string;
  status: number;
  ms: number;
  /** The client's address (from `req.ip`); only its country is kept. */
  address: string | undefined;
}

export const TRAFFIC_FLUSH_INTERVAL_MS = 1000;

export interface TrafficRecorderDeps {
  redis: RedisClient;
  keys: RedisKeys;
  countries: CountryLookup;
  logger: Logger;
  /** Places each request in its UTC minute (injected in tests); Date.now by default. */
  clock?: () => number;
}

/**
 * Adds one minute's counts and marks the minute for the worker's flush, one script call per
 * minute (shared/redis/lua/addTraffic-2.lua): building thousands of commands would cost the API
 * more CPU than the counting itself.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosAddTraffic(minuteKey: string, minutesKey: string, ...args: (string | number)[]): Result<number, Context>;
  }
}

/**
 * One key's counts of one minute, kept as structure rather than field names: a request costs
 * a few lookups and increments, and field names are spelled once per flush.
 */
interface KeyCounts {
  /** Requests by endpoint, then recorded status. */
  requests: Map<string, Map<TrafficStatus, number>>;
  /** Requests by latency bucket (latency-histogram.ts). */
  latency: Int32Array;
  /** Requests by client country. */
  countries: Map<string, number>;
}

/**
 * Counts each request of a known key in memory, per UTC minute, and adds the counts to Redis
 * every second in one pipeline, a script call per minute (docs/adr/0012-traffic-recording.md): a request costs a few Map
 * increments and a memoised country lookup, never a Redis call of its own. Each API process
 * records its own share; counts not yet sent when a process dies are lost, as are unflushed
 * counters in Redis.
 */
export class TrafficRecorder {
  private pending = new Map<string, Map<string, KeyCounts>>();
  private minuteOf = { start: -1, label: '' };
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly countries: CountryLookup;
  private readonly logger: Logger;
  private readonly clock: () => number;

  constructor(deps: TrafficRecorderDeps) {
    ({ redis: this.redis, keys: this.keys, countries: this.countries, logger: this.logger, clock: this.clock = Date.now } = deps);
    defineScripts(this.redis, ['cosAddTraffic']);
  }

  start(intervalMs = TRAFFIC_FLUSH_INTERVAL_MS): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(request: RecordedRequest): void {
    const minute = this.minute(this.clock());
    let keys = this.pending.get(minute);
    if (!keys) this.pending.set(minute, (keys = new Map()));
    let counts = keys.get(request.keyId);
    if (!counts) {
      counts = { requests: new Map(), latency: new Int32Array(LATENCY_BUCKETS), countries: new Map() };
      keys.set(request.keyId, counts);
    }
    let byStatus = counts.requests.get(request.endpoint);
    if (!byStatus) counts.requests.set(request.endpoint, (byStatus = new Map()));
    add(byStatus, trafficStatus(request.status));
    counts.latency[latencyBucket(request.ms)]!++;
    add(counts.countries, this.countries.countryOf(request.address) ?? UNKNOWN_COUNTRY);
  }

  /** Sends the counts gathered so far in one pipeline; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.send());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  private async send(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const pipeline = this.redis.pipeline();
    for (const [minute, keys] of batch) {
      const args: (string | number)[] = [minute];
      for (const [keyId, counts] of keys) {
        for (const [endpoint, byStatus] of counts.requests) {
          for (const [status, count] of byStatus) args.push(trafficField(keyId, 'req', `${endpoint}:${status}`), count);
        }
        counts.latency.forEach((count, bucket) => {
          if (count > 0) args.push(trafficField(keyId, 'lat', String(bucket)), count);
        });
        for (const [country, count] of counts.countries) args.push(trafficField(keyId, 'geo', country), count);
      }
      pipeline.cosAddTraffic(this.keys.traffic(minute), this.keys.trafficMinutes, ...args);
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
    } catch (error) {
      // Resending could count twice what Redis already took: the batch is dropped, like any
      // counter Redis loses before a flush.
      this.logger.warn({ err: error }, 'could not record traffic counts');
    }
  }

  private minute(now: number): string {
    const start = now - (now % 60_000);
    if (start !== this.minuteOf.start) this.minuteOf = { start, label: utcMinute(start) };
    return this.minuteOf.label;
  }
}

function add<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
