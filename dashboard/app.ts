import express, { type Express } from 'express';
import { accountRoutes } from './routes/account.routes';
import { auditRoutes } from './routes/audit.routes';
import { keysRoutes } from './routes/keys.routes';
import { patternsRoutes } from './routes/patterns.routes';
import { sessionRoutes, signInWhileBusy } from './routes/session.routes';
import { teamRoutes } from './routes/team.routes';
import { trafficRoutes } from './routes/traffic.routes';
import { webhooksRoutes } from './routes/webhooks.routes';
import { loadViewer } from './auth/current-user';
import type { DashboardDeps } from './dependencies';
import { dashboardErrorHandler, notFound, pageDeadlines } from './http/errors';
import { securityHeaders } from './http/security-headers';
import { sessions } from './http/session';
import { staticAssets } from './http/static-assets';

/** The dashboard: server-rendered pages over the same Postgres and Redis as the API. */
export function createDashboardApp(deps: DashboardDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // req.ip honours X-Forwarded-For only from the proxies TRUST_PROXY names.
  app.set('trust proxy', deps.trustProxy ?? false);

  const onError = dashboardErrorHandler(deps.logger, deps.watch);
  app.use(pageDeadlines(deps.requestDeadlineMs, onError, deps.watch).middleware);
  app.use(securityHeaders({ hsts: deps.session.secureCookies }));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.use(staticAssets());
  app.use(signInWhileBusy(deps));
  app.use(sessions({ redis: deps.redis, prefix: deps.redisKeys.dashboardSessionPrefix, ...deps.session }));
  app.use(sessionRoutes(deps));
  app.use(keysRoutes(deps));
  app.use(trafficRoutes(deps));
  app.use(patternsRoutes(deps));
  app.use(webhooksRoutes(deps));
  app.use(auditRoutes(deps));
  app.use(accountRoutes(deps));
  app.use(teamRoutes(deps));
  // A signed-in visitor's 404 keeps the navigation.
  app.use(loadViewer(deps.viewers), notFound);
  app.use(onError);
  return app;
}
