import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a body with each secret given (the current one first; during a rotation's overlap the
 * previous one too), with the reference library: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
 * several separated by spaces. `webhook-timestamp` is the attempt's, in unix seconds.
 */
export function signDelivery(input: { eventId: string; at: Date; body: string; secrets: readonly string[] }): SignedHeaders {
  const seconds = Math.floor(input.at.getTime() / 1000);
  const at = new Date(seconds * 1000);
  return {
    'webhook-id': input.eventId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': input.secrets.map((secret) => new Webhook(secret).sign(input.eventId, at, input.body)).join(' '),
  };
}
