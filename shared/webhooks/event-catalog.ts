import { z } from 'zod';
import { environmentSchema } from '../domain/environment';
import { patternRuleSchema } from '../domain/pattern-rules';

/**
 * The webhook event catalog: each event type with the zod schema of its `data`, the one source
 * of the payload types, of the outbox's checks and of the OpenAPI document's `webhooks`
 * section. Payloads name keys by id, name and last 4 characters — never a key's secret.
 */

const keySummary = z
  .object({
    id: z.string().meta({ description: "The key's id", example: 'key_4f8Kc2LwQ9rT1bXz0aVe' }),
    name: z.string().meta({ description: "The key's name" }),
    last4: z.string().meta({ description: "The key's last 4 characters, as the dashboard shows them" }),
  })
  .meta({ id: 'WebhookKey', description: 'A key, by id, name and last 4 characters; never its secret' });

const isoTime = z.string().meta({ description: 'ISO 8601, UTC', example: '2026-11-29T10:00:00.000Z' });

export const WEBHOOK_EVENT_DATA = {
  'pattern.opened': z.object({
    patternId: z.number().int().meta({ description: "The pattern's id, as the dashboard's unusual-patterns page lists it" }),
    rule: patternRuleSchema.meta({ description: 'The rule that found it' }),
    key: keySummary,
    subject: z
      .string()
      .meta({ description: 'What tells two patterns of one rule and key apart (a country, a quota level); empty when nothing does' }),
    reason: z.string().meta({ description: 'The plain-language reason the dashboard shows, with its numbers' }),
    numbers: z.record(z.string(), z.union([z.number(), z.string()])).meta({ description: 'The figures the reason quotes, by name' }),
    firstSeen: isoTime,
  }),
  'quota.threshold': z.object({
    percent: z.union([z.literal(75), z.literal(90), z.literal(100)]).meta({ description: 'The share of the quota reached' }),
    month: z.string().meta({ description: 'YYYY-MM (UTC)', example: '2026-11' }),
    used: z.number().int().meta({ description: "Requests of the account's live keys counted this month, as flushed" }),
    quota: z.number().int().meta({ description: "The plan's monthly quota of the account" }),
  }),
  'key.created': z.object({
    key: keySummary,
    scopes: z.array(z.string()).meta({ description: 'What the key may call' }),
    createdAt: isoTime,
  }),
  'key.rotated': z.object({
    key: keySummary,
    replacement: keySummary,
    previousKeyExpiresAt: isoTime.meta({ description: 'When the rotated key stops working' }),
  }),
  'key.revoked': z.object({ key: keySummary, revokedAt: isoTime }),
  'key.deleted': z.object({ key: keySummary, deletedAt: isoTime }),
  'key.rotation_due': z.object({
    key: keySummary,
    createdAt: isoTime,
    ageDays: z.number().int().meta({ description: "The key's age in whole days" }),
  }),
  'account.restricted': z.object({
    restricted: z.literal(true).meta({ description: 'Always true: lifting a restriction sends no event' }),
    reason: z.string().meta({ description: "What the API answers the account's keys from now on" }),
  }),
  'webhook.test': z.object({ message: z.string().meta({ description: 'Says it is a test' }) }),
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_DATA;
export type WebhookEventData<T extends WebhookEventType> = z.infer<(typeof WEBHOOK_EVENT_DATA)[T]>;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENT_DATA) as WebhookEventType[];
export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]);

/** The types an endpoint subscribes to; `webhook.test` reaches an endpoint only when asked for. */
export const SUBSCRIBABLE_EVENT_TYPES = WEBHOOK_EVENT_TYPES.filter((type) => type !== 'webhook.test');

export const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'pattern.opened': 'An unusual pattern opened on a key (each rule), with the reason the dashboard shows.',
  'quota.threshold': "The account's live requests this month reached 75, 90 or 100 % of its monthly quota; each once a month.",
  'key.created': 'A key was created.',
  'key.rotated': 'A key was rotated: a replacement issued, the old key working until previousKeyExpiresAt.',
  'key.revoked': 'A key was revoked.',
  'key.deleted': 'A key was deleted.',
  'key.rotation_due': 'A live key turned 90 days old; rotating it is due (once per key).',
  'account.restricted':
    "The account was restricted: the API refuses every key of it. Sent to the account's endpoints of both environments.",
  'webhook.test': 'Sent to one endpoint when its owner asks for a test event.',
};

/** The envelope of every payload; `data` is the event type's schema. */
export function envelopeSchema<T extends WebhookEventType>(type: T) {
  return z.object({
    type: z.literal(type).meta({ description: 'The event type' }),
    timestamp: isoTime.meta({ description: 'When the event happened' }),
    environment: environmentSchema.meta({ description: 'The environment of the event: test events never reach live endpoints' }),
    account: z.string().meta({ description: 'The account id', example: 'acct_9hQ2mXc4Lr7Tz1Bv' }),
    data: WEBHOOK_EVENT_DATA[type].meta({ description: WEBHOOK_EVENT_DESCRIPTIONS[type] }),
  });
}

export type WebhookEnvelope = {
  [T in WebhookEventType]: {
    type: T;
    timestamp: string;
    environment: z.infer<typeof environmentSchema>;
    account: string;
    data: WebhookEventData<T>;
  };
}[WebhookEventType];
