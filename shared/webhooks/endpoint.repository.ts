import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../db/database';
import type { WebhookEndpoints } from '../db/schema';
import type { Environment } from '../domain/environment';
import { randomBase62 } from '../util/random-base62';
import type { WebhookEventType } from './event-catalog';

/** An endpoint as the dashboard and the CLI show it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  accountId: string;
  environment: Environment;
  url: string;
  eventTypes: WebhookEventType[];
  enabled: boolean;
  /** When and why it was turned off (by its owner, an operator, or for failing too long). */
  disabledAt: string | null;
  disabledReason: string | null;
  /** How long it has been failing (time the worker was paused not counted); null while it succeeds. */
  failingMs: number | null;
  /** The previous signing secret still signs until then (a rotation's overlap). */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The sealed signing secrets (shared/webhooks/secret-box.ts); read only by the delivery. */
export interface SealedSecrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

type EndpointRow = Selectable<WebhookEndpoints>;
const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  accountId: row.account_id,
  environment: row.environment,
  url: row.url,
  eventTypes: row.event_types as WebhookEventType[],
  enabled: row.enabled,
  disabledAt: iso(row.disabled_at),
  disabledReason: row.disabled_reason,
  failingMs: row.failing_ms === null ? null : Number(row.failing_ms),
  previousSecretExpiresAt: iso(row.previous_secret_expires_at),
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
});

export const newEndpointId = () => `whe_${randomBase62(20)}`;

/**
 * An endpoint as its account names it: every lookup or change by id is scoped to the account
 * asking (another account's id is as good as unknown). One object, so the two ids cannot swap.
 */
export interface EndpointRef {
  accountId: string;
  endpointId: string;
}

export interface NewEndpoint {
  id: string;
  accountId: string;
  environment: Environment;
  url: string;
  eventTypes: WebhookEventType[];
  sealedSecret: string;
}

export async function insertEndpoint(db: DbOrTx, endpoint: NewEndpoint): Promise<WebhookEndpoint> {
  const row = await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      account_id: endpoint.accountId,
      environment: endpoint.environment,
      url: endpoint.url,
      event_types: endpoint.eventTypes,
      secret: endpoint.sealedSecret,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

/** An endpoint of this account only: another account's id is as good as unknown. */
export async function findEndpoint(db: DbOrTx, { accountId, endpointId }: EndpointRef): Promise<WebhookEndpoint | null> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

export async function listEndpoints(db: DbOrTx, accountId: string, environment?: Environment): Promise<WebhookEndpoint[]> {
  let query = db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId);
  if (environment) query = query.where('environment', '=', environment);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  return rows.map(toEndpoint);
}

export interface EndpointChange {
  url?: string;
  eventTypes?: WebhookEventType[];
  /** true: enabled again (its failing time starts afresh); false: disabled with the reason. */
  enabled?: { enabled: true } | { enabled: false; reason: string; at: Date };
}

export async function updateEndpoint(
  db: DbOrTx,
  { accountId, endpointId }: EndpointRef,
  change: EndpointChange,
): Promise<WebhookEndpoint | null> {
  const enabled = change.enabled;
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      ...(change.url === undefined ? {} : { url: change.url }),
      ...(change.eventTypes === undefined ? {} : { event_types: change.eventTypes }),
      ...(enabled === undefined
        ? {}
        : enabled.enabled
          ? { enabled: true, disabled_at: null, disabled_reason: null, failing_ms: null, last_failure_at: null }
          : { enabled: false, disabled_at: enabled.at, disabled_reason: enabled.reason }),
      updated_at: sql`now()`,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

/** Deletes an endpoint and, with it, its delivery log. */
export async function deleteEndpoint(db: DbOrTx, { accountId, endpointId }: EndpointRef): Promise<WebhookEndpoint | null> {
  const row = await db
    .deleteFrom('webhook_endpoints')
    .where('account_id', '=', accountId)
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

/** A new secret signs from now on; the one it replaces keeps signing too until `previousUntil`. */
export async function replaceSecret(
  db: DbOrTx,
  { accountId, endpointId }: EndpointRef,
  sealed: string,
  previousUntil: Date,
): Promise<WebhookEndpoint | null> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ previous_secret: sql`secret`, previous_secret_expires_at: previousUntil, secret: sealed, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

export async function sealedSecrets(db: DbOrTx, id: string): Promise<SealedSecrets | null> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(['secret', 'previous_secret', 'previous_secret_expires_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return null;
  return {
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at ? new Date(row.previous_secret_expires_at) : null,
  };
}

/** A delivery to the endpoint succeeded: it is no longer failing. */
export async function recordEndpointSuccess(db: DbOrTx, id: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_ms: null, last_failure_at: null })
    .where('id', '=', id)
    .where('failing_ms', 'is not', null)
    .execute();
}

/**
 * A delivery to the endpoint failed at `at`: its failing time grows by the time since its
 * previous failure, at most `capMs` — the wait the retry schedule put before this attempt — so
 * time the worker spent paused (an outage) is not counted. Returns the failing time now.
 */
export async function recordEndpointFailure(db: DbOrTx, id: string, at: Date, capMs: number): Promise<number> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      failing_ms: sql<number>`case when failing_ms is null then 0
        else failing_ms + greatest(0, least(${capMs}::bigint, (extract(epoch from (${at}::timestamptz - last_failure_at)) * 1000)::bigint)) end`,
      last_failure_at: sql<Date>`greatest(coalesce(last_failure_at, ${at}::timestamptz), ${at}::timestamptz)`,
    })
    .where('id', '=', id)
    .returning('failing_ms')
    .executeTakeFirst();
  return Number(row?.failing_ms ?? 0);
}
