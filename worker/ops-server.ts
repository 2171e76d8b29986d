import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { AppError } from '../shared/errors/app-error';
import type { Readiness } from '../shared/health/readiness';
import type { WorkerMetrics } from '../shared/metrics/metrics';
import { SCRAPE_UNAUTHORIZED_MESSAGE, scrapeAuthorized } from '../shared/metrics/scrape-auth';

export interface OpsServerDeps {
  metrics: WorkerMetrics;
  readiness: () => Promise<Readiness>;
  /** When set, GET /metrics requires it as a Bearer token (ADMIN_TOKEN). */
  metricsToken?: string;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify(body),
});

/** An error answer, with an X-Request-Id that its body's traceId repeats, as the API's have. */
const failure = (error: AppError, headers: Record<string, string> = {}): Answer => {
  const traceId = randomUUID();
  return json(error.statusCode, error.toBody(traceId), { 'X-Request-Id': traceId, ...headers });
};

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** The same probes and metrics as the API's, answered with the API's error envelope. */
async function answer(req: IncomingMessage, deps: OpsServerDeps): Promise<Answer> {
  const path = (req.url ?? '/').split('?')[0]!;
  const method = req.method ?? 'GET';
  if (!PATHS.has(path)) return failure(new AppError('NOT_FOUND', `No route for ${method} ${path}`));
  if (method === 'OPTIONS') return { status: 204, headers: { Allow: 'GET, HEAD' }, body: '' };
  if (method !== 'GET' && method !== 'HEAD') {
    return failure(new AppError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use GET, HEAD`), { Allow: 'GET, HEAD' });
  }
  if (path === '/healthz') return json(200, { status: 'ok' });
  if (path === '/readyz') {
    const { ready, checks } = await deps.readiness();
    return json(ready ? 200 : 503, { status: ready ? 'ok' : 'degraded', checks });
  }
  if (!scrapeAuthorized(deps.metricsToken, req.headers.authorization)) {
    return failure(new AppError('UNAUTHORIZED', SCRAPE_UNAUTHORIZED_MESSAGE), { 'WWW-Authenticate': 'Bearer realm="cos"' });
  }
  const text = await deps.metrics.registry.metrics();
  return { status: 200, headers: { 'Content-Type': deps.metrics.registry.contentType }, body: text };
}

/**
 * The worker's HTTP listener (HOST, METRICS_PORT): GET /healthz (alive), /readyz (Redis and
 * Postgres reachable) and /metrics (Prometheus text). Resolves once listening; rejects when it
 * cannot listen (a port in use, HOST not an address of this machine).
 */
export function startOpsServer(port: number, host: string, deps: OpsServerDeps): Promise<Server> {
  const server = createServer((req, res) => {
    void answer(req, deps)
      .catch(() => failure(new AppError('INTERNAL_ERROR', 'Something went wrong on our side')))
      .then(({ status, headers, body }) => {
        res.writeHead(status, headers);
        res.end(req.method === 'HEAD' ? undefined : body);
      });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
