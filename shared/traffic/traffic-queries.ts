import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import type { Environment } from '../domain/environment';
import { percentileMs } from './latency-histogram';
import { TRAFFIC_STATUSES, type TrafficStatus } from './traffic-fields';

/**
 * Read side of the dashboard's traffic pages (docs/ARCHITECTURE.md, "Traffic data for the
 * dashboard"). Every series is dense (a point per step, zeros included) and ends with the step
 * holding `now`.
 */
export const TRAFFIC_WINDOWS = {
  /** The last hour, per minute, from minute rows. */
  '1h': { table: 'traffic_minute', stepMs: 60_000, points: 60 },
  /** The last 24 hours, per hour, from hour rows. */
  '24h': { table: 'traffic_hour', stepMs: 3_600_000, points: 24 },
  /** The last 30 days, per UTC day, from hour rows. */
  '30d': { table: 'traffic_hour', stepMs: 86_400_000, points: 30 },
} as const;
export type TrafficWindow = keyof typeof TRAFFIC_WINDOWS;

/** An account's traffic in one environment, or one key's when keyId is given. */
export interface TrafficScope {
  accountId: string;
  environment: Environment;
  keyId?: string;
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';
export type ClassCounts = Record<StatusClass, number>;

export interface TrafficPoint {
  /** Start of the step (ISO 8601, UTC). */
  at: string;
  requests: number;
  /** Requests by status class; 4xx includes the 401s, 403s and 429s. */
  byClass: ClassCounts;
  /** Requests by endpoint (`context`, `outcome`, `profile.get`, …) and status class. */
  byEndpoint: Record<string, ClassCounts>;
  unauthorized: number;
  forbidden: number;
  rateLimited: number;
  /** Latency percentiles (ms) from the merged histograms; null when the step has no requests. */
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface TrafficSeries {
  window: TrafficWindow;
  stepMs: number;
  points: TrafficPoint[];
}

export interface CountryCount {
  /** ISO 3166-1 alpha-2, or `ZZ` for addresses without a country (private, reserved, unknown). */
  country: string;
  requests: number;
}

const CLASS_OF: Record<TrafficStatus, StatusClass> = {
  '2xx': '2xx',
  '3xx': '3xx',
  '401': '4xx',
  '403': '4xx',
  '429': '4xx',
  '4xx': '4xx',
  '5xx': '5xx',
};
const zeroClasses = (): ClassCounts => ({ '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 });

/** The window's first step start and the end (exclusive) of the step holding `now`. */
export function windowBounds(window: TrafficWindow, now: number): { from: number; to: number } {
  const { stepMs, points } = TRAFFIC_WINDOWS[window];
  const to = now - (now % stepMs) + stepMs;
  return { from: to - points * stepMs, to };
}

type CounterRow = { bucket: Date; metric: string; label: string; count: number };

/** The window's counters summed per step; bounded by `at`, so it reads only the window's months. */
export function countersQuery(scope: TrafficScope, window: TrafficWindow, now: number, metrics: string[]) {
  const { table, stepMs } = TRAFFIC_WINDOWS[window];
  const { from, to } = windowBounds(window, now);
  return sql<CounterRow>`
    select date_bin(${`${stepMs / 1000} seconds`}::interval, at, timestamptz '2000-01-01T00:00:00Z') as bucket,
           metric, label, sum(count)::bigint as count
    from ${sql.table(table)}
    where account_id = ${scope.accountId} and environment = ${scope.environment}
      ${scope.keyId ? sql`and key_id = ${scope.keyId}` : sql``}
      and at >= ${new Date(from)} and at < ${new Date(to)}
      and metric in (${sql.join(metrics)})
    group by 1, 2, 3`;
}

async function counters(db: DbOrTx, scope: TrafficScope, window: TrafficWindow, now: number, metrics: string[]): Promise<CounterRow[]> {
  return (await countersQuery(scope, window, now, metrics).execute(db)).rows;
}

/** Requests, status classes, 401/403/429 and p50/p95 per step of `window`. */
export async function trafficSeries(db: DbOrTx, scope: TrafficScope, window: TrafficWindow, now: number): Promise<TrafficSeries> {
  const { stepMs, points } = TRAFFIC_WINDOWS[window];
  const { from } = windowBounds(window, now);
  const steps = Array.from({ length: points }, () => ({
    statuses: new Map<TrafficStatus, number>(),
    byEndpoint: {} as Record<string, ClassCounts>,
    histogram: new Map<number, number>(),
  }));
  for (const row of await counters(db, scope, window, now, ['req', 'lat'])) {
    const step = steps[Math.floor((new Date(row.bucket).getTime() - from) / stepMs)];
    if (!step) continue;
    const count = Number(row.count);
    if (row.metric === 'lat') {
      step.histogram.set(Number(row.label), (step.histogram.get(Number(row.label)) ?? 0) + count);
      continue;
    }
    const split = row.label.lastIndexOf(':');
    const endpoint = row.label.slice(0, split);
    const status = row.label.slice(split + 1) as TrafficStatus;
    if (!TRAFFIC_STATUSES.includes(status)) continue;
    step.statuses.set(status, (step.statuses.get(status) ?? 0) + count);
    (step.byEndpoint[endpoint] ??= zeroClasses())[CLASS_OF[status]] += count;
  }
  return {
    window,
    stepMs,
    points: steps.map((step, index) => {
      const byClass = zeroClasses();
      let requests = 0;
      for (const [status, count] of step.statuses) {
        byClass[CLASS_OF[status]] += count;
        requests += count;
      }
      return {
        at: new Date(from + index * stepMs).toISOString(),
        requests,
        byClass,
        byEndpoint: step.byEndpoint,
        unauthorized: step.statuses.get('401') ?? 0,
        forbidden: step.statuses.get('403') ?? 0,
        rateLimited: step.statuses.get('429') ?? 0,
        p50Ms: percentileMs(step.histogram, 0.5),
        p95Ms: percentileMs(step.histogram, 0.95),
      };
    }),
  };
}

/** Requests per client country over `window`, most first (ties by code). */
export async function countryCounts(db: DbOrTx, scope: TrafficScope, window: TrafficWindow, now: number): Promise<CountryCount[]> {
  const totals = new Map<string, number>();
  for (const row of await counters(db, scope, window, now, ['geo'])) {
    totals.set(row.label, (totals.get(row.label) ?? 0) + Number(row.count));
  }
  return [...totals]
    .map(([country, requests]) => ({ country, requests }))
    .sort((a, b) => b.requests - a.requests || a.country.localeCompare(b.country));
}
