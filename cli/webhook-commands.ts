import { z } from 'zod';
import type { CliConfig } from '../shared/config/config';
import type { Db } from '../shared/db/database';
import { ENVIRONMENTS, environmentSchema } from '../shared/domain/environment';
import type { WebhookDelivery } from '../shared/webhooks/delivery.repository';
import type { WebhookEndpoint } from '../shared/webhooks/endpoint.repository';
import { SUBSCRIBABLE_EVENT_TYPES } from '../shared/webhooks/event-catalog';
import { SecretBox } from '../shared/webhooks/secret-box';
import { WebhookEndpoints } from '../shared/webhooks/webhook-endpoints.service';
import { command, type Command } from './command';
import { parseWith, requireAccount } from './flag-values';
import { OPERATOR } from './operator';

/*
 * The operator's webhook commands: the same service (shared/webhooks/webhook-endpoints.service.ts)
 * the dashboard's pages call, every change audited as the operator's.
 */

const ENDPOINT_ID = { name: 'id', value: 'ID', description: 'the endpoint id (whe_…) that webhooks list and webhooks add print' } as const;
const accountFlag = { type: 'string', value: 'N', description: 'the account, by name or id', required: true } as const;
const eventsFlag = {
  type: 'string',
  value: 'TYPES',
  description: `event types, comma-separated (${SUBSCRIBABLE_EVENT_TYPES.join(',')}); default all`,
} as const;

const service = (db: Db, config: CliConfig) => new WebhookEndpoints({ db, box: new SecretBox(config.COS_SECRET) });
const eventList = (value: string) =>
  value
    .split(',')
    .map((type) => type.trim())
    .filter(Boolean);

const endpointJson = (e: WebhookEndpoint) => ({
  id: e.id,
  environment: e.environment,
  url: e.url,
  eventTypes: e.eventTypes,
  enabled: e.enabled,
  disabledAt: e.disabledAt,
  disabledReason: e.disabledReason,
  failingMs: e.failingMs,
  previousSecretExpiresAt: e.previousSecretExpiresAt,
  createdAt: e.createdAt,
});
const endpointText = (e: WebhookEndpoint) =>
  `${e.id}  ${e.environment}  ${e.enabled ? 'enabled' : `disabled (${e.disabledReason ?? 'no reason'})`}  ${e.url}  [${e.eventTypes.join(',')}]`;
const secretText = (secret: string) => `signing secret: ${secret}\n(store it now, it is not shown again)`;
const deliveryText = (d: WebhookDelivery) =>
  [
    d.id,
    d.createdAt,
    d.eventType,
    d.cause,
    d.status,
    `attempts=${d.attempts}`,
    `response=${d.responseStatus ?? '-'}`,
    `latency=${d.latencyMs === null ? '-' : `${d.latencyMs}ms`}`,
    d.nextAttemptAt ? `next=${d.nextAttemptAt}` : '',
    d.lastError ?? '',
  ]
    .filter(Boolean)
    .join('  ');

export const WEBHOOK_COMMANDS: readonly Command[] = [
  command({
    name: 'webhooks list',
    summary: "list an account's webhook endpoints",
    flags: { account: accountFlag, env: { type: 'string', value: ENVIRONMENTS.join('|'), description: 'only this environment' } },
    run: async ({ db, config, flags }) => {
      const account = await requireAccount(db, flags.account);
      const environment = flags.env === undefined ? undefined : parseWith(environmentSchema, flags.env, 'env');
      const endpoints = await service(db, config).list(account.id, environment);
      return { json: { data: endpoints.map(endpointJson) }, text: endpoints.map(endpointText).join('\n') || '(no webhook endpoints)' };
    },
  }),
  command({
    name: 'webhooks add',
    summary: 'add a webhook endpoint and print its signing secret once',
    flags: {
      account: accountFlag,
      env: { type: 'string', value: ENVIRONMENTS.join('|'), description: 'the environment whose events it gets', required: true },
      url: { type: 'string', value: 'URL', description: 'where events are POSTed (https:// or http://)', required: true },
      events: eventsFlag,
    },
    run: async ({ db, config, flags }) => {
      const account = await requireAccount(db, flags.account);
      const { endpoint, secret } = await service(db, config).add(
        {
          accountId: account.id,
          environment: parseWith(environmentSchema, flags.env, 'env'),
          url: flags.url,
          eventTypes: flags.events === undefined ? SUBSCRIBABLE_EVENT_TYPES : eventList(flags.events),
        },
        OPERATOR,
      );
      return { json: { ...endpointJson(endpoint), secret }, text: `${endpointText(endpoint)}\n${secretText(secret)}` };
    },
  }),
  command({
    name: 'webhooks edit',
    summary: "change a webhook endpoint's URL or event types",
    positionals: [ENDPOINT_ID],
    flags: { account: accountFlag, url: { type: 'string', value: 'URL', description: 'its new URL' }, events: eventsFlag },
    run: async ({ db, config, args, flags }) => {
      const account = await requireAccount(db, flags.account);
      const change = {
        ...(flags.url === undefined ? {} : { url: flags.url }),
        ...(flags.events === undefined ? {} : { eventTypes: eventList(flags.events) }),
      };
      const endpoint = await service(db, config).edit({ accountId: account.id, endpointId: args.id }, change, OPERATOR);
      return { json: endpointJson(endpoint), text: endpointText(endpoint) };
    },
  }),
  ...(['enable', 'disable', 'delete'] as const).map((action) =>
    command({
      name: `webhooks ${action}`,
      summary: {
        enable: 'enable a webhook endpoint again; its failing time starts afresh',
        disable: 'stop delivering to a webhook endpoint (pending retries are cancelled)',
        delete: 'delete a webhook endpoint and its delivery log',
      }[action],
      positionals: [ENDPOINT_ID],
      flags: { account: accountFlag },
      run: async ({ db, config, args, flags }) => {
        const account = await requireAccount(db, flags.account);
        const endpoint = await service(db, config)[action]({ accountId: account.id, endpointId: args.id }, OPERATOR);
        return { json: endpointJson(endpoint), text: `${action === 'delete' ? 'deleted' : `${action}d`} ${endpointText(endpoint)}` };
      },
    }),
  ),
  command({
    name: 'webhooks rotate-secret',
    summary: "replace an endpoint's signing secret, printed once; the old one also signs for 24 h",
    positionals: [ENDPOINT_ID],
    flags: { account: accountFlag },
    run: async ({ db, config, args, flags }) => {
      const account = await requireAccount(db, flags.account);
      const { endpoint, secret } = await service(db, config).rotateSecret({ accountId: account.id, endpointId: args.id }, OPERATOR);
      return {
        json: { ...endpointJson(endpoint), secret },
        text: `${secretText(secret)}\nthe previous secret also signs until ${endpoint.previousSecretExpiresAt}`,
      };
    },
  }),
  command({
    name: 'webhooks test',
    summary: 'send a webhook.test event to one endpoint (delivered by a worker)',
    positionals: [ENDPOINT_ID],
    flags: { account: accountFlag },
    run: async ({ db, config, args, flags }) => {
      const account = await requireAccount(db, flags.account);
      const delivery = await service(db, config).sendTest({ accountId: account.id, endpointId: args.id }, OPERATOR);
      return { json: delivery, text: `test event ${delivery.eventId} queued as delivery ${delivery.id}` };
    },
  }),
  command({
    name: 'webhooks deliveries',
    summary: "print an endpoint's delivery log, newest first",
    positionals: [ENDPOINT_ID],
    flags: {
      account: accountFlag,
      limit: { type: 'string', value: 'N', description: 'at most this many, 1 to 500', default: '50' },
    },
    run: async ({ db, config, args, flags }) => {
      const account = await requireAccount(db, flags.account);
      const limit = parseWith(z.coerce.number().int().min(1).max(500), flags.limit, 'limit');
      const deliveries = await service(db, config).deliveries({ accountId: account.id, endpointId: args.id }, { limit });
      return { json: { data: deliveries }, text: deliveries.map(deliveryText).join('\n') || '(no deliveries)' };
    },
  }),
  command({
    name: 'webhooks redeliver',
    summary: 'deliver a past delivery’s event again, with the same webhook-id and body',
    positionals: [{ name: 'id', value: 'DELIVERY', description: 'the delivery id (dlv_…) that webhooks deliveries prints' }],
    flags: { account: accountFlag },
    run: async ({ db, config, args, flags }) => {
      const account = await requireAccount(db, flags.account);
      const delivery = await service(db, config).redeliver({ accountId: account.id, deliveryId: args.id }, OPERATOR);
      return { json: delivery, text: `event ${delivery.eventId} queued again as delivery ${delivery.id}` };
    },
  }),
];
