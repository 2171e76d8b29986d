import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import type { Environment } from '../../shared/domain/environment';
import type { TrafficSeries } from '../../shared/traffic/traffic-queries';
import type { CsvValue } from '../http/csv';

export const trafficCsvHeader = [
  'time',
  'step_seconds',
  'environment',
  'key_id',
  'key_name',
  'key_last4',
  'requests',
  '2xx',
  '3xx',
  '4xx',
  '5xx',
  '401',
  '403',
  '429',
  'p50_ms',
  'p95_ms',
];

/**
 * The traffic page's series as CSV records, oldest step first: each step's start in ISO 8601
 * (UTC), the scope it counts (the key, or empty for every key of the environment), the same
 * counts as the page's table, and latency (empty for a step without requests).
 */
export function trafficCsvRows(series: TrafficSeries, environment: Environment, key: ApiKeyRecord | undefined): CsvValue[][] {
  return series.points.map((p) => [
    p.at,
    series.stepMs / 1000,
    environment,
    key?.id ?? null,
    key?.name ?? null,
    key?.last4 ?? null,
    p.requests,
    p.byClass['2xx'],
    p.byClass['3xx'],
    p.byClass['4xx'],
    p.byClass['5xx'],
    p.unauthorized,
    p.forbidden,
    p.rateLimited,
    p.p50Ms,
    p.p95Ms,
  ]);
}

/** Where the traffic page's series for this scope downloads as CSV. */
export function trafficCsvHref(environment: Environment, window: string, keyId: string | undefined): string {
  const params = new URLSearchParams({ window });
  if (keyId) params.set('key', keyId);
  return `/traffic/${environment}.csv?${params.toString()}`;
}
