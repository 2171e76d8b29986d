import { sql, type Kysely } from 'kysely';

/** Usage metering, the billing view over it, and the monthly test-data reset log. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('usage_daily')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('status_class', 'text', (c) => c.notNull().check(sql`status_class in ('2xx', '4xx', '5xx', '429')`))
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_daily_pk', ['key_id', 'day', 'endpoint', 'status_class'])
    .execute();
  await db.schema.createIndex('usage_daily_account_day_idx').on('usage_daily').columns(['account_id', 'day']).execute();

  // One row per flushed Redis snapshot: a snapshot is added to usage_daily at most once.
  await db.schema
    .createTable('usage_flushes')
    .addColumn('flush_id', 'text', (c) => c.primaryKey())
    .addColumn('rows', 'integer', (c) => c.notNull())
    .addColumn('flushed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await sql`
    create view billing_usage_monthly as
    select account_id,
           to_char(date_trunc('month', day), 'YYYY-MM') as month,
           sum(count) filter (where status_class <> '429')::bigint as billable_requests,
           sum(count) filter (where status_class = '2xx')::bigint as requests_2xx,
           sum(count) filter (where status_class = '4xx')::bigint as requests_4xx,
           sum(count) filter (where status_class = '5xx')::bigint as requests_5xx,
           sum(count) filter (where status_class = '429')::bigint as requests_429,
           sum(count)::bigint as total_requests
    from usage_daily
    group by account_id, date_trunc('month', day)`.execute(db);

  await db.schema
    .createTable('test_data_resets')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('period', 'text') // YYYY-MM for the scheduled monthly run; null for manual runs
    .addColumn('account_id', 'text') // null: all accounts
    // baseline: recorded on a fresh install so the first reset is the next 1st, not at once.
    .addColumn('trigger', 'text', (c) => c.notNull().check(sql`trigger in ('schedule', 'catch-up', 'manual', 'baseline')`))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz', (c) => c.notNull())
    .addColumn('rows_removed', 'jsonb', (c) => c.notNull())
    .execute();
  await sql`create unique index test_data_resets_period_idx on test_data_resets (period) where period is not null`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
