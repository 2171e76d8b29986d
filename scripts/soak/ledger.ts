import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';

export interface OutcomeLedger {
  /** Outcomes answered 202. */
  accepted: number;
  /** …of which Postgres has the row. */
  applied: number;
  /** Answered 202 and not in Postgres. */
  lost: string[];
  /** Outcomes counted more than once by a profile (interactions or outcome versions beyond its outcome rows). */
  appliedTwice: number;
  /** Rows in Postgres for outcomes the clients never saw a 202 for (the answer was lost, say). */
  appliedWithoutAck: number;
}

/** Checks in Postgres what became of the accepted outcomes. */
export async function outcomeLedger(db: Db, accepted: Set<string>): Promise<OutcomeLedger> {
  const ids = [...accepted];
  const applied = new Set<string>();
  for (let i = 0; i < ids.length; i += 5000) {
    const rows = await db
      .selectFrom('outcomes')
      .select('request_id')
      .where('request_id', 'in', ids.slice(i, i + 5000))
      .execute();
    for (const row of rows) applied.add(row.request_id);
  }
  const totals = await sql<{ rows: number; extra_interactions: number; extra_versions: number }>`
    with o as (select account_id, environment, user_id, count(*)::int as n from outcomes group by 1, 2, 3),
         v as (select account_id, environment, user_id, count(*)::int as n from profile_versions where cause = 'outcome' group by 1, 2, 3)
    select (select count(*) from outcomes)::int as rows,
           coalesce(sum(greatest(p.interaction_count - coalesce(o.n, 0), 0)), 0)::int as extra_interactions,
           coalesce(sum(greatest(coalesce(v.n, 0) - coalesce(o.n, 0), 0)), 0)::int as extra_versions
    from profiles p
    left join o using (account_id, environment, user_id)
    left join v using (account_id, environment, user_id)`.execute(db);
  const row = totals.rows[0]!;
  return {
    accepted: ids.length,
    applied: applied.size,
    lost: ids.filter((id) => !applied.has(id)),
    appliedTwice: Math.max(row.extra_interactions, row.extra_versions),
    appliedWithoutAck: row.rows - applied.size,
  };
}
