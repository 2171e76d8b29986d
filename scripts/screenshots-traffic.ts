import type { Redis } from 'ioredis';
import type { redisKeys } from '../shared/redis/key-names';
import type { Db } from '../shared/db/database';
import { recordFinding } from '../shared/traffic/patterns/anomaly.repository';
import { latencyBucket } from '../shared/traffic/latency-histogram';
import { trafficField, utcMinute } from '../shared/traffic/traffic-fields';
import { flushTraffic } from '../shared/traffic/traffic-flush';
import type { ScreenshotAccount, SeededKey } from './screenshots-seed';

/**
 * Traffic for `npm run screenshots`: a month of history written as API processes record it
 * (per-minute Redis hashes, moved to Postgres by the real flush), then real requests through
 * the API from several client addresses, then a few unusual patterns.
 */
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** Public addresses in the United States, the United Kingdom, Japan and the Netherlands. */
export const CLIENT_ADDRESSES = ['8.8.8.8', '81.2.69.160', '133.242.0.3', '193.0.6.139'];
const HISTORY_COUNTRIES: [string, number][] = [
  ['US', 0.42],
  ['GB', 0.16],
  ['DE', 0.12],
  ['JP', 0.1],
  ['BR', 0.08],
  ['IN', 0.07],
  ['AU', 0.05],
];

type Keys = ReturnType<typeof redisKeys>;

/** One key's counts for one minute, as the API's recorder would have sent them. */
async function recordMinute(redis: Redis, keys: Keys, keyId: string, at: number, requests: number): Promise<void> {
  const fields = new Map<string, number>();
  const add = (field: string, n: number) => n > 0 && fields.set(field, (fields.get(field) ?? 0) + n);
  const errors = Math.round(requests * 0.03);
  add(trafficField(keyId, 'req', 'context:2xx'), Math.round(requests * 0.7));
  add(trafficField(keyId, 'req', 'outcome:2xx'), requests - Math.round(requests * 0.7) - errors * 2);
  add(trafficField(keyId, 'req', 'context:4xx'), errors);
  add(trafficField(keyId, 'req', 'context:429'), Math.round(errors / 2));
  add(trafficField(keyId, 'req', 'outcome:401'), errors - Math.round(errors / 2));
  for (const [ms, share] of [
    [1.2, 0.6],
    [3, 0.3],
    [12, 0.08],
    [45, 0.02],
  ] as const)
    add(trafficField(keyId, 'lat', String(latencyBucket(ms))), Math.round(requests * share));
  for (const [country, share] of HISTORY_COUNTRIES) add(trafficField(keyId, 'geo', country), Math.round(requests * share));
  const minute = utcMinute(at);
  const pipeline = redis.pipeline();
  for (const [field, n] of fields) pipeline.hincrby(keys.traffic(minute), field, n);
  pipeline.sadd(keys.trafficMinutes, minute);
  await pipeline.exec();
}

/** A daily rhythm, busier in the (UTC) afternoon. */
const pace = (at: number) => 1 + 0.6 * Math.sin(((new Date(at).getUTCHours() - 9) / 24) * 2 * Math.PI);

export async function seedTrafficHistory(redis: Redis, keys: Keys, db: Db, account: ScreenshotAccount, now: number): Promise<void> {
  const { checkout, productionOld, production, batch } = account.keys;
  for (let at = now - 30 * DAY; at < now - DAY; at += 3 * HOUR) {
    await recordMinute(redis, keys, productionOld.id, at, Math.round(900 * pace(at)));
    await recordMinute(redis, keys, batch.id, at, Math.round(300 * pace(at)));
    await recordMinute(redis, keys, checkout.id, at, Math.round(120 * pace(at)));
  }
  // The last day: the rotated-out key fades as deployments move to its replacement.
  for (let at = now - DAY; at < now - 2 * MIN; at += 10 * MIN) {
    const moved = Math.min(1, (at - (now - DAY)) / (20 * HOUR));
    await recordMinute(redis, keys, productionOld.id, at, Math.round(60 * pace(at) * (1 - moved)));
    await recordMinute(redis, keys, production.id, at, Math.round(60 * pace(at) * moved));
    await recordMinute(redis, keys, batch.id, at, Math.round(20 * pace(at)));
    await recordMinute(redis, keys, checkout.id, at, Math.round(8 * pace(at)));
  }
  await flushTraffic({ redis, keys, db });
}

/** Real requests through the API, as clients at several addresses behind a trusted proxy. */
export async function driveTraffic(apiUrl: string, keys: SeededKey[], perAddress: number): Promise<number> {
  let sent = 0;
  for (const { key } of keys) {
    for (const address of CLIENT_ADDRESSES) {
      for (let i = 0; i < perAddress; i++) {
        const res = await fetch(`${apiUrl}/v1/context`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'X-Forwarded-For': address },
          body: JSON.stringify({ userId: `user-${i}`, task: 'Summarise the report', complexity: 'medium' }),
        });
        await res.arrayBuffer();
        sent++;
      }
    }
  }
  return sent;
}

/** Patterns the worker would have found: two open, one acknowledged. */
export async function seedPatterns(db: Db, account: ScreenshotAccount, now: number): Promise<void> {
  const { accountId, keys } = account;
  const live = (key: SeededKey) => ({ accountId, environment: 'live' as const, keyId: key.id });
  await recordFinding(
    db,
    live(keys.batch),
    {
      rule: 'new-country',
      subject: 'BR',
      reason: 'First requests from Brazil (BR) for this key: 214 in the last hour',
      numbers: { country: 'BR', requests: 214 },
    },
    now - 40 * MIN,
    2 * HOUR,
  );
  await recordFinding(
    db,
    live(keys.productionOld),
    {
      rule: 'volume-low',
      subject: 'volume',
      reason: 'Requests at 14:00 UTC far below this key’s usual: 12 against a median of 870 (MAD 95)',
      numbers: { requests: 12, median: 870, mad: 95 },
    },
    now - 5 * MIN,
    2 * HOUR,
  );
  await recordFinding(
    db,
    { accountId, environment: 'test', keyId: keys.checkout.id },
    {
      rule: 'error-rate',
      subject: 'errors',
      reason: 'Error rate 18 % in the last hour against 2 % usually',
      numbers: { errorRate: '18 %', usual: '2 %', requests: 410 },
    },
    now - 3 * DAY,
    2 * HOUR,
  );
  await db
    .updateTable('traffic_anomalies')
    .set({ acknowledged_at: new Date(now - 2 * DAY), acknowledged_by: 'jane@acme.example' })
    .where('rule', '=', 'error-rate')
    .execute();
}
