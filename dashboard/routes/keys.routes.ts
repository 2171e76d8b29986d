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
import { flashIssuedKey, takeIssuedKey } from '../http/flash';
import { formBody, parseForm } from '../http/form';
import { refusedForm } from '../http/refused-form';
import { submitOnceThenRedirect } from '../http/submit-once';
import { requestGuards } from '../http/request-guards';
import { repeatState } from '../services/form-tokens.service';
import { withRepeatNotice } from '../views/query-notices';
import { confirmKeyPage, keysPage, ROTATION_GRACE_CHOICES, type ConfirmAction, type KeysPageInput } from '../views/keys.view';

const createForm = z.object({
  _csrf: z.string(),
  _once: z.string().optional(),
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
  _once: z.string().optional(),
  grace: z
    .string()
    .default('24h')
    .refine((value) => ROTATION_GRACE_CHOICES.some((choice) => choice.value === value), {
      message: `one of ${ROTATION_GRACE_CHOICES.map((c) => c.value).join(', ')}`,
    }),
});
const actionForm = z.object({ _csrf: z.string(), _once: z.string().optional() });

const MESSAGES = { revoked: 'Key revoked: the API refuses it within 2 seconds.', deleted: 'Key deleted.' } as const;

/** Issuing a key (creating, rotating) while the account is restricted: the API would refuse it anyway. */
const restricted = () =>
  new AppError(
    'ACCOUNT_RESTRICTED',
    'This account is restricted: keys cannot be created or rotated until your operator lifts the restriction',
  );

function environmentParam(req: Request): Environment {
  const env = environmentSchema.safeParse(req.params.env);
  if (!env.success) throw new AppError('NOT_FOUND', `No keys page for environment "${String(req.params.env)}"; use test or live`);
  return env.data;
}

export function keysRoutes(
  deps: Pick<DashboardDeps, 'viewers' | 'accountKeys' | 'keyLifecycle' | 'formTokens' | 'countryOf' | 'logger' | 'clock'>,
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
    deps.accountKeys.own({ accountId: viewerOf(res).account.id, environment: environmentParam(req), keyId: String(req.params.keyId) });

  /** The signed-in user, as the key lifecycle records them in the audit log. */
  const actor = (req: Request, res: Response): KeyActor => ({ name: viewerOf(res).user.email, country: deps.countryOf(req.ip) });
  /** A change that API instances were not told of at once: they apply it from Postgres within about 2 s. */
  const logWarning = (warning: string | undefined) => {
    if (warning) deps.logger.warn(warning);
  };

  router.get('/', viewer, (_req, res) => res.redirect(303, '/keys/test'));
  router.get('/keys', viewer, (_req, res) => res.redirect(303, '/keys/test'));

  router.get('/keys/:env', viewer, async (req, res) => {
    const environment = environmentParam(req);
    const done = z.enum(['revoked', 'deleted']).safeParse(req.query.done);
    const issued = takeIssuedKey(req, environment, deps.clock());
    const message = issued
      ? { kind: 'success' as const, text: issued.message }
      : done.success
        ? { kind: 'success' as const, text: MESSAGES[done.data] }
        : undefined;
    await render(res, { environment, shown: issued?.shown, message: withRepeatNotice(repeatState(req.query), message) });
  });

  router.post('/keys/:env', ...change, async (req, res) => {
    const environment = environmentParam(req);
    const form = parseForm(createForm, req);
    const account = viewerOf(res).account;
    if (account.restricted) throw restricted();
    await submitOnceThenRedirect(deps.formTokens, req, res, `/keys/${environment}`, async () => {
      const { result: issued } = await deps.keyLifecycle.create(
        {
          account: account.id,
          environment,
          name: form.name || undefined,
          scopes: form.scopes,
          rateLimitRps: form.rateLimitRps,
        },
        actor(req, res),
      );
      const name = (await deps.accountKeys.find({ accountId: account.id, keyId: issued.id }))!.name;
      await flashIssuedKey(req, { environment, shown: { key: issued.key, name }, message: `Key “${name}” created.` }, deps.clock());
      return `/keys/${environment}`;
    });
  });

  router.post('/keys/:env/:keyId/rotate', ...change, async (req, res) => {
    const environment = environmentParam(req);
    const form = parseForm(rotateForm, req);
    if (viewerOf(res).account.restricted) throw restricted();
    // The key is read under the token: a repeat goes where the first went, even once the key changed.
    await submitOnceThenRedirect(deps.formTokens, req, res, `/keys/${environment}`, async () => {
      const old = await ownKey(req, res);
      // A key already rotating out is refused, also when two rotations of it race.
      const { result: rotated } = await deps.keyLifecycle.rotate(old.id, parseDuration(form.grace)!, actor(req, res), {
        refuseRotating: true,
      });
      await flashIssuedKey(
        req,
        {
          environment,
          shown: { key: rotated.key, name: old.name, previousKeyExpiresAt: rotated.previousKeyExpiresAt },
          message: `Key “${old.name}” rotated.`,
        },
        deps.clock(),
      );
      return `/keys/${environment}`;
    });
  });

  for (const action of ['revoke', 'delete'] as const satisfies ConfirmAction[]) {
    // Asks first, on a page of its own: a stray click on the list changes nothing.
    router.get(`/keys/:env/:keyId/${action}`, viewer, requireOwner, async (req, res) => {
      const key = await ownKey(req, res);
      res.setHeader('Cache-Control', 'no-store');
      res.send(confirmKeyPage({ viewer: viewerOf(res), key, action, now: deps.clock() }));
    });
  }

  router.post('/keys/:env/:keyId/revoke', ...change, async (req, res) => {
    const environment = environmentParam(req);
    parseForm(actionForm, req);
    await submitOnceThenRedirect(deps.formTokens, req, res, `/keys/${environment}`, async () => {
      const key = await ownKey(req, res);
      logWarning((await deps.keyLifecycle.revoke(key.id, actor(req, res))).warning);
      return `/keys/${environment}?done=revoked`;
    });
  });

  router.post('/keys/:env/:keyId/delete', ...change, async (req, res) => {
    const environment = environmentParam(req);
    parseForm(actionForm, req);
    await submitOnceThenRedirect(deps.formTokens, req, res, `/keys/${environment}`, async () => {
      const key = await ownKey(req, res);
      logWarning((await deps.keyLifecycle.delete(key.id, actor(req, res))).warning);
      return `/keys/${environment}?done=deleted`;
    });
  });

  router.use(
    refusedForm(async (req, res, refusal) => {
      const environment = environmentSchema.safeParse(/^\/keys\/([^/]+)/.exec(req.path)?.[1]);
      if (!environment.success) return false;
      await render(res, { environment: environment.data, message: { kind: 'error', text: refusal } });
      return true;
    }),
  );

  return router;
}
