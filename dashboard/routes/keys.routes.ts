import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { parseDuration } from '../../shared/config/duration';
import { environmentSchema, type Environment } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import { scopeSchema } from '../../shared/credentials/api-key';
import type { KeyActor } from '../../shared/credentials/key-lifecycle';
import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import { requireOwner, requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { formBody, parseForm } from '../http/form';
import { requestGuards } from '../http/request-guards';
import { keysPage, ROTATION_GRACE_CHOICES, type KeysPageInput } from '../views/keys.view';

const createForm = z.object({
  _csrf: z.string(),
  name: z.string().trim().max(100, 'at most 100 characters').optional(),
  // One checkbox ticked arrives as a string, several as an array.
  scopes: z
    .union([scopeSchema, z.array(scopeSchema)], { error: 'choose among context, outcome and profile' })
    .transform((s) => (Array.isArray(s) ? s : [s]))
    .pipe(z.array(scopeSchema).min(1, 'choose at least one scope')),
  rateLimitRps: z
    .string()
    .trim()
    .optional()
    .transform((text) => (text ? Number(text) : null))
    // Its ceiling is the plan's, checked by the key service.
    .pipe(z.number().int('a whole number').min(1, 'at least 1').nullable()),
});

const rotateForm = z.object({
  _csrf: z.string(),
  grace: z
    .string()
    .default('24h')
    .refine((value) => ROTATION_GRACE_CHOICES.some((choice) => choice.value === value), {
      message: `one of ${ROTATION_GRACE_CHOICES.map((c) => c.value).join(', ')}`,
    }),
});
const actionForm = z.object({ _csrf: z.string() });

const MESSAGES = { revoked: 'Key revoked: the API refuses it within 2 seconds.', deleted: 'Key deleted.' } as const;

function environmentParam(req: Request): Environment {
  const env = environmentSchema.safeParse(req.params.env);
  if (!env.success) throw new AppError('NOT_FOUND', `No keys page for environment "${String(req.params.env)}"; use test or live`);
  return env.data;
}

export function keysRoutes(
  deps: Pick<DashboardDeps, 'viewers' | 'accountKeys' | 'keyLifecycle' | 'countryOf' | 'logger' | 'clock'>,
): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);
  const change = [viewer, formBody, requestGuards, requireOwner];

  const render = async (res: Response, input: Omit<KeysPageInput, 'viewer' | 'keys' | 'now'>) => {
    const v = viewerOf(res);
    res.setHeader('Cache-Control', 'no-store');
    res.send(keysPage({ ...input, viewer: v, keys: await deps.accountKeys.list(v.account.id), now: deps.clock() }));
  };

  /** The key `:keyId` of this account and environment; any other is "not found", whoever owns it. */
  const ownKey = async (req: Request, res: Response): Promise<ApiKeyRecord> =>
    deps.accountKeys.own(viewerOf(res).account.id, environmentParam(req), String(req.params.keyId));

  /** The signed-in user, as the key lifecycle records them in the audit log. */
  const actor = (req: Request, res: Response): KeyActor => ({ name: viewerOf(res).user.email, country: deps.countryOf(req.ip) });
  /** A change that API instances were not told of at once: they apply it from Postgres within about 2 s. */
  const logWarning = (warning: string | undefined) => {
    if (warning) deps.logger.warn(warning);
  };

  router.get('/', viewer, (_req, res) => res.redirect(303, '/keys/test'));
  router.get('/keys', viewer, (_req, res) => res.redirect(303, '/keys/test'));

  router.get('/keys/:env', viewer, async (req, res) => {
    const done = z.enum(['revoked', 'deleted']).safeParse(req.query.done);
    await render(res, {
      environment: environmentParam(req),
      message: done.success ? { kind: 'success', text: MESSAGES[done.data] } : undefined,
    });
  });

  router.post('/keys/:env', ...change, async (req, res) => {
    const environment = environmentParam(req);
    const form = parseForm(createForm, req);
    const account = viewerOf(res).account.id;
    const { result: issued } = await deps.keyLifecycle.create(
      {
        account,
        environment,
        name: form.name || undefined,
        scopes: form.scopes,
        rateLimitRps: form.rateLimitRps,
      },
      actor(req, res),
    );
    const name = (await deps.accountKeys.find(account, issued.id))!.name;
    res.status(201);
    await render(res, { environment, shown: { key: issued.key, name }, message: { kind: 'success', text: `Key “${name}” created.` } });
  });

  router.post('/keys/:env/:keyId/rotate', ...change, async (req, res) => {
    const old = await ownKey(req, res);
    const form = parseForm(rotateForm, req);
    const { result: rotated } = await deps.keyLifecycle.rotate(old.id, parseDuration(form.grace)!, actor(req, res));
    res.status(201);
    await render(res, {
      environment: old.environment,
      shown: { key: rotated.key, name: old.name, previousKeyExpiresAt: rotated.previousKeyExpiresAt },
      message: { kind: 'success', text: `Key “${old.name}” rotated.` },
    });
  });

  router.post('/keys/:env/:keyId/revoke', ...change, async (req, res) => {
    const key = await ownKey(req, res);
    parseForm(actionForm, req);
    logWarning((await deps.keyLifecycle.revoke(key.id, actor(req, res))).warning);
    res.redirect(303, `/keys/${key.environment}?done=revoked`);
  });

  router.post('/keys/:env/:keyId/delete', ...change, async (req, res) => {
    const key = await ownKey(req, res);
    parseForm(actionForm, req);
    logWarning((await deps.keyLifecycle.delete(key.id, actor(req, res))).warning);
    res.redirect(303, `/keys/${key.environment}?done=deleted`);
  });

  return router;
}
