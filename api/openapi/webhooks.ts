import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import {
  envelopeSchema,
  WEBHOOK_EVENT_DESCRIPTIONS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../shared/webhooks/event-catalog';

/** The Standard Webhooks headers every delivery carries. */
const deliveryHeaders = z.object({
  'webhook-id': z
    .string()
    .regex(/^msg_[0-9A-Za-z]{24}$/)
    .meta({ description: "The event's id: the same on every retry and redelivery of the event; deduplicate on it." }),
  'webhook-timestamp': z.string().regex(/^\d+$/).meta({
    description: "The attempt's time, Unix epoch seconds; refuse one too far from now (the reference libraries allow 5 minutes).",
  }),
  'webhook-signature': z.string().meta({
    description:
      '`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` under the endpoint\'s signing secret (the base64 after `whsec_`); during the 24 h after a rotation, a second one under the previous secret, space-separated. Verify with a Standard Webhooks library.',
  }),
});

const componentName = (type: WebhookEventType) =>
  `Webhook${type
    .split(/[._]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')}`;

/**
 * The OpenAPI document's `webhooks`: one POST per event type, generated from the event catalog
 * (shared/webhooks/event-catalog.ts) — what the service sends to a customer's endpoint.
 */
export function webhookOperations(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook.${type}`,
          summary: `${type} event`,
          description: `${WEBHOOK_EVENT_DESCRIPTIONS[type]} Sent to the account's enabled endpoints of the event's environment subscribed to \`${type}\`; at least once (deduplicate on webhook-id), in no guaranteed order.`,
          tags: ['Webhooks'],
          security: [],
          requestParams: { header: deliveryHeaders },
          requestBody: {
            required: true,
            content: { 'application/json': { schema: envelopeSchema(type).meta({ id: componentName(type) }) } },
          },
          responses: {
            '200': {
              description:
                'Any 2xx within 10 s acknowledges the delivery. Anything else — another status, a redirect (not followed), no answer — is retried on the schedule, with the same webhook-id, for about 3 days.',
            },
          },
        },
      },
    ]),
  );
}
