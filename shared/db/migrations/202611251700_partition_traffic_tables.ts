import { sql, type Kysely } from 'kysely';

/**
 * The dashboard's traffic counters become tables partitioned by month of `at`, with the same
 * ensure_month_partition as the event tables (docs/adr/0013-monthly-partitions.md). The keys
 * already lead with (account_id, environment) and hold `at`; existing rows move into their
 * months inside this migration's transaction. Their retention stays a DELETE by time
 * (docs/adr/0012-traffic-recording.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['traffic_minute', 'traffic_hour']) {
    const old = `${table}_unpartitioned`;
    await sql`alter table ${sql.table(table)} rename to ${sql.table(old)}`.execute(db);
    // Index names are per schema: the old ones go before the new table takes them.
    await sql`alter table ${sql.table(old)} drop constraint ${sql.ref(`${table}_pk`)}`.execute(db);
    await sql`drop index ${sql.ref(`${table}_at_idx`)}`.execute(db);
    await sql`
      create table ${sql.table(table)} (
        account_id text not null,
        environment text not null check (environment in ('test', 'live')),
        at timestamptz not null,
        key_id text not null,
        metric text not null check (metric in ('req', 'lat', 'geo')),
        label text not null,
        count bigint not null,
        constraint ${sql.ref(`${table}_pk`)} primary key (account_id, environment, at, key_id, metric, label)
      ) partition by range (at)`.execute(db);
    // Retention deletes by time alone; within the month it cuts, it reads this index.
    await sql`create index ${sql.ref(`${table}_at_idx`)} on ${sql.table(table)} (at)`.execute(db);
    await sql`create table ${sql.table(`${table}_default`)} partition of ${sql.table(table)} default`.execute(db);
    await sql`select ensure_month_partition(${table}, m.month) from (
      select distinct date_trunc('month', at at time zone 'UTC')::date as month from ${sql.table(old)}
      union select (date_trunc('month', now() at time zone 'UTC') + make_interval(months => n))::date from generate_series(0, 2) as n
    ) as m`.execute(db);
    await sql`insert into ${sql.table(table)} (account_id, environment, at, key_id, metric, label, count)
      select account_id, environment, at, key_id, metric, label, count from ${sql.table(old)}`.execute(db);
    await sql`drop table ${sql.table(old)}`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
