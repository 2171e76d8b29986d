import { Queue, Worker } from 'bullmq';
import { redisKeys } from '../shared/cache/keys';
import type { WorkerConfig } from '../shared/config/config';
import { createDb } from '../shared/db/database';
import { thompsonLearner } from '../shared/domain/thompson-learner';
import { EVENTS_QUEUE } from '../shared/jobs/catalog';
import type { Logger } from '../shared/logger/logger';
import { ProfileCache } from '../shared/profile/profile-cache.repository';
import { createRedis } from '../shared/redis/redis';
import { EventBatcher } from './event-batcher';
import { buildRegistry, processorFor } from './registry';

export interface RunningWorker {
  worker: Worker;
  /** Stops fetching, applies every in-flight job, then releases connections. */
  close(): Promise<void>;
}

/** One BullMQ Worker on the events queue, applying jobs in batched transactions. */
export function startWorker(config: WorkerConfig, logger: Logger): RunningWorker {
  const keys = redisKeys(config.COS_REDIS_PREFIX);
  const db = createDb(config.DATABASE_URL, 10);
  const redis = createRedis(config.REDIS_URL, 'consumer');
  const queue = new Queue(EVENTS_QUEUE, { connection: redis, prefix: keys.queuePrefix });
  queue.on('error', (error) => logger.warn({ err: error }, 'queue connection error'));
  const batcher = new EventBatcher(db, new ProfileCache(redis, keys), queue, thompsonLearner, logger, config.WORKER_BATCH_SIZE);

  const workerConnection = createRedis(config.REDIS_URL, 'consumer');
  const worker = new Worker(EVENTS_QUEUE, processorFor(buildRegistry(batcher)), {
    connection: workerConnection,
    prefix: keys.queuePrefix,
    concurrency: config.WORKER_CONCURRENCY,
    // A killed worker's jobs return to waiting once their lock expires, and run again.
    lockDuration: 15_000,
    stalledInterval: 5_000,
    maxStalledCount: 10,
  });
  worker.on('error', (error) => logger.error({ err: error }, 'worker error'));
  worker.on('failed', (job, error) => {
    const final = !!job && job.attemptsMade >= (job.opts.attempts ?? 1);
    logger[final ? 'error' : 'warn'](
      { jobId: job?.id, name: job?.name, attempts: job?.attemptsMade, err: error },
      final ? 'job failed for good; kept in the failed set' : 'job failed; will retry',
    );
  });

  return {
    worker,
    close: async () => {
      const closing = worker.close();
      await batcher.drain();
      await closing;
      await queue.close();
      workerConnection.disconnect();
      redis.disconnect();
      await db.destroy();
    },
  };
}
