import { sql, type Kysely } from 'kysely';

/**
 * Signed webhooks (docs/adr/0021-webhooks.md).
 *
 * - webhook_events: the outbox. A row is written in the same transaction as its cause (a key
 *   change, a pattern's insert, a usage flush crossing a quota threshold, the daily rotation
 *   scan, an account's restriction); id is the `webhook-id` every delivery of it carries.
 *   relayed_at is set once the worker's relay has made its deliveries.
 * - webhook_endpoints: an account's receivers per environment. secret / previous_secret hold the
 *   signing secrets encrypted (AES-256-GCM under a key derived from COS_SECRET); the previous one
 *   still signs until previous_secret_expires_at. failing_ms accumulates the time an endpoint
 *   has been failing (null while it succeeds); disabled_reason says why it was turned off.
 * - webhook_deliveries: one row per event and endpoint (cause 'event'), plus one per test event
 *   or redelivery; the delivery log the dashboard shows.
 * - webhook_quota_thresholds: the quota thresholds each account reached in a month, so each is
 *   announced once.
 * - api_keys.rotation_due_at: when the daily scan found the live key 90 days old (announced once).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

const STATEMENTS = [
  `create table webhook_events (
    id text primary key,
    account_id text not null references accounts (id) on delete cascade,
    environment text not null check (environment in ('test', 'live')),
    type text not null,
    data jsonb not null,
    occurred_at timestamptz not null,
    relayed_at timestamptz
  )`,
  `create index webhook_events_unrelayed_idx on webhook_events (occurred_at) where relayed_at is null`,
  `create index webhook_events_occurred_idx on webhook_events (occurred_at)`,
  `create table webhook_endpoints (
    id text primary key,
    account_id text not null references accounts (id) on delete cascade,
    environment text not null check (environment in ('test', 'live')),
    url text not null,
    event_types text[] not null,
    enabled boolean not null default true,
    secret text not null,
    previous_secret text,
    previous_secret_expires_at timestamptz,
    failing_ms bigint,
    last_failure_at timestamptz,
    disabled_at timestamptz,
    disabled_reason text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  `create index webhook_endpoints_tenant_idx on webhook_endpoints (account_id, environment)`,
  `create table webhook_deliveries (
    id text primary key,
    event_id text not null references webhook_events (id) on delete cascade,
    endpoint_id text not null references webhook_endpoints (id) on delete cascade,
    account_id text not null,
    cause text not null check (cause in ('event', 'test', 'redelivery')),
    status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
    attempts integer not null default 0,
    response_status integer,
    latency_ms integer,
    last_error text,
    last_attempt_at timestamptz,
    next_attempt_at timestamptz,
    enqueued_at timestamptz,
    created_at timestamptz not null default now()
  )`,
  `create unique index webhook_deliveries_event_endpoint_idx on webhook_deliveries (event_id, endpoint_id) where cause = 'event'`,
  `create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc)`,
  `create index webhook_deliveries_unenqueued_idx on webhook_deliveries (created_at) where enqueued_at is null`,
  `create index webhook_deliveries_created_idx on webhook_deliveries (created_at)`,
  `create table webhook_quota_thresholds (
    account_id text not null references accounts (id) on delete cascade,
    month text not null,
    percent integer not null check (percent in (75, 90, 100)),
    reached_at timestamptz not null,
    primary key (account_id, month, percent)
  )`,
  `alter table api_keys add column rotation_due_at timestamptz`,
];
