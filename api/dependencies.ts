import cluster from 'node:cluster';
import type { ApiConfig } from '../shared/config/config';
import { createDb, requestPoolSettings } from '../shared/db/database';
import { DependencyWatch, outageAwareLogger } from '../shared/health/dependency-watch';
import { dependencyProbes, probePool, readinessCheck, requestProbeTimeout } from '../shared/health/readiness';
import { ApiMetrics, dependencyOutageMetrics } from '../shared/metrics/metrics';
import { createEngine } from '../shared/domain/engine/engine';
import { PopulationCache } from '../shared/population/population-cache.repository';
import { BatchedProducer, MAX_BATCH_ITEMS } from '../shared/jobs/batched-producer';
import { DecisionLog } from '../shared/jobs/decision-log';
import { EventQueues } from '../shared/jobs/event-queues';
import type { Logger } from '../shared/logger/logger';
import { ProfileCache } from '../shared/profile/profile-cache.repository';
import { SettledOutcomes } from '../shared/profile/pending-outcomes.repository';
import { OutcomeClaims } from '../shared/profile/outcome-claims.repository';
import { createRedis, keysFor, redisTarget } from '../shared/redis/redis';
import { CredentialChanges } from '../shared/credentials/credential-changes.repository';
import { countryResolver } from '../shared/geo/country';
import { TrafficRecorder } from '../shared/traffic/traffic-recorder';
import type { AppDeps } from './app';
import { clusterMetricsText } from './cluster-metrics';
import { CredentialCache } from './auth/credential-cache';
import { authenticate } from './middleware/auth.middleware';
import { meterRefusal, rateLimit } from './middleware/rate-limit.middleware';
import { Limiter } from '../shared/limits/limiter';
import { AdmissionLeases } from '../shared/limits/admission-leases';
import { LimitedProfileRead } from '../shared/limits/limited-read';
import { ContextService } from './services/context.service';
import { OutcomeService } from './services/outcome.service';
import { PopulationLoader } from './services/population-loader';
import { ProfileLoader } from './services/profile-loader';
import { KnownUsers } from './services/known-users';
import { ProfileService } from './services/profile.service';
import { IdempotentPosts } from './services/idempotent-posts';
import { IdempotencyRecords } from '../shared/idempotency/idempotency.repository';

/** Postgres connections per API process: it serves many requests at once. */
const API_POOL_SIZE = 20;

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
  const db = createDb(config.DATABASE_URL, requestPoolSettings(API_POOL_SIZE, config.REQUEST_DEADLINE));
  const probeTimeoutMs = requestProbeTimeout(config.REQUEST_DEADLINE);
  const probeDb = createDb(config.DATABASE_URL, probePool(probeTimeoutMs));
  const target = redisTarget(config);
  // A command waits at most half a request's deadline (docs/adr/0018-deadlines.md).
  const redisTimeoutMs = Math.ceil(config.REQUEST_DEADLINE / 2);
  const redis = createRedis(target, 'producer', redisTimeoutMs);
  const keys = keysFor(config);
  // One engine for the process: its calls never wait, so concurrent requests take turns with it.
  const learner = createEngine();
  // BullMQ defines ~40 scripts on its connection, and ioredis copies them into every pipeline
  // made on it: the hot path's own pipelines and transactions (limiter, profile cache, outcome
  // claims) use a connection of their own.
  const queueRedis = createRedis(target, 'producer', redisTimeoutMs);
  // Ready once both connections are: a cluster client answers nothing before it has the slot map.
  const probes = dependencyProbes([redis, queueRedis], probeDb, probeTimeoutMs);
  const readiness = readinessCheck(probes);
  const watch = new DependencyWatch({ probes, logger });
  // Dependency failures of background and per-request work are logged by the watch, once per outage.
  const quiet = outageAwareLogger(logger, watch);
  const metrics = new ApiMetrics(readiness);
  dependencyOutageMetrics(metrics.registry, watch);
  const queues = new EventQueues(queueRedis, keys);
  const producer = new BatchedProducer(queues, MAX_BATCH_ITEMS, {
    replicas: config.REDIS_WAIT_REPLICAS,
    timeoutMs: config.REDIS_WAIT_TIMEOUT,
  });
  const decisions = new DecisionLog(queues, quiet);
  metrics.watchDecisionLog(decisions);
  const cache = new ProfileCache(redis, keys);
  const populations = new PopulationLoader({ db, cache: new PopulationCache(redis, keys), learner, logger: quiet });
  // The subscriber connection of the settled-outcome channel.
  const subscriber = createRedis(target, 'consumer');
  const settled = new SettledOutcomes(subscriber, keys);
  const users = new KnownUsers(keys, config.COS_SECRET);
  const loader = new ProfileLoader({ db, cache, learner, populations, settled, users, metrics });
  const credentials = new CredentialCache({
    db,
    logger,
    refreshMs: config.KEY_REFRESH_INTERVAL,
    clock,
    postgres: {
      down: () => watch.status('postgres') === 'unavailable',
      failed: (error) => void watch.failed(error),
    },
  });
  const firstKeyPoll = credentials.start();
  // Its own connection: a blocking stream read holds it, and the subscriber's cannot read streams.
  const changes = new CredentialChanges({ reader: createRedis(target, 'consumer'), keys, listener: credentials, clock });
  const limiter = new Limiter(redis, keys, clock);
  const leases = new AdmissionLeases({ redis, keys, logger: quiet, clock });
  leases.start();
  const idempotencyRecords = new IdempotencyRecords(redis, keys);
  const traffic = new TrafficRecorder({ redis, keys, countries: countryResolver(), logger: quiet, clock });
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
    watch,
    requestDeadlineMs: config.REQUEST_DEADLINE,
    guards: {
      auth: authenticate({
        credentials,
        secret: config.COS_SECRET,
        environments: config.SERVE_ENVIRONMENTS,
        meterRefusal: meterRefusal(limiter, quiet),
      }),
      limit: rateLimit({ limiter, leases, limitedRead: new LimitedProfileRead({ redis, keys, limiter, cache }), logger: quiet, metrics }),
    },
    context: new ContextService({ profiles: loader, populations, learner, decisions, users, secret: config.COS_SECRET }),
    outcome: new OutcomeService({
      claims: new OutcomeClaims(redis, keys, config.OUTCOME_WINDOW),
      producer,
      secret: config.COS_SECRET,
      windowMs: config.OUTCOME_WINDOW,
      metrics,
    }),
    profiles: new ProfileService({ db, cache, loader, learner, idempotency: idempotencyRecords, secret: config.COS_SECRET, logger: quiet }),
    idempotency: new IdempotentPosts({
      records: idempotencyRecords,
      windowMs: config.IDEMPOTENCY_WINDOW,
      leaseMs: config.REQUEST_DEADLINE,
      logger: quiet,
    }),
    metrics,
    metricsText: cluster.isWorker ? clusterMetricsText(metrics.registry) : () => metrics.registry.metrics(),
    readiness,
    metricsToken: config.ADMIN_TOKEN,
    close: async () => {
      await credentials.stop();
      await traffic.close();
      await leases.close();
      producer.close();
      await decisions.close();
      await queues.close();
      queueRedis.disconnect();
      settled.close();
      changes.close();
      redis.disconnect();
      watch.close();
      await Promise.all([db.destroy(), probeDb.destroy()]);
    },
  };
}
