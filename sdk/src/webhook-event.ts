/**
 * The envelope every webhook of the service carries (its docs/API.md), written out here as the
 * rest of the package writes the contract out.
 */

export const WEBHOOK_EVENT_TYPES = [
  'pattern.opened',
  'quota.threshold',
  'key.created',
  'key.rotated',
  'key.revoked',
  'key.deleted',
  'key.rotation_due',
  'account.restricted',
  // Sent only when a test delivery is asked for, from the dashboard or the CLI.
  'webhook.test',
] as const;

export const WEBHOOK_ENVIRONMENTS = ['test', 'live'] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export type WebhookEnvironment = (typeof WEBHOOK_ENVIRONMENTS)[number];

/** A signed event, as `verifyWebhook` returns it once its signature and timestamp passed. */
export interface WebhookEvent {
  /**
   * One of `WEBHOOK_EVENT_TYPES`; a type this version of the SDK does not know (a newer service)
   * is kept as the service sent it, so a receiver can skip it instead of failing.
   */
  type: WebhookEventType | (string & Record<never, never>);
  /** When the event happened, ISO 8601 UTC. */
  timestamp: string;
  /** The environment of the keys and data the event is about: test events never reach live endpoints. */
  environment: WebhookEnvironment;
  /** The account the event belongs to. */
  account: string;
  /** The event's own fields; which ones depends on `type`. */
  data: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEnvironment(value: unknown): value is WebhookEnvironment {
  return WEBHOOK_ENVIRONMENTS.some((environment) => environment === value);
}

/** The envelope from the verified body's text, or undefined when the text is not one. */
export function parseWebhookEvent(text: string): WebhookEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { type, timestamp, environment, account, data } = value;
  if (typeof type !== 'string' || typeof timestamp !== 'string' || typeof account !== 'string') return undefined;
  if (!isEnvironment(environment) || !isRecord(data)) return undefined;
  // The whole object: fields a newer service adds to the envelope stay readable.
  return { ...value, type, timestamp, environment, account, data };
}
