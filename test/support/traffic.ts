import type { TestEnv } from './test-env';
import { flushTraffic } from '../../shared/traffic/traffic-flush';
import { latencyBucket } from '../../shared/traffic/latency-histogram';
import { trafficField, utcMinute } from '../../shared/traffic/traffic-fields';

/** What one key recorded in one minute: requests by `<endpoint>:<status>`, latencies (ms), countries. */
export interface MinuteTraffic {
  requests?: Record<string, number>;
  latenciesMs?: number[];
  countries?: Record<string, number>;
}

/**
 * Writes counts into Redis as API processes record them, for the given minutes; `flushSeeded`
 * then moves them to Postgres through the real flush.
 */
export async function seedMinute(env: TestEnv, keyId: string, at: number, traffic: MinuteTraffic): Promise<void> {
  const minute = utcMinute(at);
  const fields: Record<string, number> = {};
  for (const [label, count] of Object.entries(traffic.requests ?? {})) fields[trafficField(keyId, 'req', label)] = count;
  for (const ms of traffic.latenciesMs ?? []) {
    const field = trafficField(keyId, 'lat', String(latencyBucket(ms)));
    fields[field] = (fields[field] ?? 0) + 1;
  }
  for (const [country, count] of Object.entries(traffic.countries ?? {})) fields[trafficField(keyId, 'geo', country)] = count;
  const pipeline = env.redis.pipeline();
  for (const [field, count] of Object.entries(fields)) pipeline.hincrby(env.keys.traffic(minute), field, count);
  pipeline.sadd(env.keys.trafficMinutes, minute);
  await pipeline.exec();
}

export const flushSeeded = (env: TestEnv) => flushTraffic(env);
