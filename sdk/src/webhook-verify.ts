import { nodeBuiltin } from './builtin';
import { parseWebhookEvent, type WebhookEvent } from './webhook-event';

/**
 * Standard Webhooks verification: `webhook-signature` holds `v1,<base64 HMAC-SHA256>` entries of
 * `{webhook-id}.{webhook-timestamp}.{body}` under the key the `whsec_` secret encodes.
 */

/** How far `webhook-timestamp` may be from now, either way, by default: 5 minutes (seconds). */
export const DEFAULT_WEBHOOK_TOLERANCE = 300;

export type WebhookVerificationReason =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing or empty (`header` names it). */
  | 'MISSING_HEADER'
  /** `webhook-timestamp` is not unix seconds. */
  | 'INVALID_TIMESTAMP'
  /** `webhook-timestamp` is more than `tolerance` seconds in the past: a replay, or a clock far behind. */
  | 'TIMESTAMP_TOO_OLD'
  /** `webhook-timestamp` is more than `tolerance` seconds in the future. */
  | 'TIMESTAMP_TOO_NEW'
  /** No `v1` entry of `webhook-signature` is this secret's signature of this id, timestamp and body. */
  | 'NO_MATCHING_SIGNATURE'
  /** The signature matched but the body is not the service's JSON envelope. */
  | 'INVALID_PAYLOAD';

/** The request is not a genuine, current event of the service: answer it with a 4xx and drop it. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  /** The header a `MISSING_HEADER` refusal is about. */
  readonly header?: string | undefined;

  constructor(reason: WebhookVerificationReason, message: string, header?: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
    this.header = header;
  }
}

/** A Fetch `Headers`, or a plain object in any case of names, such as Node's `req.headers`. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** The request body exactly as received (a `Buffer` is a `Uint8Array`), never JSON parsed and serialized again. */
  payload: string | Uint8Array;
  headers: WebhookHeaders;
  /** The endpoint's signing secret, `whsec_…`. */
  secret: string;
  /** Seconds `webhook-timestamp` may be from `now`, either way. Default 300. */
  tolerance?: number | undefined;
  /** The current time. Default: the clock's. */
  now?: Date | undefined;
}

type NodeCrypto = Pick<typeof import('node:crypto'), 'createHmac' | 'timingSafeEqual'>;

const HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;
const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNIX_SECONDS = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * The event in a webhook request, once its signature, timestamp and envelope are checked; else a
 * `WebhookVerificationError` saying why. A wrong `secret`, `tolerance` or `payload` type is the
 * caller's mistake, not the request's: a `TypeError`. Needs `node:crypto` (Node, Deno, Bun).
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent {
  const crypto = nodeBuiltin<NodeCrypto>('node:crypto');
  if (!crypto) throw new Error('verifyWebhook needs node:crypto, which this runtime does not have');
  const key = signingKey(options.secret);
  const body = rawBody(options.payload);
  const tolerance = options.tolerance ?? DEFAULT_WEBHOOK_TOLERANCE;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new TypeError('tolerance must be a number of seconds, 0 or more');

  const id = requiredHeader(options.headers, HEADERS.id);
  const timestamp = requiredHeader(options.headers, HEADERS.timestamp);
  const signatures = requiredHeader(options.headers, HEADERS.signature);
  checkTimestamp(timestamp, options.now ?? new Date(), tolerance);

  const expected = crypto.createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  const matches = (candidate: string) => {
    const a = Buffer.from(candidate);
    const b = Buffer.from(expected);
    return a.length === b.length && crypto.timingSafeEqual(a, b);
  };
  // Entries are `version,signature`; during a secret rotation there is one per secret.
  const signed = signatures.split(' ').some((entry) => {
    const comma = entry.indexOf(',');
    return comma > 0 && entry.slice(0, comma) === 'v1' && matches(entry.slice(comma + 1));
  });
  if (!signed) throw new WebhookVerificationError('NO_MATCHING_SIGNATURE', 'no webhook-signature entry matches this secret and body');

  const event = parseWebhookEvent(decodeUtf8(body) ?? '');
  if (!event) throw new WebhookVerificationError('INVALID_PAYLOAD', 'the signed body is not a JSON event envelope');
  return event;
}

function signingKey(secret: string): Buffer {
  if (typeof secret !== 'string') throw new TypeError('secret must be the whsec_… signing secret');
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // The secret itself never goes into a message: it may end up in a log.
  if (encoded === '' || !BASE64.test(encoded)) throw new TypeError('secret is not a whsec_ signing secret (whsec_ and base64)');
  return Buffer.from(encoded, 'base64');
}

function rawBody(payload: string | Uint8Array): Uint8Array {
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return payload;
  // Typically a body parser ran first: a parsed and re-serialized body no longer matches.
  throw new TypeError('payload must be the raw request body (a string or Buffer), not parsed JSON');
}

function isFetchHeaders(headers: WebhookHeaders): headers is Headers {
  return typeof headers.get === 'function';
}

function requiredHeader(headers: WebhookHeaders, name: string): string {
  let value: string | undefined;
  if (isFetchHeaders(headers)) value = headers.get(name) ?? undefined;
  else {
    const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    value = typeof found === 'string' ? found : found?.join(' ');
  }
  if (!value) throw new WebhookVerificationError('MISSING_HEADER', `the ${name} header is missing`, name);
  return value;
}

function checkTimestamp(header: string, now: Date, tolerance: number): void {
  if (!UNIX_SECONDS.test(header)) throw new WebhookVerificationError('INVALID_TIMESTAMP', 'webhook-timestamp is not unix seconds');
  const age = Math.floor(now.getTime() / 1000) - Number(header);
  if (age > tolerance) throw new WebhookVerificationError('TIMESTAMP_TOO_OLD', `webhook-timestamp is ${age} s old`);
  if (-age > tolerance) throw new WebhookVerificationError('TIMESTAMP_TOO_NEW', `webhook-timestamp is ${-age} s ahead`);
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
