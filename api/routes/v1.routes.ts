import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Scope } from '../../shared/credentials/api-key';
import { AppError } from '../../shared/errors/app-error';
import { authContext } from '../middleware/auth.middleware';
import { deferredAdmission, settleDeferredLimit, type LimitMode } from '../middleware/rate-limit.middleware';
import { exactRoutes, jsonBody, pipeline, sendJson, type ExactRoutes } from '../http';
import { routeName } from '../middleware/metrics.middleware';
import {
  contextRequestSchema,
  outcomeRequestSchema,
  profileUpdateSchema,
  profilePathSchema,
  versionsQuerySchema,
} from '../schemas/request.schemas';
import type { OutcomeAccepted } from '../schemas/response.schemas';
import type { ContextService } from '../services/context.service';
import type { OutcomeService } from '../services/outcome.service';
import type { ProfileService } from '../services/profile.service';
import type { KeyClaim } from '../../shared/idempotency/idempotency.repository';
import { idempotencyKeyOf, type IdempotentPosts } from '../services/idempotent-posts';
import { parseOrThrow } from '../validation';

type Method = 'get' | 'post' | 'put' | 'delete';
type Handler = (req: Request, res: Response) => Promise<void>;

export interface V1Services {
  context: ContextService;
  outcome: OutcomeService;
  profiles: ProfileService;
  idempotency: IdempotentPosts;
}

function pathUserId(req: Request): string {
  return parseOrThrow(profilePathSchema, { userId: req.params.userId }, { userId: 'INVALID_USER_ID' }).userId;
}

/**
 * The /v1 route table. Each route runs: auth (401/403) → rate limit (429) → body checks
 * (413/415/400) → handler;
 * a known path with another method is a 405 before auth, an unknown path a 404.
 */
export interface RouteGuards {
  /** Authentication and scope check (401/403). */
  auth: (scope: Scope, endpoint: string) => RequestHandler;
  /** Rate limit, quota and metering (429); `'with-read'` defers it to the handler's first profile read. */
  limit: (endpoint: string, mode?: LimitMode) => RequestHandler;
}

/** The /v1 routes: what the router serves and what the OpenAPI document lists. */
export const V1_ROUTES = [
  // The context handler settles the limit together with its first profile read.
  { method: 'post', path: '/v1/context', name: 'context', scope: 'context', limit: 'with-read' },
  { method: 'post', path: '/v1/outcome', name: 'outcome', scope: 'outcome', limit: 'now' },
  { method: 'get', path: '/v1/profile/:userId', name: 'profile.get', scope: 'profile', limit: 'now' },
  { method: 'put', path: '/v1/profile/:userId', name: 'profile.update', scope: 'profile', limit: 'now' },
  { method: 'delete', path: '/v1/profile/:userId', name: 'profile.delete', scope: 'profile', limit: 'now' },
  { method: 'get', path: '/v1/profile/:userId/versions', name: 'profile.versions', scope: 'profile', limit: 'now' },
] as const satisfies ReadonlyArray<{ method: Method; path: string; name: string; scope: Scope; limit: LimitMode }>;
export type V1Route = (typeof V1_ROUTES)[number];
export type RouteName = V1Route['name'];

const OUTCOME_ACCEPTED: OutcomeAccepted = { success: true, message: 'Outcome accepted; it will be applied to the profile shortly' };

/** The /v1 routes: `exactPaths` finds the static paths' handlers (each after `before`), `mount` adds every route to the app. */
export interface V1Routes {
  exactPaths: (before: RequestHandler) => ExactRoutes;
  mount: (app: Express) => void;
}

/**
 * The /v1 routes, each as one handler running its steps in order (a nested router and one
 * layer per step cost the hot path more than its own work, docs/adr/0016-hot-path.md).
 */
export function v1Routes(services: V1Services, guards: RouteGuards): V1Routes {
  const handlers: Record<RouteName, Handler> = {
    context: async (req, res) => {
      const body = parseOrThrow(contextRequestSchema, req.body, { userId: 'INVALID_USER_ID' });
      const key = idempotencyKeyOf(req);
      const { tenant } = authContext(res);
      const user = services.context.user(tenant, body.userId);
      // The limit this route deferred rides on the profile read (docs/adr/0016-hot-path.md).
      const limit = deferredAdmission(res);
      if (key === undefined) return sendJson(res, 200, await services.context.decide({ user, limit }, body));
      await services.idempotency.answer(res, { tenant, userHash: user.hash, key, operation: 'context', request: body }, async (claim) => ({
        status: 200,
        body: await services.context.decide({ user, limit, claim }, body),
      }));
    },
    outcome: async (req, res) => {
      const body = parseOrThrow(outcomeRequestSchema, req.body, { requestId: 'INVALID_REQUEST_ID' });
      const key = idempotencyKeyOf(req);
      const { tenant } = authContext(res);
      const claims = services.outcome.open(tenant, body);
      const accept = async (key?: KeyClaim) => {
        await services.outcome.record(tenant, body, claims, key);
        return { status: 202, body: OUTCOME_ACCEPTED };
      };
      if (key === undefined) return sendJson(res, 202, (await accept()).body);
      await services.idempotency.answer(res, { tenant, userHash: claims.userHash, key, operation: 'outcome', request: body }, accept);
    },
    'profile.get': async (req, res) => {
      sendJson(res, 200, await services.profiles.get(authContext(res).tenant, pathUserId(req)));
    },
    'profile.update': async (req, res) => {
      const userId = pathUserId(req);
      const body = parseOrThrow(profileUpdateSchema, req.body);
      sendJson(res, 200, await services.profiles.update(authContext(res).tenant, userId, body));
    },
    'profile.delete': async (req, res) => {
      await services.profiles.erase(authContext(res).tenant, pathUserId(req));
      if (!res.headersSent) res.status(204).end(); // not when answered 503 at its deadline meanwhile
    },
    'profile.versions': async (req, res) => {
      const userId = pathUserId(req);
      const query = parseOrThrow(versionsQuerySchema, { ...req.query });
      sendJson(res, 200, await services.profiles.versions(authContext(res).tenant, userId, query.limit, query.before));
    },
  };
  const routes = V1_ROUTES.map((route) => {
    const handler = handlers[route.name];
    const run = pipeline(
      [
        routeName(route.name),
        guards.auth(route.scope, route.name),
        guards.limit(route.name, route.limit),
        jsonBody,
        (req: Request, res: Response) => handler(req, res),
      ],
      settleDeferredLimit,
    );
    return { ...route, run };
  });

  const mount = (app: Express): void => {
    const byPath = new Map<string, typeof routes>();
    for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
    for (const [path, pathRoutes] of byPath) {
      for (const route of pathRoutes) app[route.method](path, route.run);
      const allow = pathRoutes.map((r) => r.method.toUpperCase()).concat(pathRoutes.some((r) => r.method === 'get') ? ['HEAD'] : []);
      app.all(path, (req: Request, res: Response, next: NextFunction) => {
        res.setHeader('Allow', allow.join(', '));
        if (req.method === 'OPTIONS') return void res.status(204).end();
        next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; use ${allow.join(', ')}`));
      });
    }
  };
  const staticPaths = routes.filter((route) => !route.path.includes(':'));
  return { exactPaths: (before) => exactRoutes(staticPaths, before), mount };
}
