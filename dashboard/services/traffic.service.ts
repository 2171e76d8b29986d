import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import { keyStatus } from '../../shared/credentials/key-status';
import type { Db } from '../../shared/db/database';
import type { Environment } from '../../shared/domain/environment';
import { quotaForecasts, type QuotaForecast } from '../../shared/traffic/quota-forecast';
import {
  countryCounts,
  trafficSeries,
  type CountryCount,
  type TrafficScope,
  type TrafficSeries,
  type TrafficWindow,
} from '../../shared/traffic/traffic-queries';

/** What a traffic page looks at: one environment and window, the account's keys there, and the account or one key. */
export interface TrafficChoice {
  environment: Environment;
  window: TrafficWindow;
  /** The environment's keys (not deleted), for the picker. */
  keys: ApiKeyRecord[];
  /** The chosen key; undefined for the whole account. */
  key?: ApiKeyRecord;
  scope: TrafficScope;
}

/** The two keys of a rotation in its grace period, with each one's traffic. */
export interface RotationTraffic {
  old: ApiKeyRecord;
  next: ApiKeyRecord;
  oldSeries: TrafficSeries;
  nextSeries: TrafficSeries;
}

export interface TrafficOverview {
  series: TrafficSeries;
  /** Live keys' month-to-date usage (all of them, or the chosen key's); null for test keys. */
  usage: QuotaForecast[] | null;
  /** The chosen key's rotation while its grace period lasts. */
  rotation: RotationTraffic | null;
}

/**
 * The other key of a rotation still in its grace period: the key that replaced `key` while
 * `key` rotates out, or the key `key` replaced while that one rotates out.
 */
function rotationPartner(key: ApiKeyRecord, keys: ApiKeyRecord[], now: number): { old: ApiKeyRecord; next: ApiKeyRecord } | null {
  if (keyStatus(key, now) === 'expiring' && key.replacedBy) {
    const next = keys.find((k) => k.id === key.replacedBy);
    return next ? { old: key, next } : null;
  }
  const old = keys.find((k) => k.replacedBy === key.id && keyStatus(k, now) === 'expiring');
  return old ? { old, next: key } : null;
}

/** The traffic the worker flushed to Postgres, as the traffic and geography pages show it. */
export class TrafficService {
  constructor(private readonly db: Db) {}

  /** Requests over the window, live usage against the quota, and a rotation's two keys side by side. */
  async overview(choice: TrafficChoice, now: number): Promise<TrafficOverview> {
    const { scope, window } = choice;
    const pair = choice.key ? rotationPartner(choice.key, choice.keys, now) : null;
    const [series, usage, rotation] = await Promise.all([
      trafficSeries(this.db, scope, window, now),
      choice.environment === 'live' ? quotaForecasts(this.db, { accountId: scope.accountId, keyId: choice.key?.id, now }) : null,
      pair
        ? Promise.all([
            trafficSeries(this.db, { ...scope, keyId: pair.old.id }, window, now),
            trafficSeries(this.db, { ...scope, keyId: pair.next.id }, window, now),
          ]).then(([oldSeries, nextSeries]) => ({ ...pair, oldSeries, nextSeries }))
        : null,
    ]);
    return { series, usage, rotation };
  }

  /** Requests, status classes, refusals and latency per step of the window: the page's series alone. */
  series(choice: Pick<TrafficChoice, 'scope' | 'window'>, now: number): Promise<TrafficSeries> {
    return trafficSeries(this.db, choice.scope, choice.window, now);
  }

  /** Requests per country over the window, most first. */
  countries(choice: Pick<TrafficChoice, 'scope' | 'window'>, now: number): Promise<CountryCount[]> {
    return countryCounts(this.db, choice.scope, choice.window, now);
  }
}
