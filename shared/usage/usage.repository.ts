import type { DbOrTx } from '../db/database';

/** An account's usage in a UTC month (YYYY-MM). */
export interface AccountMonth {
  accountId: string;
  month: string;
}

export interface UsageRow {
  day: string;
  keyId: string;
  endpoint: string;
  statusClass: string;
  count: number;
}

export interface MonthlyTotals {
  billableRequests: number;
  requests2xx: number;
  requests4xx: number;
  requests5xx: number;
  requests429: number;
  totalRequests: number;
}

/** Daily usage of an account in a month (YYYY-MM), from `usage_daily`. */
export async function usageForMonth(db: DbOrTx, { accountId, month }: AccountMonth): Promise<UsageRow[]> {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const from = new Date(Date.UTC(year, mon - 1, 1)).toISOString().slice(0, 10);
  const to = new Date(Date.UTC(year, mon, 1)).toISOString().slice(0, 10);
  const rows = await db
    .selectFrom('usage_daily')
    .select(['day', 'key_id', 'endpoint', 'status_class', 'count'])
    .where('account_id', '=', accountId)
    .where('day', '>=', from)
    .where('day', '<', to)
    .where('count', '!=', 0)
    .orderBy('day')
    .orderBy('key_id')
    .orderBy('endpoint')
    .orderBy('status_class')
    .execute();
  return rows.map((row) => ({
    day: row.day,
    keyId: row.key_id,
    endpoint: row.endpoint,
    statusClass: row.status_class,
    count: Number(row.count),
  }));
}

/** The billing view's row for an account and month (zeros when nothing was metered). */
export async function monthlyTotals(db: DbOrTx, { accountId, month }: AccountMonth): Promise<MonthlyTotals> {
  const row = await db
    .selectFrom('billing_usage_monthly')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .executeTakeFirst();
  return {
    billableRequests: Number(row?.billable_requests ?? 0),
    requests2xx: Number(row?.requests_2xx ?? 0),
    requests4xx: Number(row?.requests_4xx ?? 0),
    requests5xx: Number(row?.requests_5xx ?? 0),
    requests429: Number(row?.requests_429 ?? 0),
    totalRequests: Number(row?.total_requests ?? 0),
  };
}
