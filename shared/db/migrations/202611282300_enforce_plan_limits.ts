import { sql, type Kysely } from 'kysely';

/**
 * Plans hold: an enterprise account's own cap on live keys (null: its plan's), no rate limit on
 * test keys (they have none), and 5xx answers never billable.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('live_key_limit', 'integer', (c) => c.check(sql`live_key_limit is null or live_key_limit >= 0`))
    .execute();
  await sql`update api_keys set rate_limit_rps = null where environment = 'test' and rate_limit_rps is not null`.execute(db);
  await sql`
    create or replace view billing_usage_monthly as
    select account_id,
           to_char(date_trunc('month', day), 'YYYY-MM') as month,
           sum(count) filter (where status_class in ('2xx', '4xx'))::bigint as billable_requests,
           sum(count) filter (where status_class = '2xx')::bigint as requests_2xx,
           sum(count) filter (where status_class = '4xx')::bigint as requests_4xx,
           sum(count) filter (where status_class = '5xx')::bigint as requests_5xx,
           sum(count) filter (where status_class = '429')::bigint as requests_429,
           sum(count)::bigint as total_requests
    from usage_daily
    group by account_id, date_trunc('month', day)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
