import { sql, type Kysely } from 'kysely';

/**
 * The schema as of the first release (docs/adr/0019-one-baseline.md): every table, view and
 * function, the large append-mostly tables partitioned by month from the start
 * (docs/adr/0013-monthly-partitions.md). Frozen: later changes come as dated migrations after
 * it, never as edits to it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
  // The current month's partitions and the next two; the worker's daily upkeep keeps ahead of need.
  for (const table of PARTITIONED) {
    await sql.raw(`create table ${table}_default partition of ${table} default`).execute(db);
    await sql`select ensure_month_partition(${table}, (date_trunc('month', now() at time zone 'UTC') + make_interval(months => n))::date)
      from generate_series(0, 2) as n`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

const PARTITIONED = ['decisions', 'outcomes', 'profile_versions', 'traffic_minute', 'traffic_hour'];

const STATEMENTS = [
  // Accounts and their API keys. live_key_limit: an enterprise account's own cap (null: its plan's).
  `create table accounts (
    id text primary key,
    name text not null unique,
    plan text not null check (plan in ('starter', 'pro', 'enterprise')),
    restricted boolean not null default false,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    live_key_limit integer check (live_key_limit is null or live_key_limit >= 0)
  )`,
  `create index accounts_updated_at_idx on accounts (updated_at)`,
  `create table api_keys (
    id text primary key,
    account_id text not null references accounts (id),
    environment text not null check (environment in ('test', 'live')),
    name text not null,
    key_hash bytea not null unique,
    last4 text not null,
    scopes text[] not null,
    rate_limit_rps integer,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    last_used_at timestamptz,
    revoked_at timestamptz,
    deleted_at timestamptz,
    expires_at timestamptz,
    replaced_by text
  )`,
  `create index api_keys_account_idx on api_keys (account_id, created_at)`,
  `create index api_keys_updated_at_idx on api_keys (updated_at)`,

  // Profiles: one row per user, its learner state and pins.
  `create table profiles (
    account_id text not null,
    environment text not null check (environment in ('test', 'live')),
    user_id text not null,
    generation text not null,
    state jsonb not null,
    pins jsonb not null default '{}'::jsonb,
    profile_version integer not null default 0,
    interaction_count integer not null default 0,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint profiles_pk primary key (account_id, environment, user_id)
  )`,
  // The version number stays unique per user within a month by key; across months the
  // profile row's lock, under which every version is numbered, keeps it unique.
  `create table profile_versions (
    account_id text not null,
    environment text not null check (environment in ('test', 'live')),
    user_id text not null,
    profile_version integer not null,
    cause text not null check (cause in ('outcome', 'manual', 'reset')),
    changed jsonb not null,
    created_at timestamptz not null default now(),
    constraint profile_versions_pk primary key (account_id, environment, user_id, profile_version, created_at)
  ) partition by range (created_at)`,

  // Decisions (the analytics log) and outcomes, keyed by the decision's issue time: an outcome
  // lives in its decision's month, and (tenant, request_id, issued_at) is unique exactly when
  // the request id is.
  `create table decisions (
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
  ) partition by range (issued_at)`,
  `create index decisions_user_idx on decisions (account_id, environment, user_id, issued_at)`,
  `create index decisions_env_issued_idx on decisions (environment, issued_at)`,
  `create table outcomes (
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
  ) partition by range (issued_at)`,
  `create index outcomes_user_idx on outcomes (account_id, environment, user_id)`,
  // Detached months stay in the database as plain tables; erasure and the test reset reach them here.
  `create table archived_partitions (
    table_name text primary key,
    parent text not null check (parent in ('decisions', 'outcomes', 'profile_versions')),
    month text not null,
    detached_at timestamptz not null default now()
  )`,
  // Erasure records keep a keyed hash of the userId, never the id.
  `create table erasures (
    account_id text not null,
    environment text not null check (environment in ('test', 'live')),
    user_hash text not null,
    erased_at timestamptz not null,
    constraint erasures_pk primary key (account_id, environment, user_hash)
  )`,

  // Population priors: version from a sequence, so it only grows, also across a reset that deletes the row.
  `create sequence population_version_seq`,
  `create table population_priors (
    account_id text not null,
    environment text not null check (environment in ('test', 'live')),
    prior jsonb not null,
    version bigint not null default nextval('population_version_seq'),
    updated_at timestamptz not null default now(),
    constraint population_priors_pk primary key (account_id, environment)
  )`,

  // Usage metering, its flush ledger (a snapshot is added at most once) and the billing view: 5xx never billable.
  `create table usage_daily (
    key_id text not null,
    account_id text not null,
    day date not null,
    endpoint text not null,
    status_class text not null check (status_class in ('2xx', '4xx', '5xx', '429')),
    count bigint not null,
    constraint usage_daily_pk primary key (key_id, day, endpoint, status_class)
  )`,
  `create index usage_daily_account_day_idx on usage_daily (account_id, day)`,
  `create table usage_flushes (
    flush_id text primary key,
    rows integer not null,
    flushed_at timestamptz not null default now()
  )`,
  `create view billing_usage_monthly as
    select account_id,
           to_char(date_trunc('month', day), 'YYYY-MM') as month,
           sum(count) filter (where status_class in ('2xx', '4xx'))::bigint as billable_requests,
           sum(count) filter (where status_class = '2xx')::bigint as requests_2xx,
           sum(count) filter (where status_class = '4xx')::bigint as requests_4xx,
           sum(count) filter (where status_class = '5xx')::bigint as requests_5xx,
           sum(count) filter (where status_class = '429')::bigint as requests_429,
           sum(count)::bigint as total_requests
    from usage_daily
    group by account_id, date_trunc('month', day)`,
  // The monthly test-data reset's log. period: YYYY-MM of a scheduled run, null for manual ones;
  // 'baseline': recorded on a fresh install so the first reset is the next 1st, not at once.
  `create table test_data_resets (
    id bigserial primary key,
    period text,
    account_id text,
    trigger text not null check (trigger in ('schedule', 'catch-up', 'manual', 'baseline')),
    started_at timestamptz not null,
    finished_at timestamptz not null,
    rows_removed jsonb not null
  )`,
  `create unique index test_data_resets_period_idx on test_data_resets (period) where period is not null`,

  // Dashboard traffic: additive counters per key and minute, and per hour
  // (docs/adr/0012-traffic-recording.md). metric 'req' (label <endpoint>:<status>), 'lat'
  // (latency bucket), 'geo' (country). Retention deletes by time alone.
  ...['traffic_minute', 'traffic_hour'].flatMap((table) => [
    `create table ${table} (
      account_id text not null,
      environment text not null check (environment in ('test', 'live')),
      at timestamptz not null,
      key_id text not null,
      metric text not null check (metric in ('req', 'lat', 'geo')),
      label text not null,
      count bigint not null,
      constraint ${table}_pk primary key (account_id, environment, at, key_id, metric, label)
    ) partition by range (at)`,
    `create index ${table}_at_idx on ${table} (at)`,
  ]),
  `create table traffic_flushes (
    flush_id text primary key,
    rows integer not null,
    flushed_at timestamptz not null default now()
  )`,
  `create table traffic_anomalies (
    account_id text not null,
    environment text not null check (environment in ('test', 'live')),
    id bigserial not null,
    key_id text not null,
    rule text not null,
    subject text not null,
    reason text not null,
    numbers jsonb not null,
    first_seen timestamptz not null,
    last_seen timestamptz not null,
    acknowledged_at timestamptz,
    acknowledged_by text,
    constraint traffic_anomalies_pk primary key (account_id, environment, id)
  )`,
  `create index traffic_anomalies_identity_idx on traffic_anomalies (account_id, environment, key_id, rule, subject, last_seen)`,

  // The dashboard's people (one account each, owner or viewer) and their audit log: the
  // client's country code, never its address; the actor's email as it was.
  `create table dashboard_users (
    id text primary key,
    account_id text not null references accounts (id) on delete cascade,
    email text not null unique check (email = lower(email)),
    role text not null check (role in ('owner', 'viewer')),
    password_hash text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  `create index dashboard_users_account_idx on dashboard_users (account_id)`,
  `create table dashboard_audit (
    id bigserial primary key,
    account_id text not null references accounts (id) on delete cascade,
    actor text not null,
    action text not null,
    key_id text,
    environment text check (environment in ('test', 'live')),
    country text check (country ~ '^[A-Z]{2}$'),
    created_at timestamptz not null default now()
  )`,
  `create index dashboard_audit_account_idx on dashboard_audit (account_id, id desc)`,

  // ensure_month_partition(parent, month): attaches the month's partition of a partitioned table
  // unless it exists. Rows that went to the DEFAULT partition meanwhile (written while no
  // partition covered their month) are moved into it. One caller at a time per table.
  `create function ensure_month_partition(parent text, month date) returns boolean
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
    end $$`,
];
