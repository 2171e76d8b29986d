import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import { PLAN_LIMITS, type Plan } from '../limits/plans';
import { recordEvent } from '../webhooks/outbox.repository';

/** The shares of the monthly quota announced by a `quota.threshold` webhook event, each once a month. */
export const QUOTA_THRESHOLDS = [75, 90, 100] as const;

/**
 * Called by the usage flush in the transaction that wrote a day's counts: for each account
 * whose month of actual use (its live keys' metered requests, 429s left out, as flushed so far)
 * now reaches a threshold of its plan's quota for the first time that month, records the
 * threshold and its `quota.threshold` event. The forecast is not consulted: it stays an
 * unusual pattern. Returns the events recorded.
 */
export async function recordQuotaThresholds(tx: DbOrTx, accountIds: readonly string[], day: string, now: Date): Promise<number> {
  if (accountIds.length === 0) return 0;
  const month = day.slice(0, 7);
  const from = `${month}-01`;
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const to = new Date(Date.UTC(year, mon, 1)).toISOString().slice(0, 10);
  const usage = await sql<{ account_id: string; plan: Plan; used: number }>`
    select a.id as account_id, a.plan, coalesce(sum(u.count) filter (where u.status_class <> '429'), 0)::bigint as used
    from accounts a
    left join usage_daily u on u.account_id = a.id and u.day >= ${from} and u.day < ${to}
    where a.id in (${sql.join([...new Set(accountIds)])})
    group by a.id, a.plan`.execute(tx);
  let recorded = 0;
  for (const { account_id: accountId, plan, used } of usage.rows) {
    const quota = PLAN_LIMITS[plan].perMonth;
    if (quota === null) continue;
    for (const percent of QUOTA_THRESHOLDS) {
      if (used * 100 < quota * percent) continue;
      const reached = await tx
        .insertInto('webhook_quota_thresholds')
        .values({ account_id: accountId, month, percent, reached_at: now })
        .onConflict((oc) => oc.doNothing())
        .returning('percent')
        .executeTakeFirst();
      if (!reached) continue;
      await recordEvent(tx, {
        accountId,
        environment: 'live',
        type: 'quota.threshold',
        data: { percent, month, used: Number(used), quota },
        occurredAt: now,
      });
      recorded += 1;
    }
  }
  return recorded;
}
