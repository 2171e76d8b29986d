import { createServer } from 'node:http';
import { configOrExit, loadDashboardConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { answerClientErrors, serverOptions } from '../shared/http/client-errors';
import { listenOrExit, listeningOn } from '../shared/http/listening';
import { createLogger } from '../shared/logger/logger';
import { createDashboardApp } from './app';
import { buildDashboardDependencies } from './dependencies';
import { warnOfUntrustedProxy } from './http/tls-proxy';
import { yieldTheCpu } from '../shared/process/cpu-priority';

async function main(): Promise<void> {
  loadDotCosEnv();
  const config = configOrExit(() => loadDashboardConfig());
  const logger = createLogger(config.LOG_LEVEL, 'cos-dashboard');
  const priority = yieldTheCpu(config.DASHBOARD_NICE);
  if (priority)
    logger.warn({ err: priority, nice: config.DASHBOARD_NICE }, 'could not lower the dashboard CPU priority; running at the current one');
  warnOfUntrustedProxy(config, logger);
  const deps = buildDashboardDependencies(config, logger);
  // Sessions live in Redis: listen once it answers, so the first sign-in does not fail.
  await new Promise<void>((resolve) => (deps.redis.status === 'ready' ? resolve() : deps.redis.once('ready', () => resolve())));
  // Not app.listen: the time-outs' check interval is an option of createServer only. What Node's
  // parser rejects gets the service's JSON error envelope, as on the API.
  const server = answerClientErrors(createServer(serverOptions(), createDashboardApp(deps)), logger);
  listenOrExit({
    server,
    where: { port: config.DASHBOARD_PORT, host: config.HOST, portVariable: 'DASHBOARD_PORT' },
    logger,
    onListening: () => logger.info(listeningOn(server), 'dashboard listening'),
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'dashboard stopping');
    server.close(() => void deps.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
