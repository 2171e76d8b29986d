import { sql } from 'kysely';
import type { DbOrTx } from '../../db/database';
import type { Environment } from '../../domain/environment';
import { accountForecast, quotaForecasts, type QuotaForecast } from '../quota-forecast';
import { UNKNOWN_COUNTRY } from '../traffic-fields';
import type { KeyActivity } from './rules';
import type { PatternThresholds } from './thresholds';

const HOUR = 3_600_000;
const MINUTE = 60_000;

export interface KeyRef {
  accountId: string;
  environment: Environment;
  keyId: string;
}
export type EvaluatedKey = KeyRef & { activity: KeyActivity };

/** Recent requests that are errors: any 4xx but 429, and 5xx. */
const ERROR = sql`split_part(label, ':', 2) in ('401', '403', '4xx', '5xx')`;

/**
 * Loads what the rules need for every key with traffic in the baseline span, at `now`: the
 * hours the volume rule compares, the recent window from minute rows, new countries, key state
 * and live keys' quota forecasts. A handful of set-based queries, whatever the number of keys.
 */
export async function loadKeyActivity(db: DbOrTx, now: number, t: PatternThresholds): Promise<EvaluatedKey[]> {
  const windowEnd = now - (now % MINUTE);
  const windowStart = windowEnd - t.windowMinutes * MINUTE;
  const lastHourAt = now - (now % HOUR) - HOUR;
  const spanStart = lastHourAt - t.baselineDays * 24 * HOUR;

  const keys = await sql<
    KeyRef & { first: Date; name: string; last4: string; revoked: Date | null; deleted: Date | null; expires: Date | null }
  >`
    select t.account_id as "accountId", t.environment, t.key_id as "keyId", min(t.at) as first,
           k.name, k.last4, k.revoked_at as revoked, k.deleted_at as deleted, k.expires_at as expires
    from traffic_hour t join api_keys k on k.id = t.key_id
    where t.metric = 'req' and t.at >= ${new Date(spanStart)} and t.at < ${new Date(windowEnd)}
    group by 1, 2, 3, k.name, k.last4, k.revoked_at, k.deleted_at, k.expires_at`.execute(db);
  if (keys.rows.length === 0) return [];
  const keyIds = keys.rows.map((row) => row.keyId);

  const hours = [
    ...Array.from({ length: 25 }, (_, i) => lastHourAt - i * HOUR),
    ...Array.from({ length: t.baselineDays }, (_, d) => lastHourAt - (d + 1) * 24 * HOUR),
  ];
  const hourly = await sql<{ keyId: string; at: Date; requests: number }>`
    select key_id as "keyId", at, sum(count)::bigint as requests from traffic_hour
    where metric = 'req' and key_id = any(${keyIds}::text[]) and at in (${sql.join(hours.map((ms) => new Date(ms)))})
    group by 1, 2`.execute(db);
  const perHour = new Map(hourly.rows.map((row) => [`${row.keyId}@${new Date(row.at).getTime()}`, Number(row.requests)]));

  const recent = await sql<{
    keyId: string;
    recent: number;
    recentErrors: number;
    unauthorized: number;
    before: number;
    beforeErrors: number;
  }>`
    select key_id as "keyId",
           coalesce(sum(count) filter (where at >= ${new Date(windowStart)}), 0)::bigint as recent,
           coalesce(sum(count) filter (where at >= ${new Date(windowStart)} and ${ERROR}), 0)::bigint as "recentErrors",
           coalesce(sum(count) filter (where at >= ${new Date(windowStart)} and split_part(label, ':', 2) = '401'), 0)::bigint as unauthorized,
           coalesce(sum(count) filter (where at < ${new Date(windowStart)}), 0)::bigint as before,
           coalesce(sum(count) filter (where at < ${new Date(windowStart)} and ${ERROR}), 0)::bigint as "beforeErrors"
    from traffic_minute
    where metric = 'req' and key_id = any(${keyIds}::text[])
      and at >= ${new Date(windowStart - 24 * HOUR)} and at < ${new Date(windowEnd)}
    group by 1`.execute(db);
  const recentOf = new Map(recent.rows.map((row) => [row.keyId, row]));

  const newCountries = await loadNewCountries(db, keyIds, windowStart, windowEnd);
  const quotas = await loadQuotas(db, keys.rows, now);

  return keys.rows.map((row) => {
    const firstAt = new Date(row.first).getTime();
    const within = (at: number) => at >= firstAt;
    const count = (at: number) => perHour.get(`${row.keyId}@${at}`) ?? 0;
    const r = recentOf.get(row.keyId);
    const activity: KeyActivity = {
      keyId: row.keyId,
      keyName: row.name,
      last4: row.last4,
      refusal: row.deleted
        ? 'deleted'
        : row.revoked
          ? 'revoked'
          : row.expires && new Date(row.expires).getTime() <= now
            ? 'rotated out'
            : null,
      historyHours: (lastHourAt + HOUR - firstAt) / HOUR,
      lastHour: count(lastHourAt),
      lastHourAt,
      sameHourPastDays: hours.slice(25).filter(within).map(count),
      previousHours: hours.slice(1, 25).filter(within).map(count),
      recent: { requests: Number(r?.recent ?? 0), errors: Number(r?.recentErrors ?? 0), unauthorized: Number(r?.unauthorized ?? 0) },
      before: { requests: Number(r?.before ?? 0), errors: Number(r?.beforeErrors ?? 0) },
      newCountries: newCountries.get(row.keyId) ?? [],
      quota: quotas.get(row.keyId) ?? null,
    };
    return { accountId: row.accountId, environment: row.environment, keyId: row.keyId, activity };
  });
}

/** Countries of the window that no earlier hour or minute of the key had. */
async function loadNewCountries(db: DbOrTx, keyIds: string[], windowStart: number, windowEnd: number) {
  const hourStart = new Date(windowStart - (windowStart % HOUR));
  const rows = await sql<{ keyId: string; country: string; requests: number }>`
    select r.key_id as "keyId", r.label as country, sum(r.count)::bigint as requests
    from traffic_minute r
    where r.metric = 'geo' and r.label <> ${UNKNOWN_COUNTRY} and r.key_id = any(${keyIds}::text[])
      and r.at >= ${new Date(windowStart)} and r.at < ${new Date(windowEnd)}
      and not exists (select 1 from traffic_hour h where h.account_id = r.account_id and h.environment = r.environment
                      and h.key_id = r.key_id and h.metric = 'geo' and h.label = r.label and h.at < ${hourStart})
      and not exists (select 1 from traffic_minute m where m.account_id = r.account_id and m.environment = r.environment
                      and m.key_id = r.key_id and m.metric = 'geo' and m.label = r.label
                      and m.at >= ${hourStart} and m.at < ${new Date(windowStart)})
    group by 1, 2 order by 2`.execute(db);
  const byKey = new Map<string, { country: string; requests: number }[]>();
  for (const row of rows.rows)
    byKey.set(row.keyId, [...(byKey.get(row.keyId) ?? []), { country: row.country, requests: Number(row.requests) }]);
  return byKey;
}

/** Each account's month against its quota, carried by the key that contributes most (one finding per account). */
async function loadQuotas(db: DbOrTx, keys: KeyRef[], now: number): Promise<Map<string, QuotaForecast>> {
  const accounts = [...new Set(keys.filter((key) => key.environment === 'live').map((key) => key.accountId))];
  const forecasts = new Map<string, QuotaForecast>();
  for (const accountId of accounts) {
    const total = accountForecast(await quotaForecasts(db, { accountId, now }));
    if (total) forecasts.set(total.keyId, total);
  }
  return forecasts;
}
