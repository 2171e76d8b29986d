import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/redis';
import type { RedisKeys } from '../cache/keys';
import type { Logger } from '../logger/logger';
import { latencyBucket } from './latency-histogram';
import { trafficField, trafficStatus, UNKNOWN_COUNTRY, utcMinute } from './traffic-fields';

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

/**
 * Adds one minute's counts (ARGV: minute, then field and count pairs) and marks the minute for
 * the worker's flush. One script call per minute rather than a command per field: building
 * thousands of commands would cost the API more CPU than the counting itself.
 */
const ADD_TRAFFIC = `
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('SADD', KEYS[2], ARGV[1])
return 1`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosAddTraffic(minuteKey: string, minutesKey: string, ...args: (string | number)[]): Result<number, Context>;
  }
}

/**
 * Counts each request of a known key in memory, per UTC minute, and adds the counts to Redis
 * every second in one pipeline, a script call per minute (docs/adr/0012-traffic-recording.md): a request costs a few Map
 * increments and a memoised country lookup, never a Redis call of its own. Each API process
 * records its own share; counts not yet sent when a process dies are lost, as are unflushed
 * counters in Redis.
 */
export class TrafficRecorder {
  private pending = new Map<string, Map<string, number>>();
  private minuteOf = { start: -1, label: '' };
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly countries: CountryLookup,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    if (typeof (redis as Partial<RedisClient>).cosAddTraffic !== 'function') {
      redis.defineCommand('cosAddTraffic', { numberOfKeys: 2, lua: ADD_TRAFFIC });
    }
  }

  start(intervalMs = TRAFFIC_FLUSH_INTERVAL_MS): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(request: RecordedRequest): void {
    const minute = this.minute(this.clock());
    let counts = this.pending.get(minute);
    if (!counts) this.pending.set(minute, (counts = new Map()));
    const country = this.countries.countryOf(request.address) ?? UNKNOWN_COUNTRY;
    const { keyId } = request;
    add(counts, trafficField(keyId, 'req', `${request.endpoint}:${trafficStatus(request.status)}`));
    add(counts, trafficField(keyId, 'lat', String(latencyBucket(request.ms))));
    add(counts, trafficField(keyId, 'geo', country));
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
    for (const [minute, counts] of batch) {
      const args: (string | number)[] = [minute];
      for (const [field, count] of counts) args.push(field, count);
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

function add(counts: Map<string, number>, field: string): void {
  counts.set(field, (counts.get(field) ?? 0) + 1);
}
