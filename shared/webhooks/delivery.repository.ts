import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import { randomBase62 } from '../util/random-base62';
import type { WebhookEventType } from './event-catalog';
import { toWebhookEvent, type WebhookEvent } from './outbox.repository';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** Why a delivery exists: its event's fan-out, an owner's test event, or a redelivery. */
export type DeliveryCause = 'event' | 'test' | 'redelivery';

/** One row of an endpoint's delivery log. */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: WebhookEventType;
  endpointId: string;
  accountId: string;
  cause: DeliveryCause;
  status: DeliveryStatus;
  attempts: number;
  /** The last attempt's status code; null when none came back. */
  responseStatus: number | null;
  latencyMs: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  /** When the next retry is due; null once the delivery is settled. */
  nextAttemptAt: string | null;
  createdAt: string;
}

export const newDeliveryId = () => `dlv_${randomBase62(20)}`;
const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

const DELIVERY_COLUMNS = [
  'd.id',
  'd.event_id',
  'e.type',
  'd.endpoint_id',
  'd.account_id',
  'd.cause',
  'd.status',
  'd.attempts',
  'd.response_status',
  'd.latency_ms',
  'd.last_error',
  'd.last_attempt_at',
  'd.next_attempt_at',
  'd.created_at',
] as const;

type DeliveryRow = {
  id: string;
  event_id: string;
  type: string;
  endpoint_id: string;
  account_id: string;
  cause: DeliveryCause;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  latency_ms: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
};

const toDelivery = (row: DeliveryRow): WebhookDelivery => ({
  id: row.id,
  eventId: row.event_id,
  eventType: row.type as WebhookEventType,
  endpointId: row.endpoint_id,
  accountId: row.account_id,
  cause: row.cause,
  status: row.status,
  attempts: row.attempts,
  responseStatus: row.response_status,
  latencyMs: row.latency_ms,
  lastError: row.last_error,
  lastAttemptAt: iso(row.last_attempt_at),
  nextAttemptAt: iso(row.next_attempt_at),
  createdAt: iso(row.created_at)!,
});

/** A new delivery of an event to one endpoint; it waits for the relay to enqueue it. */
export async function insertDelivery(
  db: DbOrTx,
  delivery: { eventId: string; endpointId: string; accountId: string; cause: DeliveryCause },
): Promise<string> {
  const id = newDeliveryId();
  await db
    .insertInto('webhook_deliveries')
    .values({ id, event_id: delivery.eventId, endpoint_id: delivery.endpointId, account_id: delivery.accountId, cause: delivery.cause })
    .execute();
  return id;
}

/** A delivery as its account names it; one object, so the two ids cannot swap. */
export interface DeliveryRef {
  accountId: string;
  deliveryId: string;
}

/** A delivery of this account only. */
export async function findDelivery(db: DbOrTx, { accountId, deliveryId }: DeliveryRef): Promise<WebhookDelivery | null> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(DELIVERY_COLUMNS)
    .where('d.account_id', '=', accountId)
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
  return row ? toDelivery(row) : null;
}

/** An endpoint's delivery log, newest first; `before` (a delivery id) pages back. */
export async function listDeliveries(
  db: DbOrTx,
  query: { accountId: string; endpointId: string; limit: number; before?: string },
): Promise<WebhookDelivery[]> {
  let select = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(DELIVERY_COLUMNS)
    .where('d.account_id', '=', query.accountId)
    .where('d.endpoint_id', '=', query.endpointId);
  if (query.before) {
    const before = query.before;
    select = select.where(
      sql<boolean>`(d.created_at, d.id) < ((select created_at from webhook_deliveries where id = ${before}), ${before})`,
    );
  }
  const rows = await select.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(query.limit).execute();
  return rows.map(toDelivery);
}

/** What the delivery job works with: the delivery, its event and where it goes. */
export interface DeliveryTask {
  delivery: WebhookDelivery;
  event: WebhookEvent;
  endpoint: { id: string; url: string; enabled: boolean };
}

export async function loadDeliveryTask(db: DbOrTx, id: string): Promise<DeliveryTask | null> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .select(DELIVERY_COLUMNS)
    .select(['e.environment', 'e.data', 'e.occurred_at', 'e.account_id as event_account_id', 'w.url', 'w.enabled'])
    .where('d.id', '=', id)
    .executeTakeFirst();
  if (!row) return null;
  return {
    delivery: toDelivery(row),
    event: toWebhookEvent({
      id: row.event_id,
      account_id: row.event_account_id,
      environment: row.environment,
      type: row.type,
      data: row.data,
      occurred_at: row.occurred_at,
    }),
    endpoint: { id: row.endpoint_id, url: row.url, enabled: row.enabled },
  };
}

export interface AttemptRecord {
  at: Date;
  status: DeliveryStatus;
  responseStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** Records an attempt's outcome; the attempt count grows by one. */
export async function recordAttempt(db: DbOrTx, id: string, attempt: AttemptRecord): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      attempts: sql`attempts + 1`,
      status: attempt.status,
      response_status: attempt.responseStatus,
      latency_ms: attempt.latencyMs,
      last_error: attempt.error,
      last_attempt_at: attempt.at,
      next_attempt_at: attempt.nextAttemptAt,
    })
    .where('id', '=', id)
    .execute();
}

/** Settles a delivery without an attempt (its endpoint was disabled or deleted meanwhile). */
export async function cancelDelivery(db: DbOrTx, id: string, reason: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'cancelled', last_error: reason, next_attempt_at: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** Pending deliveries not yet handed to the queue, oldest first. */
export async function unenqueuedDeliveries(db: DbOrTx, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('enqueued_at', 'is', null)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

export async function markEnqueued(db: DbOrTx, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('webhook_deliveries').set({ enqueued_at: at }).where('id', 'in', ids).execute();
}
