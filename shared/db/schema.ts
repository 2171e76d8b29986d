import type { ColumnType, Generated } from 'kysely';
import type { AuditAction } from '../dashboard/audit.repository';
import type { Choice } from '../domain/arms';
import type { SelectionProbabilities } from '../domain/learner';
import type { LoggedContext } from '../jobs/catalog';

/** Kysely table types. snake_case names appear only here and in repositories. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;
/** A timestamp with a database default. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface AccountsTable {
  id: string;
  name: string;
  plan: 'starter' | 'pro' | 'enterprise';
  restricted: Generated<boolean>;
  /** An enterprise account's cap on live keys; null: its plan's. */
  live_key_limit: number | null;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  environment: 'test' | 'live';
  name: string;
  key_hash: Buffer;
  last4: string;
  scopes: string[];
  rate_limit_rps: number | null;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  deleted_at: Timestamp | null;
  expires_at: Timestamp | null;
  replaced_by: string | null;
}

export interface ProfilesTable {
  account_id: string;
  environment: 'test' | 'live';
  user_id: string;
  generation: string;
  state: Json<unknown>;
  pins: Json<Record<string, string>>;
  profile_version: number;
  interaction_count: number;
  created_at: DefaultedTimestamp;
  updated_at: Timestamp;
}

/** Partitioned by month of created_at (docs/adr/0013-monthly-partitions.md). */
export interface ProfileVersionsTable {
  account_id: string;
  environment: 'test' | 'live';
  user_id: string;
  profile_version: number;
  cause: 'outcome' | 'manual' | 'reset';
  changed: Json<string[]>;
  created_at: Timestamp;
}

/** Partitioned by month of issued_at. */
export interface DecisionsTable {
  request_id: string;
  account_id: string;
  environment: 'test' | 'live';
  user_id: string;
  /** Written only by the worker, from decision jobs checked against their schema. */
  chosen: Json<Choice>;
  probabilities: Json<SelectionProbabilities>;
  context: Json<LoggedContext>;
  explored: Json<string[]>;
  confidence: number;
  issued_at: Timestamp;
}

/** Partitioned by month of its decision's issue time: one request id, one month. */
export interface OutcomesTable {
  request_id: string;
  account_id: string;
  environment: 'test' | 'live';
  user_id: string;
  /** The decision's issue time (the request id carries it), not the outcome's own. */
  issued_at: Timestamp;
  fields: Json<Record<string, unknown>>;
  reward: number;
  received_at: Timestamp;
  applied_at: DefaultedTimestamp;
}

export interface ErasuresTable {
  account_id: string;
  environment: 'test' | 'live';
  user_hash: string;
  erased_at: Timestamp;
}

export interface UsageDailyTable {
  key_id: string;
  account_id: string;
  day: ColumnType<string, string, string>;
  endpoint: string;
  status_class: '2xx' | '4xx' | '5xx' | '429';
  count: number;
}

export interface UsageFlushesTable {
  flush_id: string;
  rows: number;
  flushed_at: DefaultedTimestamp;
}

export interface BillingUsageMonthlyView {
  account_id: string;
  month: string;
  billable_requests: number | null;
  requests_2xx: number | null;
  requests_4xx: number | null;
  requests_5xx: number | null;
  requests_429: number | null;
  total_requests: number;
}

export interface TestDataResetsTable {
  id: Generated<number>;
  period: string | null;
  account_id: string | null;
  trigger: 'schedule' | 'catch-up' | 'manual' | 'baseline';
  started_at: Timestamp;
  finished_at: Timestamp;
  rows_removed: Json<Record<string, number>>;
}

/** Monthly partitions detached by an operator: plain tables still in the database. */
export interface ArchivedPartitionsTable {
  table_name: string;
  parent: 'decisions' | 'outcomes' | 'profile_versions';
  month: string;
  detached_at: DefaultedTimestamp;
}

export interface PopulationPriorsTable {
  account_id: string;
  environment: 'test' | 'live';
  prior: Json<unknown>;
  version: ColumnType<string, string | undefined, string>;
  updated_at: DefaultedTimestamp;
}

export interface TrafficCountersTable {
  account_id: string;
  environment: 'test' | 'live';
  at: Timestamp;
  key_id: string;
  metric: 'req' | 'lat' | 'geo';
  label: string;
  count: number;
}

export interface TrafficFlushesTable {
  flush_id: string;
  rows: number;
  flushed_at: DefaultedTimestamp;
}

export interface TrafficAnomaliesTable {
  account_id: string;
  environment: 'test' | 'live';
  id: Generated<number>;
  key_id: string;
  rule: string;
  subject: string;
  reason: string;
  numbers: Json<Record<string, number | string>>;
  first_seen: Timestamp;
  last_seen: Timestamp;
  acknowledged_at: Timestamp | null;
  acknowledged_by: string | null;
}

export interface DashboardUsersTable {
  id: string;
  account_id: string;
  email: string;
  role: 'owner' | 'viewer';
  password_hash: string;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export interface DashboardAuditTable {
  id: Generated<string>;
  account_id: string;
  actor: string;
  action: AuditAction;
  key_id: string | null;
  environment: 'test' | 'live' | null;
  country: string | null;
  created_at: DefaultedTimestamp;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  profiles: ProfilesTable;
  profile_versions: ProfileVersionsTable;
  decisions: DecisionsTable;
  outcomes: OutcomesTable;
  erasures: ErasuresTable;
  usage_daily: UsageDailyTable;
  usage_flushes: UsageFlushesTable;
  billing_usage_monthly: BillingUsageMonthlyView;
  test_data_resets: TestDataResetsTable;
  population_priors: PopulationPriorsTable;
  traffic_minute: TrafficCountersTable;
  traffic_hour: TrafficCountersTable;
  traffic_flushes: TrafficFlushesTable;
  traffic_anomalies: TrafficAnomaliesTable;
  dashboard_users: DashboardUsersTable;
  dashboard_audit: DashboardAuditTable;
  archived_partitions: ArchivedPartitionsTable;
}
