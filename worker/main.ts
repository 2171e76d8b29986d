import type { Server } from 'node:http';
import { configOrExit, loadWorkerConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { listeningOn } from '../shared/http/listening';
import { createLogger } from '../shared/logger/logger';
import { yieldTheCpu } from '../shared/process/cpu-priority';
import { startOpsServer } from './ops-server';
import { startWorker } from './worker';

function main(): void {
  loadDotCosEnv();
  const config = configOrExit(() => loadWorkerConfig());
  const logger = createLogger(config.LOG_LEVEL, 'cos-worker');
  const priority = yieldTheCpu(config.WORKER_NICE);
  if (priority)
    logger.warn({ err: priority, nice: config.WORKER_NICE }, 'could not lower the worker CPU priority; running at the current one');
  const running = startWorker({ config, logger });
  logger.info(
    {
      workerId: running.id,
      concurrency: config.WORKER_CONCURRENCY,
      batchSize: config.WORKER_BATCH_SIZE,
      queuePartitions: config.QUEUE_PARTITIONS,
    },
    'worker started',
  );

  let opsServer: Server | undefined;
  let stopping = false;
  const stop = (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'worker draining in-flight jobs');
    setTimeout(() => {
      logger.error(
        { drainTimeoutMs: config.WORKER_DRAIN_TIMEOUT },
        'worker did not drain in time; exiting, its jobs will be applied by a worker later',
      );
      process.exit(1);
    }, config.WORKER_DRAIN_TIMEOUT).unref();
    opsServer?.close();
    void running.close().then(
      () => {
        logger.info('worker stopped');
        process.exit(exitCode);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'worker did not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  if (config.METRICS_PORT > 0) {
    // Only the default port gives way: a second worker on one host (npm run start:worker twice)
    // still starts, on a free port it logs. A port the operator chose is not swapped silently.
    const chosen = Boolean(process.env.METRICS_PORT);
    const listen = (port: number) => startOpsServer(port, config.HOST, { ...running, metricsToken: config.ADMIN_TOKEN });
    const fatal = (error: unknown) => {
      // A worker that cannot be observed is not started half-way: fail loudly instead.
      logger.fatal(
        { err: error, host: config.HOST, port: config.METRICS_PORT },
        'cannot listen on METRICS_PORT (set another port, or 0 to turn it off; HOST must be an address of this machine)',
      );
      stop('METRICS_PORT unavailable', 1);
    };
    listen(config.METRICS_PORT).then(
      (server) => {
        opsServer = server;
        logger.info(listeningOn(server), 'worker metrics listening');
      },
      (error: unknown) => {
        const inUse = error instanceof Error && 'code' in error && error.code === 'EADDRINUSE';
        if (chosen || !inUse) return fatal(error);
        listen(0).then((server) => {
          opsServer = server;
          logger.warn(
            { defaultPort: config.METRICS_PORT, ...listeningOn(server) },
            'the default METRICS_PORT is in use (another worker on this host?): metrics listening on a free port',
          );
        }, fatal);
      },
    );
  }
}

main();
