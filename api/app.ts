import express, { type Express } from 'express';
import type { Logger } from '../shared/logger/logger';
import { AppError } from '../shared/errors/app-error';
import { errorHandler } from './middleware/error.middleware';
import { requestLog } from './middleware/request-log.middleware';
import { v1Router, type RouteGuards, type V1Services } from './routes/v1.routes';

export interface AppDeps extends V1Services {
  logger: Logger;
  guards: RouteGuards;
  /** Readiness of Redis and Postgres for GET /healthz. */
  health: () => Promise<Record<string, 'ok' | 'unavailable'>>;
}

/** Builds the Express app without listening (tests drive it with supertest). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(requestLog(deps.logger));

  app.get('/healthz', async (_req, res) => {
    const checks = await deps.health();
    const ok = Object.values(checks).every((status) => status === 'ok');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', checks });
  });

  app.use(v1Router(deps, deps.guards));
  app.use((req, _res, next) => next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler(deps.logger));
  return app;
}
