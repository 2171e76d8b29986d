import type { DbOrTx } from '../db/database';
import type { Environment } from '../domain/environment';
import { randomBase62 } from '../util/random-base62';
import { WEBHOOK_EVENT_DATA, type WebhookEnvelope, type WebhookEventData, type WebhookEventType } from './event-catalog';

/** An event as its cause records it, in the cause's own transaction. */
export interface NewWebhookEvent<T extends WebhookEventType> {
  accountId: string;
  environment: Environment;
  type: T;
  data: WebhookEventData<T>;
  occurredAt: Date;
}

/** A recorded event: its id is the `webhook-id` of every delivery of it. */
export interface WebhookEvent {
  id: string;
  accountId: string;
  environment: Environment;
  type: WebhookEventType;
  data: Record<string, unknown>;
  occurredAt: string;
}

/** `msg_` and 24 base62 characters (~143 bits): the Standard Webhooks message id. */
export const newEventId = () => `msg_${randomBase62(24)}`;

/**
 * Writes an event into the outbox. Call it with the transaction of the change it announces, so
 * that the change and its event commit together: a crash before the worker relays it loses
 * nothing. The data is checked against its schema here, where a wrong payload is a bug.
 */
export async function recordEvent<T extends WebhookEventType>(tx: DbOrTx, event: NewWebhookEvent<T>): Promise<string> {
  const data = WEBHOOK_EVENT_DATA[event.type].parse(event.data);
  const id = newEventId();
  await tx
    .insertInto('webhook_events')
    .values({
      id,
      account_id: event.accountId,
      environment: event.environment,
      type: event.type,
      data: JSON.stringify(data),
      occurred_at: event.occurredAt,
    })
    .execute();
  return id;
}

type EventRow = {
  id: string;
  account_id: string;
  environment: Environment;
  type: string;
  data: Record<string, unknown>;
  occurred_at: Date | string;
};

export function toWebhookEvent(row: EventRow): WebhookEvent {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    type: row.type as WebhookEventType,
    data: row.data,
    occurredAt: new Date(row.occurred_at).toISOString(),
  };
}

export async function findEvent(db: DbOrTx, id: string): Promise<WebhookEvent | null> {
  const row = await db.selectFrom('webhook_events').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toWebhookEvent(row) : null;
}

/** An account's events, newest first (tests and the operator's look at the outbox). */
export async function listEvents(db: DbOrTx, accountId: string, limit = 100): Promise<WebhookEvent[]> {
  const rows = await db
    .selectFrom('webhook_events')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('occurred_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toWebhookEvent);
}

/** The JSON body a receiver gets: the same bytes on every attempt and redelivery. */
export function envelopeBody(event: WebhookEvent): string {
  const envelope = {
    type: event.type,
    timestamp: event.occurredAt,
    environment: event.environment,
    account: event.accountId,
    data: event.data,
  } as WebhookEnvelope;
  return JSON.stringify(envelope);
}
