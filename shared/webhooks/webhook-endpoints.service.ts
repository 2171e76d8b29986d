import { z } from 'zod';
import { recordAudit } from '../audit/audit.repository';
import type { KeyActor } from '../credentials/key-lifecycle';
import type { Db } from '../db/database';
import type { AuditAction } from '../domain/audit-actions';
import type { Environment } from '../domain/environment';
import { AppError } from '../errors/app-error';
import { findDelivery, insertDelivery, listDeliveries, type DeliveryRef, type WebhookDelivery } from './delivery.repository';
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  newEndpointId,
  replaceSecret,
  updateEndpoint,
  type EndpointChange,
  type EndpointRef,
  type WebhookEndpoint,
} from './endpoint.repository';
import { SUBSCRIBABLE_EVENT_TYPES, type WebhookEventType } from './event-catalog';
import { findEvent, recordEvent } from './outbox.repository';
import { newSigningSecret, type SecretBox } from './secret-box';

/** Who changes an endpoint: a dashboard owner (email and country) or the operator's CLI. */
export type WebhookActor = KeyActor;

/** How long a rotated-out signing secret keeps signing beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

const MAX_ENDPOINTS_PER_ENVIRONMENT = 20;

/** A receiver's URL: http or https, no credentials in it, at most 2,048 characters. */
export const endpointUrlSchema = z
  .string()
  .trim()
  .max(2048, 'at most 2,048 characters')
  .refine((text) => URL.canParse(text), 'must be an absolute URL, such as https://example.com/webhooks')
  .refine((text) => ['http:', 'https:'].includes(new URL(text).protocol), 'must start with https:// or http://')
  .refine((text) => !new URL(text).username && !new URL(text).password, 'must not carry a user name or password')
  .transform((text) => new URL(text).toString());

export const eventTypesSchema = z
  .array(z.enum(SUBSCRIBABLE_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]))
  .min(1, 'choose at least one event type')
  .transform((types) => [...new Set(types)]);

/** An endpoint with its signing secret, as it is shown once: at creation and at a rotation. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

/**
 * The one service behind every change to webhook endpoints, for the CLI and the dashboard
 * alike: each change with its audit entry, every lookup scoped to the caller's account (an id
 * of another account is NOT_FOUND), secrets sealed before they are stored and shown once.
 * Test events and redeliveries are written as deliveries; the worker's relay enqueues them.
 */
export class WebhookEndpoints {
  constructor(private readonly deps: { db: Db; box: SecretBox; clock?: () => number }) {}

  private now(): Date {
    return new Date((this.deps.clock ?? Date.now)());
  }

  list(accountId: string, environment?: Environment): Promise<WebhookEndpoint[]> {
    return listEndpoints(this.deps.db, accountId, environment);
  }

  async get(ref: EndpointRef): Promise<WebhookEndpoint> {
    const endpoint = await findEndpoint(this.deps.db, ref);
    if (!endpoint) throw new AppError('NOT_FOUND', `No webhook endpoint ${ref.endpointId} in this account`);
    return endpoint;
  }

  async add(
    input: { accountId: string; environment: Environment; url: string; eventTypes: readonly string[] },
    actor: WebhookActor,
  ): Promise<EndpointWithSecret> {
    const url = parseField(endpointUrlSchema, input.url, 'url');
    const eventTypes = parseField(eventTypesSchema, input.eventTypes, 'eventTypes');
    const secret = newSigningSecret();
    const id = newEndpointId();
    const endpoint = await this.deps.db.transaction().execute(async (tx) => {
      const count = (await listEndpoints(tx, input.accountId, input.environment)).length;
      if (count >= MAX_ENDPOINTS_PER_ENVIRONMENT) {
        throw new AppError('VALIDATION_ERROR', `At most ${MAX_ENDPOINTS_PER_ENVIRONMENT} webhook endpoints per environment`);
      }
      const created = await insertEndpoint(tx, {
        id,
        accountId: input.accountId,
        environment: input.environment,
        url,
        eventTypes,
        sealedSecret: this.deps.box.seal(secret, id),
      });
      await this.audit(tx, created, 'webhook.create', actor);
      return created;
    });
    return { endpoint, secret };
  }

  async edit(ref: EndpointRef, change: { url?: string; eventTypes?: readonly string[] }, actor: WebhookActor): Promise<WebhookEndpoint> {
    const parsed: EndpointChange = {
      ...(change.url === undefined ? {} : { url: parseField(endpointUrlSchema, change.url, 'url') }),
      ...(change.eventTypes === undefined ? {} : { eventTypes: parseField(eventTypesSchema, change.eventTypes, 'eventTypes') }),
    };
    return this.change(ref, parsed, 'webhook.update', actor);
  }

  enable(ref: EndpointRef, actor: WebhookActor): Promise<WebhookEndpoint> {
    return this.change(ref, { enabled: { enabled: true } }, 'webhook.enable', actor);
  }

  disable(ref: EndpointRef, actor: WebhookActor): Promise<WebhookEndpoint> {
    const reason = `Disabled by ${actor.name}`;
    return this.change(ref, { enabled: { enabled: false, reason, at: this.now() } }, 'webhook.disable', actor);
  }

  async delete(ref: EndpointRef, actor: WebhookActor): Promise<WebhookEndpoint> {
    return this.deps.db.transaction().execute(async (tx) => {
      const deleted = await deleteEndpoint(tx, ref);
      if (!deleted) throw new AppError('NOT_FOUND', `No webhook endpoint ${ref.endpointId} in this account`);
      await this.audit(tx, deleted, 'webhook.delete', actor);
      return deleted;
    });
  }

  /** A new signing secret, shown once; the previous one keeps signing too for SECRET_OVERLAP_MS. */
  async rotateSecret(ref: EndpointRef, actor: WebhookActor): Promise<EndpointWithSecret> {
    const secret = newSigningSecret();
    const endpoint = await this.deps.db.transaction().execute(async (tx) => {
      const rotated = await replaceSecret(
        tx,
        ref,
        this.deps.box.seal(secret, ref.endpointId),
        new Date(this.now().getTime() + SECRET_OVERLAP_MS),
      );
      if (!rotated) throw new AppError('NOT_FOUND', `No webhook endpoint ${ref.endpointId} in this account`);
      await this.audit(tx, rotated, 'webhook.rotate-secret', actor);
      return rotated;
    });
    return { endpoint, secret };
  }

  /** The endpoint's delivery log, newest first; `before` (a delivery id) pages back. */
  async deliveries(ref: EndpointRef, page: { limit?: number; before?: string } = {}): Promise<WebhookDelivery[]> {
    await this.get(ref);
    const { accountId, endpointId } = ref;
    return listDeliveries(this.deps.db, { accountId, endpointId, limit: Math.min(page.limit ?? 50, 500), before: page.before });
  }

  /** Sends a `webhook.test` event to this endpoint alone (also when it is disabled). Returns the delivery. */
  async sendTest(ref: EndpointRef, actor: WebhookActor): Promise<WebhookDelivery> {
    const { accountId, endpointId } = ref;
    return this.deps.db.transaction().execute(async (tx) => {
      const endpoint = await findEndpoint(tx, ref);
      if (!endpoint) throw new AppError('NOT_FOUND', `No webhook endpoint ${endpointId} in this account`);
      const eventId = await recordEvent(tx, {
        accountId,
        environment: endpoint.environment,
        type: 'webhook.test',
        data: { message: 'A test event, sent at your request' },
        occurredAt: this.now(),
      });
      // Relayed already: the test goes to this endpoint only, not to every subscriber.
      await tx.updateTable('webhook_events').set({ relayed_at: this.now() }).where('id', '=', eventId).execute();
      const deliveryId = await insertDelivery(tx, { eventId, endpointId, accountId, cause: 'test' });
      await this.audit(tx, endpoint, 'webhook.test', actor);
      return (await findDelivery(tx, { accountId, deliveryId }))!;
    });
  }

  /** Delivers a past delivery's event again to its endpoint: the same body and `webhook-id`, a new delivery. */
  async redeliver(ref: DeliveryRef, actor: WebhookActor): Promise<WebhookDelivery> {
    const { accountId, deliveryId } = ref;
    return this.deps.db.transaction().execute(async (tx) => {
      const past = await findDelivery(tx, ref);
      if (!past) throw new AppError('NOT_FOUND', `No webhook delivery ${deliveryId} in this account`);
      const endpoint = await findEndpoint(tx, { accountId, endpointId: past.endpointId });
      const event = await findEvent(tx, past.eventId);
      if (!endpoint || !event) throw new AppError('NOT_FOUND', `Webhook delivery ${deliveryId} is past its retention`);
      const id = await insertDelivery(tx, { eventId: event.id, endpointId: endpoint.id, accountId, cause: 'redelivery' });
      await this.audit(tx, endpoint, 'webhook.redeliver', actor);
      return (await findDelivery(tx, { accountId, deliveryId: id }))!;
    });
  }

  private async change(ref: EndpointRef, change: EndpointChange, action: AuditAction, actor: WebhookActor): Promise<WebhookEndpoint> {
    return this.deps.db.transaction().execute(async (tx) => {
      const changed = await updateEndpoint(tx, ref, change);
      if (!changed) throw new AppError('NOT_FOUND', `No webhook endpoint ${ref.endpointId} in this account`);
      await this.audit(tx, changed, action, actor);
      return changed;
    });
  }

  private audit(db: Parameters<typeof recordAudit>[0], endpoint: WebhookEndpoint, action: AuditAction, actor: WebhookActor): Promise<void> {
    return recordAudit(db, {
      accountId: endpoint.accountId,
      actor: actor.name,
      action,
      environment: endpoint.environment,
      subject: endpoint.url,
      country: actor.country,
    });
  }
}

function parseField<T>(schema: z.ZodType<T, unknown>, value: unknown, field: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const message = result.error.issues.map((issue) => issue.message).join('; ');
  throw new AppError('VALIDATION_ERROR', `Invalid ${field}: ${message}`, { fields: [{ field, message }] });
}
