import cluster from 'node:cluster';
import { configOrExit, loadApiConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { createLogger } from '../shared/logger/logger';
import { createApp } from './app';
import { runPrimary } from './cluster';
import { buildApiDependencies } from './dependencies';

function main(): void {
  loadDotCosEnv();
  const config = configOrExit(() => loadApiConfig());
  const logger = createLogger(config.LOG_LEVEL, 'cos-api');
  if (config.API_PROCESSES > 1 && cluster.isPrimary) return runPrimary(config.API_PROCESSES, logger);
  const deps = buildApiDependencies(config, logger);
  const server = createApp(deps)
    .createServer()
    .listen(config.PORT, () => {
      logger.info({ port: config.PORT, environments: config.SERVE_ENVIRONMENTS }, 'api listening');
    });
  server.keepAliveTimeout = 65_000;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api stopping');
    server.close(() => {
      void deps.close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
