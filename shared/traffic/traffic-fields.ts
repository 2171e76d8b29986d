/**
 * How traffic counters are named, in Redis hash fields and Postgres rows alike
 * (docs/adr/0012-traffic-recording.md): a metric and a label per key and minute.
 * - `req`: requests, label `<endpoint>:<status>`;
 * - `lat`: latency histogram, label the bucket index (latency-histogram.ts);
 * - `geo`: requests by client country, label an ISO 3166-1 alpha-2 code or `ZZ` (unknown).
 */
export const TRAFFIC_METRICS = ['req', 'lat', 'geo'] as const;
export type TrafficMetric = (typeof TRAFFIC_METRICS)[number];

/**
 * A response's status as recorded: 401, 403 and 429 on their own (the dashboard counts them),
 * every other status by class. `4xx` means a 4xx other than those three.
 */
export const TRAFFIC_STATUSES = ['2xx', '3xx', '401', '403', '429', '4xx', '5xx'] as const;
export type TrafficStatus = (typeof TRAFFIC_STATUSES)[number];

export function trafficStatus(status: number): TrafficStatus {
  if (status === 401 || status === 403 || status === 429) return String(status) as TrafficStatus;
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  if (status >= 300) return '3xx';
  return '2xx';
}

/** The country label of a request whose address has none (private, reserved, unknown). */
export const UNKNOWN_COUNTRY = 'ZZ';

export const trafficField = (keyId: string, metric: TrafficMetric, label: string) => `${keyId}|${metric}|${label}`;

export interface TrafficCounter {
  keyId: string;
  metric: TrafficMetric;
  label: string;
  count: number;
}

export function parseTrafficField(field: string, value: string): TrafficCounter | null {
  const [keyId, metric, label, extra] = field.split('|');
  const count = Number(value);
  if (!keyId || !label || extra !== undefined || !Number.isSafeInteger(count) || count === 0) return null;
  if (!(TRAFFIC_METRICS as readonly string[]).includes(metric!)) return null;
  return { keyId, metric: metric as TrafficMetric, label, count };
}

/** A UTC minute as `YYYY-MM-DDTHH:MM` (the Redis hash's period). */
export const utcMinute = (ms: number) => new Date(ms).toISOString().slice(0, 16);
export const MINUTE_PERIOD = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;
