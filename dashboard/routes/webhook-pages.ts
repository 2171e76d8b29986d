import type { Request, Response } from 'express';
import { z } from 'zod';
import { environmentSchema, type Environment } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import type { WebhookEndpoint } from '../../shared/webhooks/endpoint.repository';
import type { WebhookActor } from '../../shared/webhooks/webhook-endpoints.service';
import { viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { takeWebhookSecret } from '../http/flash';
import { repeatState } from '../services/form-tokens.service';
import type { PageEndpointRef } from '../services/webhooks.service';
import { doneText, withRepeatNotice } from '../views/query-notices';
import { endpointPage, type EndpointPageInput } from '../views/webhook-endpoint.view';
import { webhooksPage, type WebhooksPageInput } from '../views/webhooks.view';

/** What the webhook pages use of the dashboard's dependencies. */
export type WebhookPageDeps = Pick<DashboardDeps, 'viewers' | 'webhooks' | 'formTokens' | 'countryOf' | 'clock'>;

/** The add and edit forms: one checkbox ticked arrives as a string, several as an array; the service checks the values. */
export const endpointForm = z.object({
  _csrf: z.string(),
  _once: z.string().optional(),
  url: z.string().max(4096, 'at most 2,048 characters'),
  eventTypes: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((types) => (types === undefined ? [] : Array.isArray(types) ? types : [types])),
});
export const actionForm = z.object({ _csrf: z.string(), _once: z.string().optional() });

const deliveryIdSchema = z.string().regex(/^dlv_[0-9A-Za-z]{20}$/);

export function environmentParam(req: Request): Environment {
  const env = environmentSchema.safeParse(req.params.env);
  if (!env.success) throw new AppError('NOT_FOUND', `No webhooks page for environment "${String(req.params.env)}"; use test or live`);
  return env.data;
}

/** The signed-in user, as the endpoint service records them in the audit log. */
export const webhookActor = (deps: WebhookPageDeps, req: Request, res: Response): WebhookActor => ({
  name: viewerOf(res).user.email,
  country: deps.countryOf(req.ip),
});

/** The endpoint the page's path names: the viewer's account, the `:env` and the `:id`. */
export const endpointRef = (req: Request, res: Response): PageEndpointRef => ({
  accountId: viewerOf(res).account.id,
  environment: environmentParam(req),
  endpointId: String(req.params.id),
});

/** The endpoint `:id` of the page's account and environment; any other is "not found". */
export const ownEndpoint = (deps: WebhookPageDeps, req: Request, res: Response): Promise<WebhookEndpoint> =>
  deps.webhooks.own(endpointRef(req, res));

/** A page's success message, said again to be a repeat when the form was sent twice. */
export function doneMessage(req: Request, messages: Record<string, string>, flashed?: string): WebhooksPageInput['message'] {
  const text = flashed ?? doneText(req.query, messages);
  return withRepeatNotice(repeatState(req.query), text ? { kind: 'success', text } : undefined);
}

/** The environment's list of endpoints, with the secret flashed for it (once) and a message. */
export async function renderList(
  deps: WebhookPageDeps,
  req: Request,
  res: Response,
  environment: Environment,
  extra: Pick<WebhooksPageInput, 'message' | 'form'> = {},
): Promise<void> {
  const viewer = viewerOf(res);
  const flashed = req.method === 'GET' ? takeWebhookSecret(req, `/webhooks/${environment}`, deps.clock()) : undefined;
  const endpoints = await deps.webhooks.list(viewer.account.id, environment);
  res.setHeader('Cache-Control', 'no-store');
  res.send(
    webhooksPage({
      viewer,
      environment,
      endpoints,
      shown: flashed?.shown,
      message: extra.message ?? doneMessage(req, { deleted: 'Endpoint deleted, with its delivery log.' }, flashed?.message),
      form: extra.form,
    }),
  );
}

const ENDPOINT_MESSAGES: Record<string, string> = {
  edited: 'Endpoint saved.',
  enabled: 'Endpoint enabled: events are sent to it again.',
  disabled: 'Endpoint disabled: no events are sent to it until it is enabled again.',
  test: 'Test event sent: its delivery is in the log below.',
  redelivered: 'Redelivery queued: it is in the log below.',
};

/** The endpoint's page, with the secret flashed for it (once), a message and a page of its delivery log. */
export async function renderEndpoint(
  deps: WebhookPageDeps,
  req: Request,
  res: Response,
  endpoint: WebhookEndpoint,
  extra: Pick<EndpointPageInput, 'message' | 'form'> = {},
): Promise<void> {
  const viewer = viewerOf(res);
  const path = `/webhooks/${endpoint.environment}/${endpoint.id}`;
  const flashed = req.method === 'GET' ? takeWebhookSecret(req, path, deps.clock()) : undefined;
  const before = req.method === 'GET' ? deliveryIdSchema.safeParse(req.query.before).data : undefined;
  const log = await deps.webhooks.deliveries(
    { accountId: viewer.account.id, environment: endpoint.environment, endpointId: endpoint.id },
    before,
  );
  res.setHeader('Cache-Control', 'no-store');
  res.send(
    endpointPage({
      viewer,
      endpoint,
      ...log,
      before,
      now: deps.clock(),
      shown: flashed?.shown,
      message: extra.message ?? doneMessage(req, ENDPOINT_MESSAGES, flashed?.message),
      form: extra.form,
    }),
  );
}
