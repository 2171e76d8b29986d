import { Router } from 'express';
import { AppError } from '../../shared/errors/app-error';
import type { Readiness } from '../../shared/health/readiness';
import type { ApiMetrics } from '../../shared/metrics/metrics';
import { SCRAPE_UNAUTHORIZED_MESSAGE, scrapeAuthorized } from '../../shared/metrics/scrape-auth';
import { routeName } from '../middleware/metrics.middleware';

const OPS_PATHS = ['/healthz', '/readyz', '/metrics'];

export interface OpsDeps {
  metrics: ApiMetrics;
  /** The text GET /metrics answers: this process's registry, or every API process's under API_PROCESSES. */
  metricsText: () => Promise<string>;
  /** Whether Redis and Postgres are reachable, for GET /readyz. */
  readiness: () => Promise<Readiness>;
  /** When set, GET /metrics requires it as a Bearer token (ADMIN_TOKEN). */
  metricsToken?: string;
}

/**
 * Probes and metrics, without API keys: /healthz (the process is alive; touches nothing),
 * /readyz (Redis and Postgres reachable) and /metrics (Prometheus text).
 */
export function opsRouter(deps: OpsDeps): Router {
  const router = Router({ strict: true, caseSensitive: true });
  router.get('/healthz', routeName('healthz'), (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });
  router.get('/readyz', routeName('readyz'), async (_req, res) => {
    const { ready, checks } = await deps.readiness();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'degraded', checks });
  });
  router.get('/metrics', routeName('metrics'), async (req, res) => {
    if (!scrapeAuthorized(deps.metricsToken, req.get('authorization'))) throw new AppError('UNAUTHORIZED', SCRAPE_UNAUTHORIZED_MESSAGE);
    const text = await deps.metricsText();
    res.status(200).type(deps.metrics.registry.contentType).send(text);
  });
  // Like /v1: OPTIONS lists the methods, another method is a 405.
  router.all(OPS_PATHS, (req, res, next) => {
    res.setHeader('Allow', 'GET, HEAD');
    if (req.method === 'OPTIONS') return void res.status(204).end();
    next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use GET, HEAD`));
  });
  return router;
}
