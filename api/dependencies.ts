import cluster from 'node:cluster';
import type { ApiConfig } from '../shared/config/config';
import { createDb, POOL_SIZE } from '../shared/db/database';
import { readinessCheck } from '../shared/health/readiness';
import { ApiMetrics } from '../shared/metrics/metrics';
import { engine } from '../shared/domain/engine/engine';
import { PopulationCache } from '../shared/population/population-cache.repository';
import { BatchedProducer, MAX_BATCH_ITEMS } from '../shared/jobs/batched-producer';
import { DecisionLog } from '../shared/jobs/decision-log';
import { EventQueues } from '../shared/jobs/event-queues';
import type { Logger } from '../shared/logger/logger';
import { ProfileCache } from '../shared/profile/profile-cache.repository';
import { SettledOutcomes } from '../shared/profile/pending-outcomes.repository';
import { createRedis, keysFor, redisTarget } from '../shared/redis/redis';
import { CredentialChanges } from '../shared/keys/credential-changes.repository';
import { countryResolver } from '../shared/geo/country';
import { TrafficRecorder } from '../shared/traffic/traffic-recorder';
import type { AppDeps } from './app';
import { clusterMetricsText } from './cluster-metrics';
import { CredentialCache } from './auth/credential-cache';
import { authenticate } from './middleware/auth.middleware';
import { meterRefusal, rateLimit } from './middleware/rate-limit.middleware';
import { Limiter } from '../shared/limits/limiter';
import { LimitedProfileRead } from '../shared/limits/limited-read';
import { ContextService } from './services/context.service';
import { OutcomeService } from './services/outcome.service';
import { PopulationLoader } from './services/population-loader';
import { ProfileLoader } from './services/profile-loader';
import { KnownUsers } from './services/known-users';
import type { Learner } from '../shared/domain/learner';
import { ProfileService } from './services/profile.service';

/** Wires the API's dependencies from config; `close` releases every connection. */
export function buildApiDependencies(
  config: ApiConfig,
  logger: Logger,
  /**
   * Injected in tests to cross month boundaries and place requests in the rate limiter's
   * window, and the credentials' grace period; in production the calendar follows Date.now
   * and the window Redis server time.
   */
  clock?: () => number,
): AppDeps & {
  credentials: CredentialCache;
  loader: ProfileLoader;
  decisions: DecisionLog;
  close: () => Promise<void>;
  started: Promise<void>;
} {
  const db = createDb(config.DATABASE_URL, POOL_SIZE.api);
  const target = redisTarget(config);
  const redis = createRedis(target, 'producer');
  const keys = keysFor(config);
  const learner = engine as Learner;
  // BullMQ defines ~40 scripts on its connection, and ioredis copies them into every pipeline
  // made on it: the hot path's own pipelines and transactions (limiter, profile cache, outcome
  // claims) use a connection of their own.
  const queueRedis = createRedis(target, 'producer');
  // Ready once both connections are: a cluster client answers nothing before it has the slot map.
  const readiness = readinessCheck([redis, queueRedis], db);
  const metrics = new ApiMetrics(readiness);
  const queues = new EventQueues(queueRedis, keys);
  const producer = new BatchedProducer(queues, MAX_BATCH_ITEMS, {
    replicas: config.REDIS_WAIT_REPLICAS,
    timeoutMs: config.REDIS_WAIT_TIMEOUT,
  });
  const decisions = new DecisionLog(queues, logger);
  metrics.watchDecisionLog(decisions);
  const cache = new ProfileCache(redis, keys);
  const populations = new PopulationLoader(db, new PopulationCache(redis, keys), learner, logger);
  // One subscriber connection for both channels the API listens to.
  const subscriber = createRedis(target, 'consumer');
  const settled = new SettledOutcomes(subscriber, keys);
  const users = new KnownUsers(keys, config.COS_SECRET);
  const loader = new ProfileLoader(db, cache, learner, populations, settled, users, metrics);
  const credentials = new CredentialCache(db, logger, config.KEY_REFRESH_INTERVAL, clock);
  const firstKeyPoll = credentials.start();
  const changes = new CredentialChanges(subscriber, keys, (change) => credentials.apply(change));
  const limiter = new Limiter(redis, keys, clock);
  const traffic = new TrafficRecorder(redis, keys, countryResolver(), logger, clock);
  traffic.start();

  return {
    /** Resolves once start-up background work (the first key-change poll) is done. */
    started: firstKeyPoll,
    logger,
    credentials,
    loader,
    decisions,
    traffic,
    trustProxy: config.TRUST_PROXY,
    guards: {
      auth: authenticate({
        credentials,
        secret: config.COS_SECRET,
        environments: config.SERVE_ENVIRONMENTS,
        meterRefusal: meterRefusal(limiter, logger),
      }),
      limit: rateLimit({ limiter, limitedRead: new LimitedProfileRead(redis, keys, limiter, cache), logger, metrics }),
    },
    context: new ContextService(loader, populations, learner, decisions, users, config.COS_SECRET),
    outcome: new OutcomeService(redis, keys, producer, config.COS_SECRET, config.OUTCOME_WINDOW, metrics),
    profiles: new ProfileService(db, cache, loader, learner, config.COS_SECRET),
    metrics,
    metricsText: cluster.isWorker ? clusterMetricsText(metrics.registry) : () => metrics.registry.metrics(),
    readiness,
    metricsToken: config.ADMIN_TOKEN,
    close: async () => {
      await credentials.stop();
      await traffic.close();
      producer.close();
      await decisions.close();
      await queues.close();
      queueRedis.disconnect();
      settled.close();
      changes.close();
      redis.disconnect();
      await db.destroy();
    },
  };
}
