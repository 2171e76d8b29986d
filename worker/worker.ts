import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Queue, Worker, type Processor } from 'bullmq';
import type { WorkerConfig } from '../shared/config/config';
import { createDb, DB_ROLES } from '../shared/db/database';
import { ensurePartitions } from '../shared/db/partitions';
import { dependencyProbes, probePool, readinessCheck, type Readiness } from '../shared/health/readiness';
import { DependencyWatch, outageAwareLogger } from '../shared/health/dependency-watch';
import { isDependencyUnavailable } from '../shared/errors/unavailable';
import { dependencyOutageMetrics, WorkerMetrics } from '../shared/metrics/metrics';
import { createEngine } from '../shared/domain/engine/engine';
import { PopulationCache } from '../shared/population/population-cache.repository';
import { PendingOutcomes } from '../shared/profile/pending-outcomes.repository';
import { EVENTS_QUEUE, MAINTENANCE_QUEUE, WEBHOOKS_QUEUE } from '../shared/jobs/catalog';
import type { Logger } from '../shared/logger/logger';
import { ProfileCache } from '../shared/profile/profile-cache.repository';
import { createRedis, keysFor, redisTarget } from '../shared/redis/redis';
import { catchUpTestDataReset } from '../shared/test-data/test-data-reset';
import { cappedBackoff } from '../shared/jobs/retry';
import { onWorkerGroupChange, WorkerGroup } from '../shared/jobs/worker-group.repository';
import { EventBatcher } from './event-batcher';
import { reportJobFailure } from './job-failures';
import { LostLocks } from './lost-locks';
import { PartitionConsumers, type QueueConsumer } from './partition-consumers';
import { batchPoolSettings, jobTimings } from './job-timings';
import { buildRegistry, processorFor } from './registry';
import { registerSchedules } from './schedules';
import { maintenanceHandlers } from './maintenance-handlers';
import { webhookHandlers } from './webhook-handlers';
import type { Resolver } from '../shared/webhooks/address-guard';

export interface RunningWorker {
  /** This worker's id in the group the event-queue partitions are shared out over. */
  id: string;
  /** The event-queue partitions it consumes now. */
  partitions(): number[];
  /** Resolves once it has joined the group and consumes the partitions first assigned to it. */
  joined: Promise<void>;
  metrics: WorkerMetrics;
  /** Whether Redis and Postgres are reachable, for GET /readyz. */
  readiness: () => Promise<Readiness>;
  /** Which dependency is away as this worker sees it; while one is, it takes no jobs. */
  outages: DependencyWatch;
  /**
   * Resolves once the maintenance schedules are registered, the coming months' partitions made
   * and a missed reset caught up.
   */
  ready: Promise<void>;
  /**
   * Stops fetching, leaves the group (the others take its partitions at once), applies every
   * in-flight job, then releases connections. Closing again returns the same promise.
   */
  close(): Promise<void>;
}

/** What a worker process starts from. */
export interface WorkerStart {
  config: WorkerConfig;
  logger: Logger;
  /** Test seam: the time its jobs and schedules go by (default Date.now). */
  clock?: () => number;
  /** Test seam: how webhook receivers' host names resolve. */
  resolver?: Resolver;
}

/**
 * BullMQ Workers on this worker's share of the event-queue partitions (decisions and outcomes,
 * applied in batched transactions; the share follows the live workers,
 * docs/adr/0015-worker-partition-ownership.md), one on the maintenance queue (usage flushes,
 * the monthly test reset, the monthly partitions) and one on the webhooks queue (the outbox
 * relay and deliveries, WEBHOOK_CONCURRENCY at once, docs/adr/0021-webhooks.md).
 */
export function startWorker({ config, logger, clock = Date.now, resolver }: WorkerStart): RunningWorker {
  const keys = keysFor(config);
  const target = redisTarget(config);
  const timings = jobTimings(config.WORKER_BATCH_SIZE);
  // Batches, maintenance and probes each have a pool and deadline of their own
  // (docs/adr/0018-deadlines.md): a reset's long delete never holds a batch's connection, and a
  // probe still gets one while a frozen Postgres holds the others.
  const db = createDb(config.DATABASE_URL, batchPoolSettings(timings));
  const maintenanceDb = createDb(config.DATABASE_URL, DB_ROLES.maintenance);
  const webhooksDb = createDb(config.DATABASE_URL, DB_ROLES.webhooks);
  const probeDb = createDb(config.DATABASE_URL, probePool());
  const redis = createRedis(target, 'consumer');
  const probes = dependencyProbes(redis, probeDb);
  const readiness = readinessCheck(probes);
  const watch = new DependencyWatch({ probes, logger });
  // Connection errors during an outage are the watch's to log, once.
  const quiet = outageAwareLogger(logger, watch);
  // One events queue per partition (docs/adr/0014-redis-cluster-partitions.md), read here for the metrics.
  const events = keys.queuePrefixes.map((prefix) => new Queue(EVENTS_QUEUE, { connection: redis, prefix }));
  const maintenance = new Queue(MAINTENANCE_QUEUE, { connection: redis, prefix: keys.maintenanceQueuePrefix });
  const webhooks = new Queue(WEBHOOKS_QUEUE, { connection: redis, prefix: keys.maintenanceQueuePrefix });
  const queues = [...events, maintenance, webhooks];
  for (const queue of queues) queue.on('error', (error) => quiet.warn({ err: error }, 'queue connection error'));
  const metrics = new WorkerMetrics(queues, readiness);
  dependencyOutageMetrics(metrics.registry, watch);
  const batcher = new EventBatcher({
    db,
    cache: new ProfileCache(redis, keys),
    populations: new PopulationCache(redis, keys),
    pendingOutcomes: new PendingOutcomes(redis, keys),
    // One engine for the process: its calls never wait, so concurrent batches take turns with it.
    learner: createEngine(),
    logger,
    maxBatch: config.WORKER_BATCH_SIZE,
    secret: config.COS_SECRET,
    metrics,
  });

  const registry = buildRegistry({
    decisions: (data) => batcher.submitAll(data.decisions.map((decision) => ({ kind: 'decision', data: decision }))),
    outcomes: (data) => batcher.submitAll(data.outcomes.map((outcome) => ({ kind: 'outcome', data: outcome }))),
    ...maintenanceHandlers({ redis, keys, db, maintenanceDb, logger, metrics, clock, webhookRetentionMs: config.WEBHOOK_RETENTION }),
    ...webhookHandlers({ db: webhooksDb, queue: webhooks, config, logger, metrics, clock, resolver }),
  });

  const common = {
    lockDuration: timings.lockMs,
    stalledInterval: timings.stalledIntervalMs,
    maxStalledCount: timings.maxStalledCount,
    // Kept on each job (processedBy): which worker process applied it.
    name: `${os.hostname()}:${process.pid}`,
    settings: { backoffStrategy: cappedBackoff({ baseMs: config.JOB_RETRY_DELAY, maxMs: config.JOB_RETRY_MAX_DELAY }) },
  };
  const processor: Processor = processorFor(registry, watch);
  // While a dependency is away no job is taken: the held ones wait in hand, the rest in Redis.
  const bullWorkers = new Set<Worker>();
  const lostLocks = new LostLocks(logger);
  const followOutages = (worker: Worker) => void (watch.anyDown ? worker.pause(true) : worker.resume()).catch(() => undefined);
  watch.onChange(() => bullWorkers.forEach(followOutages));
  /** A BullMQ Worker on a connection of its own, closed with it. */
  const startBullWorker = (queue: string, prefix: string, concurrency: number) => {
    const connection = createRedis(target, 'consumer');
    const worker = new Worker(queue, processor, { ...common, prefix, connection, concurrency });
    bullWorkers.add(worker);
    if (watch.anyDown) followOutages(worker);
    // Lost connections and lock renewals that failed during an outage are the watch's to log,
    // once; locks found lost afterwards are counted and reported together.
    worker.on('error', (error) => {
      if (isDependencyUnavailable(error) || watch.anyDown) return void watch.failed(error);
      if (lostLocks.take(error)) return;
      logger.error({ err: error }, 'worker error');
    });
    worker.on('failed', (job, error) => metrics.jobFailed(worker.name, reportJobFailure(logger, job, error)));
    return {
      worker,
      close: async () => {
        bullWorkers.delete(worker);
        await worker.close();
        connection.disconnect();
      },
    };
  };
  const eventConsumer = (prefix: string, concurrency: number): QueueConsumer => {
    // A killed worker's jobs return to waiting once their lock expires, and run again.
    const { worker, close } = startBullWorker(EVENTS_QUEUE, prefix, concurrency);
    // The partition's queue this process already keeps (metrics), for its backlog.
    const partition = events[keys.queuePrefixes.indexOf(prefix)]!;
    return {
      get concurrency() {
        return worker.concurrency;
      },
      set concurrency(jobs: number) {
        worker.concurrency = jobs;
      },
      waiting: () => partition.getWaitingCount(),
      ready: () => worker.waitUntilReady().then(() => undefined),
      close,
    };
  };
  // Every worker consumes the maintenance queue: each scheduled job runs once, on whichever takes it.
  const maintenanceWorker = startBullWorker(MAINTENANCE_QUEUE, keys.maintenanceQueuePrefix, 1);
  // Webhooks on a Worker of their own: a slow receiver holds only these slots, never an event batch's.
  const webhooksWorker = startBullWorker(WEBHOOKS_QUEUE, keys.maintenanceQueuePrefix, config.WEBHOOK_CONCURRENCY);
  const workerId = `${common.name}:${randomBytes(4).toString('hex')}`;
  const consumers = new PartitionConsumers({
    workerId,
    group: new WorkerGroup(redis, keys),
    partitionPrefixes: keys.queuePrefixes,
    concurrency: config.WORKER_CONCURRENCY,
    heartbeatMs: config.WORKER_HEARTBEAT_INTERVAL,
    timeoutMs: config.WORKER_HEARTBEAT_TIMEOUT,
    consume: eventConsumer,
    logger,
    metrics,
  });
  // Subscribed before the first heartbeat, so no announcement of a worker starting beside it is missed.
  const groupChanges = createRedis(target, 'consumer');
  onWorkerGroupChange(groupChanges, keys, () => consumers.groupChanged());
  consumers.start();

  const ready = (async () => {
    await registerSchedules({ maintenance, webhooks }, config);
    const caughtUp = await catchUpTestDataReset({ db: maintenanceDb, redis, keys }, clock());
    if (caughtUp?.ran) logger.info({ period: caughtUp.period, rowsRemoved: caughtUp.rowsRemoved }, 'missed test-data reset caught up');
    const created = await ensurePartitions(maintenanceDb, clock());
    if (created.length > 0) logger.info({ created }, 'monthly partitions created');
  })();
  ready.catch((error: unknown) => logger.error({ err: error }, 'could not set up maintenance schedules'));

  let closed: Promise<void> | undefined;
  const close = async () => {
    // Jobs waiting out an outage give up (BullMQ retries them later) so the held ones settle.
    watch.close();
    const closing = Promise.all([consumers.close(), maintenanceWorker.close(), webhooksWorker.close()]);
    await batcher.drain();
    await closing;
    await ready.catch(() => undefined);
    await Promise.all(queues.map((queue) => queue.close()));
    lostLocks.close();
    redis.disconnect();
    groupChanges.disconnect();
    await Promise.all([db.destroy(), maintenanceDb.destroy(), webhooksDb.destroy(), probeDb.destroy()]);
  };
  return {
    id: workerId,
    partitions: () => consumers.partitions(),
    joined: consumers.joined,
    metrics,
    readiness,
    outages: watch,
    ready,
    close: () => (closed ??= close()),
  };
}
