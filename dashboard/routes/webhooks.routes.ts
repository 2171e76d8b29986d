import { Router, type Request } from 'express';
import { environmentSchema } from '../../shared/domain/environment';
import { requireOwner, requireViewer, viewerOf } from '../auth/current-user';
import { flashWebhookSecret } from '../http/flash';
import { formBody, parseForm } from '../http/form';
import { refusedForm } from '../http/refused-form';
import { requestGuards } from '../http/request-guards';
import { confirmEndpointPage, type EndpointConfirmAction } from '../views/webhook-confirm.view';
import type { EndpointForm } from '../views/webhooks.view';
import {
  actionForm,
  endpointForm,
  endpointRef,
  environmentParam,
  ownEndpoint,
  renderEndpoint,
  renderList,
  webhookActor,
  type WebhookPageDeps,
} from './webhook-pages';
import { submitOnceThenRedirect } from '../http/submit-once';

/** What a refused add or edit form held, to fill the form in again. */
function typedForm(req: Request): EndpointForm {
  const parsed = endpointForm.partial().safeParse(req.body ?? {});
  return parsed.success ? { url: parsed.data.url, eventTypes: parsed.data.eventTypes } : {};
}

/**
 * The webhook pages: each environment's endpoints and each endpoint's page with its delivery
 * log, read by every member; endpoints added, edited, enabled or disabled, tested, redelivered
 * to, rotated and deleted by owners. Changes go through the shared endpoint service, which
 * audits each one.
 */
export function webhooksRoutes(deps: WebhookPageDeps): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);
  const change = [viewer, formBody, requestGuards, requireOwner];
  const accountOf = (res: Parameters<typeof viewerOf>[0]) => viewerOf(res).account.id;

  router.get('/webhooks', viewer, (_req, res) => res.redirect(303, '/webhooks/test'));

  router.get('/webhooks/:env', viewer, async (req, res) => renderList(deps, req, res, environmentParam(req)));

  router.post('/webhooks/:env', ...change, async (req, res) => {
    const environment = environmentParam(req);
    const form = parseForm(endpointForm, req);
    await submitOnceThenRedirect(deps.formTokens, req, res, `/webhooks/${environment}`, async () => {
      const { endpoint, secret } = await deps.webhooks.endpoints.add(
        { accountId: accountOf(res), environment, url: form.url, eventTypes: form.eventTypes },
        webhookActor(deps, req, res),
      );
      const path = `/webhooks/${environment}`;
      await flashWebhookSecret(
        req,
        { path, shown: { secret, url: endpoint.url }, message: `Endpoint ${endpoint.url} added.` },
        deps.clock(),
      );
      return path;
    });
  });

  router.get('/webhooks/:env/:id', viewer, async (req, res) => renderEndpoint(deps, req, res, await ownEndpoint(deps, req, res)));

  router.post('/webhooks/:env/:id', ...change, async (req, res) => {
    const form = parseForm(endpointForm, req);
    const endpoint = await ownEndpoint(deps, req, res);
    const path = `/webhooks/${endpoint.environment}/${endpoint.id}`;
    await submitOnceThenRedirect(deps.formTokens, req, res, path, async () => {
      await deps.webhooks.endpoints.edit(
        { accountId: accountOf(res), endpointId: endpoint.id },
        { url: form.url, eventTypes: form.eventTypes },
        webhookActor(deps, req, res),
      );
      return `${path}?done=edited`;
    });
  });

  for (const action of ['enable', 'disable'] as const) {
    router.post(`/webhooks/:env/:id/${action}`, ...change, async (req, res) => {
      parseForm(actionForm, req);
      const endpoint = await ownEndpoint(deps, req, res);
      const path = `/webhooks/${endpoint.environment}/${endpoint.id}`;
      await submitOnceThenRedirect(deps.formTokens, req, res, path, async () => {
        await deps.webhooks.endpoints[action]({ accountId: accountOf(res), endpointId: endpoint.id }, webhookActor(deps, req, res));
        return `${path}?done=${action}d`;
      });
    });
  }

  router.post('/webhooks/:env/:id/test', ...change, async (req, res) => {
    parseForm(actionForm, req);
    const endpoint = await ownEndpoint(deps, req, res);
    const path = `/webhooks/${endpoint.environment}/${endpoint.id}`;
    await submitOnceThenRedirect(deps.formTokens, req, res, path, async () => {
      await deps.webhooks.endpoints.sendTest({ accountId: accountOf(res), endpointId: endpoint.id }, webhookActor(deps, req, res));
      return `${path}?done=test`;
    });
  });

  router.post('/webhooks/:env/:id/deliveries/:deliveryId/redeliver', ...change, async (req, res) => {
    parseForm(actionForm, req);
    const environment = environmentParam(req);
    const path = `/webhooks/${environment}/${String(req.params.id)}`;
    await submitOnceThenRedirect(deps.formTokens, req, res, path, async () => {
      await deps.webhooks.redeliver(endpointRef(req, res), String(req.params.deliveryId), webhookActor(deps, req, res));
      return `${path}?done=redelivered`;
    });
  });

  for (const action of ['delete', 'rotate-secret'] as const satisfies EndpointConfirmAction[]) {
    // Asks first, on a page of its own: a stray click changes nothing.
    router.get(`/webhooks/:env/:id/${action}`, viewer, requireOwner, async (req, res) => {
      const endpoint = await ownEndpoint(deps, req, res);
      res.setHeader('Cache-Control', 'no-store');
      res.send(confirmEndpointPage({ viewer: viewerOf(res), endpoint, action }));
    });
  }

  router.post('/webhooks/:env/:id/delete', ...change, async (req, res) => {
    parseForm(actionForm, req);
    const environment = environmentParam(req);
    await submitOnceThenRedirect(deps.formTokens, req, res, `/webhooks/${environment}`, async () => {
      const endpoint = await ownEndpoint(deps, req, res);
      await deps.webhooks.endpoints.delete({ accountId: accountOf(res), endpointId: endpoint.id }, webhookActor(deps, req, res));
      return `/webhooks/${environment}?done=deleted`;
    });
  });

  router.post('/webhooks/:env/:id/rotate-secret', ...change, async (req, res) => {
    parseForm(actionForm, req);
    const environment = environmentParam(req);
    const path = `/webhooks/${environment}/${String(req.params.id)}`;
    // The endpoint is read under the token: a repeat goes where the first went and rotates nothing.
    await submitOnceThenRedirect(deps.formTokens, req, res, path, async () => {
      const endpoint = await ownEndpoint(deps, req, res);
      const rotated = await deps.webhooks.endpoints.rotateSecret(
        { accountId: accountOf(res), endpointId: endpoint.id },
        webhookActor(deps, req, res),
      );
      const shown = {
        secret: rotated.secret,
        url: rotated.endpoint.url,
        previousSecretExpiresAt: rotated.endpoint.previousSecretExpiresAt ?? undefined,
      };
      await flashWebhookSecret(req, { path, shown, message: 'Signing secret rotated.' }, deps.clock());
      return path;
    });
  });

  router.use(
    refusedForm(async (req, res, refusal) => {
      const [, env, id] = /^\/webhooks\/([^/]+)(?:\/([^/]+))?/.exec(req.path) ?? [];
      const environment = environmentSchema.safeParse(env);
      if (!environment.success) return false;
      const message = { kind: 'error' as const, text: refusal };
      if (id === undefined) {
        await renderList(deps, req, res, environment.data, { message, form: typedForm(req) });
        return true;
      }
      const endpoint = await deps.webhooks
        .own({ accountId: accountOf(res), environment: environment.data, endpointId: id })
        .catch(() => null);
      if (!endpoint) return false;
      const edited = req.path === `/webhooks/${endpoint.environment}/${endpoint.id}`;
      await renderEndpoint(deps, req, res, endpoint, { message, form: edited ? typedForm(req) : undefined });
      return true;
    }),
  );

  return router;
}
