import { Queue, Worker } from 'bullmq';
import { redisKeys } from '../shared/cache/keys';
import { ConfigError, loadWorkerConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { createDb } from '../shared/db/database';
import { thompsonLearner } from '../shared/domain/thompson-learner';
import { EVENTS_QUEUE } from '../shared/jobs/catalog';
import { createLogger } from '../shared/logger/logger';
import { ProfileCache } from '../shared/profile/profile-cache.repository';
import { createRedis } from '../shared/redis/redis';
import { EventBatcher } from './event-batcher';
import { buildRegistry, processorFor } from './registry';

async function main(): Promise<void> {
  loadDotCosEnv();
  let config;
  try {
    config = loadWorkerConfig();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL, 'cos-worker');
  const keys = redisKeys(config.COS_REDIS_PREFIX);
  const db = createDb(config.DATABASE_URL, 10);
  const redis = createRedis(config.REDIS_URL, 'consumer');
  const queue = new Queue(EVENTS_QUEUE, { connection: redis, prefix: keys.queuePrefix });
  queue.on('error', (error) => logger.warn({ err: error }, 'queue connection error'));
  const batcher = new EventBatcher(db, new ProfileCache(redis, keys), queue, thompsonLearner, logger, config.WORKER_BATCH_SIZE);
  const registry = buildRegistry(batcher);

  const worker = new Worker(EVENTS_QUEUE, processorFor(registry), {
    connection: createRedis(config.REDIS_URL, 'consumer'),
    prefix: keys.queuePrefix,
    concurrency: config.WORKER_CONCURRENCY,
    // A killed worker's jobs are moved back to waiting once their lock expires.
    lockDuration: 15_000,
    stalledInterval: 5_000,
    maxStalledCount: 10,
  });
  worker.on('error', (error) => logger.error({ err: error }, 'worker error'));
  worker.on('failed', (job, error) => {
    const final = job && job.attemptsMade >= (job.opts.attempts ?? 1);
    logger[final ? 'error' : 'warn']({ jobId: job?.id, name: job?.name, attempts: job?.attemptsMade, err: error }, final ? 'job failed for good' : 'job failed; will retry');
  });
  logger.info({ queue: EVENTS_QUEUE, concurrency: config.WORKER_CONCURRENCY }, 'worker started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker draining in-flight jobs');
    // close() stops fetching and waits for active jobs, whose batches the batcher applies.
    const closing = worker.close();
    await batcher.drain();
    await closing;
    await queue.close();
    redis.disconnect();
    await db.destroy();
    logger.info('worker stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

void main();
