import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../shared/webhooks/event-catalog';
import { envelopeBody, type WebhookEvent } from '../../shared/webhooks/outbox.repository';
import { document } from '../support/openapi';

/** The OpenAPI document's `webhooks`, generated from the event catalog, describes what is sent. */
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema(document, 'openapi.json');

const key = { id: 'key_4f8Kc2LwQ9rT1bXz0aVe', name: 'checkout', last4: 'x9Qa' };
const at = '2026-11-29T10:00:00.000Z';
const SAMPLES: Record<WebhookEventType, Record<string, unknown>> = {
  'pattern.opened': {
    patternId: 7,
    rule: 'error-rate',
    key,
    subject: '',
    reason: '42 % of requests in the last 15 minutes were errors',
    numbers: { errorShare: 0.42 },
    firstSeen: at,
  },
  'quota.threshold': { percent: 90, month: '2026-11', used: 90_000, quota: 100_000 },
  'key.created': { key, scopes: ['context'], createdAt: at },
  'key.rotated': { key, replacement: { ...key, id: 'key_other' }, previousKeyExpiresAt: at },
  'key.revoked': { key, revokedAt: at },
  'key.deleted': { key, deletedAt: at },
  'key.rotation_due': { key, createdAt: at, ageDays: 90 },
  'account.restricted': { restricted: true, reason: 'The API answers 403 ACCOUNT_RESTRICTED to every key of the account' },
  'webhook.test': { message: 'A test event, sent at your request' },
};

describe('the webhooks section', () => {
  it('has one POST per event type of the catalog, with the Standard Webhooks headers', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const type of WEBHOOK_EVENT_TYPES) {
      const headers = document.webhooks[type].post.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`);
      expect(headers).toEqual(['header:webhook-id', 'header:webhook-timestamp', 'header:webhook-signature']);
    }
  });

  it.each(WEBHOOK_EVENT_TYPES)('validates the body the service sends for %s, and refuses it under another type', (type) => {
    const event: WebhookEvent = { id: 'msg_x', accountId: 'acct_1', environment: 'live', type, data: SAMPLES[type], occurredAt: at };
    const schema = document.webhooks[type].post.requestBody.content['application/json'].schema;
    const validate = ajv.compile({ $ref: `openapi.json#/components/schemas/${schema.$ref.split('/').at(-1)}` });
    const body = JSON.parse(envelopeBody(event));
    expect({ valid: validate(body), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
    expect(validate({ ...body, type: type === 'key.created' ? 'key.deleted' : 'key.created' })).toBe(false);
  });
});
