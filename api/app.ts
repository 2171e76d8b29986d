import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../shared/logger/logger';
import { AppError } from '../shared/errors/app-error';
import { errorHandler } from './middleware/error.middleware';
import { v1Router, type RouteGuards, type V1Services } from './routes/v1.routes';

export interface AppDeps extends V1Services {
  logger: Logger;
  guards: RouteGuards;
  /** Readiness of Redis and Postgres for GET /healthz. */
  health: () => Promise<Record<string, 'ok' | 'unavailable'>>;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Builds the Express app without listening (tests drive it with supertest). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const given = req.get('x-request-id');
    const id = given && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  });
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (_req, res) => String(res.getHeader('X-Request-Id')),
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug'),
    }),
  );

  app.get('/healthz', async (_req, res) => {
    const checks = await deps.health();
    const ok = Object.values(checks).every((status) => status === 'ok');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', checks });
  });

  app.use(v1Router(deps, deps.guards));
  app.use((req, _res, next) => next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler);
  return app;
}
