import { configOrExit, loadWorkerConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { createLogger } from '../shared/logger/logger';
import { startWorker } from './worker';

function main(): void {
  loadDotCosEnv();
  const config = configOrExit(() => loadWorkerConfig());
  const logger = createLogger(config.LOG_LEVEL, 'cos-worker');
  const running = startWorker(config, logger);
  logger.info({ concurrency: config.WORKER_CONCURRENCY, batchSize: config.WORKER_BATCH_SIZE }, 'worker started');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker draining in-flight jobs');
    void running.close().then(
      () => {
        logger.info('worker stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'worker did not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
