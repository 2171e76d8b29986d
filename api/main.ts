import cluster from 'node:cluster';
import { configOrExit, loadApiConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { untilReady } from '../shared/health/readiness';
import { listenOrExit, listeningOn } from '../shared/http/listening';
import { createLogger } from '../shared/logger/logger';
import { createApp } from './app';
import { runPrimary } from './cluster';
import { buildApiDependencies } from './dependencies';

/**
 * How long a process of `API_PROCESSES` waits for its Redis and Postgres connections before it
 * listens anyway (and answers 503 until they come, as a lone process does).
 */
const CHILD_READY_TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  loadDotCosEnv();
  const config = configOrExit(() => loadApiConfig());
  const logger = createLogger(config.LOG_LEVEL, 'cos-api');
  if (config.API_PROCESSES > 1 && cluster.isPrimary) return runPrimary(config.API_PROCESSES, logger);
  const deps = buildApiDependencies(config, logger);
  // node:cluster's primary hands a child new connections as soon as it listens: a child that
  // listened before its connections were ready answered those requests 503
  // (docs/adr/0016-hot-path.md).
  if (cluster.isWorker && !(await untilReady(deps.readiness, { timeoutMs: CHILD_READY_TIMEOUT_MS, intervalMs: 50 })))
    logger.warn({ waitedMs: CHILD_READY_TIMEOUT_MS }, 'api process listening before redis and postgres are ready');
  const app = createApp(deps);
  // Under API_PROCESSES the primary binds HOST:PORT once and hands each child its connections.
  const server = app.createServer();
  listenOrExit({
    server,
    where: { port: config.PORT, host: config.HOST, portVariable: 'PORT' },
    logger,
    onListening: () => logger.info({ ...listeningOn(server), environments: config.SERVE_ENVIRONMENTS }, 'api listening'),
  });
  server.keepAliveTimeout = 65_000;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api stopping');
    server.close(() => {
      app.close();
      void deps.close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
