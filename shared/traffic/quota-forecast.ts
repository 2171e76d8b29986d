import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import { startOfMonth, startOfNextMonth, utcMonth } from '../util/calendar';
import { PLAN_LIMITS } from '../limits/plans';

/** The trailing span whose request rate is projected to the month's end. */
export const FORECAST_RATE_SPAN_MS = 7 * 86_400_000;

export interface QuotaForecast {
  keyId: string;
  keyName: string;
  /** YYYY-MM (UTC). */
  month: string;
  /** Requests counted against the quota this month so far: admitted ones, not 401, 403 or 429. */
  used: number;
  /** The plan's monthly quota of the account (all its live keys together); null when the plan has none (enterprise). */
  quota: number | null;
  /** Projected requests at the month's end. */
  forecast: number;
  /** used / quota and forecast / quota (1 = the whole quota; a key's share of the account's); null without a quota. */
  usedShare: number | null;
  forecastShare: number | null;
}

/**
 * Month-end forecast: what is used so far plus the key's recent rate — requests in the last
 * 7 days, or since its first request when that is more recent — times the time left in the
 * month. The recent rate rather than the month's average, so a key that started or changed its
 * pace mid-month is projected at its current pace.
 */
export function forecastMonthEnd(input: { used: number; recent: number; recentSpanMs: number; now: number }): number {
  const left = startOfNextMonth(input.now) - input.now;
  const rate = input.recentSpanMs > 0 ? input.recent / input.recentSpanMs : 0;
  return Math.round(input.used + rate * left);
}

/** Counts of requests that use quota: admitted ones (the limiter counts exactly these). */
const QUOTA_REQUESTS = sql`metric = 'req' and split_part(label, ':', 2) not in ('401', '403', '429')`;

/** Month-to-date usage and month-end forecast of each live key of an account (or of one key). */
export async function quotaForecasts(db: DbOrTx, input: { accountId: string; keyId?: string; now: number }): Promise<QuotaForecast[]> {
  const { accountId, keyId, now } = input;
  const monthStart = new Date(startOfMonth(now));
  const recentFrom = new Date(now - FORECAST_RATE_SPAN_MS);
  const result = await sql<{
    key_id: string;
    name: string;
    plan: keyof typeof PLAN_LIMITS;
    used: number;
    recent: number;
    first: Date | null;
  }>`
    select k.id as key_id, k.name, a.plan,
           coalesce(sum(t.count) filter (where t.at >= ${monthStart}), 0)::bigint as used,
           coalesce(sum(t.count) filter (where t.at >= ${recentFrom}), 0)::bigint as recent,
           (select min(at) from traffic_hour f where f.account_id = k.account_id and f.environment = 'live' and f.key_id = k.id) as first
    from api_keys k
    join accounts a on a.id = k.account_id
    left join traffic_hour t on t.account_id = k.account_id and t.environment = 'live' and t.key_id = k.id
      and t.at >= least(${monthStart}::timestamptz, ${recentFrom}::timestamptz) and t.at <= ${new Date(now)} and ${QUOTA_REQUESTS}
    where k.account_id = ${accountId} and k.environment = 'live' and k.deleted_at is null
      ${keyId ? sql`and k.id = ${keyId}` : sql``}
    group by k.id, k.name, a.plan
    order by k.id`.execute(db);
  return result.rows.map((row) => {
    const quota = PLAN_LIMITS[row.plan].perMonth;
    const used = Number(row.used);
    const since = row.first ? Math.max(recentFrom.getTime(), new Date(row.first).getTime()) : now;
    const forecast = forecastMonthEnd({ used, recent: Number(row.recent), recentSpanMs: now - since, now });
    return {
      keyId: row.key_id,
      keyName: row.name,
      month: utcMonth(now),
      used,
      quota,
      forecast,
      usedShare: quota ? used / quota : null,
      forecastShare: quota ? forecast / quota : null,
    };
  });
}

/**
 * The account's month: its live keys' use and forecasts added up against its quota, named after
 * the key that contributes most to the forecast (whose pattern then reports it, once per account).
 */
export function accountForecast(keys: QuotaForecast[]): QuotaForecast | null {
  const top = keys.reduce<QuotaForecast | null>((best, key) => (best === null || key.forecast > best.forecast ? key : best), null);
  if (top === null) return null;
  const used = keys.reduce((sum, key) => sum + key.used, 0);
  const forecast = keys.reduce((sum, key) => sum + key.forecast, 0);
  const { quota } = top;
  return { ...top, used, forecast, usedShare: quota ? used / quota : null, forecastShare: quota ? forecast / quota : null };
}
