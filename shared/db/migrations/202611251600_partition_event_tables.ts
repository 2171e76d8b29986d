import { sql, type Kysely } from 'kysely';

/**
 * Decisions, outcomes and profile versions become tables partitioned by month
 * (docs/adr/0013-monthly-partitions.md). Decisions and outcomes are keyed by the decision's
 * issue time, so an outcome lives in its decision's month and (tenant, request_id, issued_at)
 * is unique exactly when the request id is; versions by their own time. Every key leads with
 * the tenant. Existing rows are moved into their months inside this migration's transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createEnsureMonthPartition(db);
  for (const table of ['decisions', 'outcomes', 'profile_versions']) {
    await sql`alter table ${sql.table(table)} rename to ${sql.table(`${table}_unpartitioned`)}`.execute(db);
  }
  // Index names are per schema: the old ones go before the new tables take them.
  await sql`alter table decisions_unpartitioned drop constraint decisions_pkey`.execute(db);
  await sql`alter table outcomes_unpartitioned drop constraint outcomes_pkey`.execute(db);
  await sql`drop index decisions_user_idx, decisions_env_issued_idx, outcomes_user_idx`.execute(db);

  await sql`
    create table decisions (
      account_id text not null,
      environment text not null check (environment in ('test', 'live')),
      user_id text not null,
      request_id text not null,
      chosen jsonb not null,
      probabilities jsonb not null,
      context jsonb not null,
      explored jsonb not null,
      confidence double precision not null,
      issued_at timestamptz not null,
      constraint decisions_pk primary key (account_id, environment, request_id, issued_at)
    ) partition by range (issued_at)`.execute(db);
  await sql`create index decisions_user_idx on decisions (account_id, environment, user_id, issued_at)`.execute(db);
  await sql`create index decisions_env_issued_idx on decisions (environment, issued_at)`.execute(db);

  // issued_at: the decision's issue time (carried by the request id), not the outcome's own.
  await sql`
    create table outcomes (
      account_id text not null,
      environment text not null check (environment in ('test', 'live')),
      user_id text not null,
      request_id text not null,
      issued_at timestamptz not null,
      fields jsonb not null,
      reward double precision not null,
      received_at timestamptz not null,
      applied_at timestamptz not null default now(),
      constraint outcomes_pk primary key (account_id, environment, request_id, issued_at)
    ) partition by range (issued_at)`.execute(db);
  await sql`create index outcomes_user_idx on outcomes (account_id, environment, user_id)`.execute(db);

  // The version number stays unique per user within a month by key; across months the
  // profile row's lock, under which every version is numbered, keeps it unique.
  await sql`
    create table profile_versions (
      account_id text not null,
      environment text not null check (environment in ('test', 'live')),
      user_id text not null,
      profile_version integer not null,
      cause text not null check (cause in ('outcome', 'manual', 'reset')),
      changed jsonb not null,
      created_at timestamptz not null default now(),
      constraint profile_versions_pk primary key (account_id, environment, user_id, profile_version, created_at)
    ) partition by range (created_at)`.execute(db);

  // Detached months stay in the database as plain tables; erasure and the test reset reach them here.
  await sql`
    create table archived_partitions (
      table_name text primary key,
      parent text not null check (parent in ('decisions', 'outcomes', 'profile_versions')),
      month text not null,
      detached_at timestamptz not null default now()
    )`.execute(db);

  const months = (table: string, column: string) => sql`
    select distinct date_trunc('month', ${sql.ref(column)} at time zone 'UTC')::date as month from ${sql.table(table)}
    union select (date_trunc('month', now() at time zone 'UTC') + make_interval(months => n))::date from generate_series(0, 2) as n`;
  const partitionsFor = async (parent: string, source: ReturnType<typeof months>) => {
    await sql`create table ${sql.table(`${parent}_default`)} partition of ${sql.table(parent)} default`.execute(db);
    await sql`select ensure_month_partition(${parent}, m.month) from (${source}) as m`.execute(db);
  };

  await partitionsFor('decisions', months('decisions_unpartitioned', 'issued_at'));
  await sql`insert into decisions (account_id, environment, user_id, request_id, chosen, probabilities, context, explored, confidence, issued_at)
    select account_id, environment, user_id, request_id, chosen, probabilities, context, explored, confidence, issued_at
    from decisions_unpartitioned`.execute(db);

  // An outcome always had its decision (the worker applies none without); the outcome's own
  // time stands in should a row ever lack one.
  await sql`create temporary table outcomes_moved on commit drop as
    select o.account_id, o.environment, o.user_id, o.request_id, coalesce(d.issued_at, o.received_at) as issued_at,
           o.fields, o.reward, o.received_at, o.applied_at
    from outcomes_unpartitioned o
    left join decisions_unpartitioned d on d.request_id = o.request_id`.execute(db);
  await partitionsFor('outcomes', months('outcomes_moved', 'issued_at'));
  await sql`insert into outcomes select * from outcomes_moved`.execute(db);

  await partitionsFor('profile_versions', months('profile_versions_unpartitioned', 'created_at'));
  await sql`insert into profile_versions (account_id, environment, user_id, profile_version, cause, changed, created_at)
    select account_id, environment, user_id, profile_version, cause, changed, created_at
    from profile_versions_unpartitioned`.execute(db);

  await sql`drop table decisions_unpartitioned, outcomes_unpartitioned, profile_versions_unpartitioned`.execute(db);
}

/**
 * ensure_month_partition(parent, month): attaches the month's partition of a partitioned
 * table unless it exists. Rows that went to the DEFAULT partition meanwhile (written while no
 * partition covered their month) are moved into it. One caller at a time per table.
 */
async function createEnsureMonthPartition(db: Kysely<any>): Promise<void> {
  await sql`
    create function ensure_month_partition(parent text, month date) returns boolean
    language plpgsql as $$
    declare
      key_column text := (select a.attname from pg_partitioned_table p
        join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
        where p.partrelid = parent::regclass);
      first_day timestamptz := date_trunc('month', month::timestamp) at time zone 'UTC';
      next_first_day timestamptz := (date_trunc('month', month::timestamp) + interval '1 month') at time zone 'UTC';
      part text := format('%s_y%sm%s', parent, to_char(month, 'YYYY'), to_char(month, 'MM'));
      default_part text := parent || '_default';
      parked boolean;
    begin
      perform pg_advisory_xact_lock(hashtextextended('cos:partition:' || parent, 0));
      -- A catalog query, not a cached name lookup: sees a partition committed while this waited.
      if exists (select 1 from pg_class c where c.relname = part
                 and c.relnamespace = (select relnamespace from pg_class where oid = parent::regclass)) then
        return false;
      end if;
      execute format('create table %I (like %I including defaults including constraints)', part, parent);
      execute format('select exists (select 1 from %I where %I >= $1 and %I < $2)', default_part, key_column, key_column)
        into parked using first_day, next_first_day;
      if parked then
        -- Rare: attaching would find the month's rows in the default partition. Take them out first.
        execute format('alter table %I detach partition %I', parent, default_part);
        execute format('with moved as (delete from %I where %I >= $1 and %I < $2 returning *) insert into %I select * from moved',
          default_part, key_column, key_column, part) using first_day, next_first_day;
        execute format('alter table %I attach partition %I for values from (%L) to (%L)', parent, part, first_day, next_first_day);
        execute format('alter table %I attach partition %I default', parent, default_part);
      else
        -- ATTACH takes a weaker lock on the parent than CREATE TABLE … PARTITION OF: reads and writes go on.
        execute format('alter table %I attach partition %I for values from (%L) to (%L)', parent, part, first_day, next_first_day);
      end if;
      return true;
    end $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
