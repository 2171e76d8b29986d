import type { Db } from '../shared/db/database';
import { ensurePartitions } from '../shared/db/partitions';
import type { Logger } from '../shared/logger/logger';
import type { WorkerMetrics } from '../shared/metrics/metrics';
import type { RedisKeys } from '../shared/redis/key-names';
import { resetTestData } from '../shared/test-data/test-data-reset';
import { detectPatterns } from '../shared/traffic/patterns/pattern-job';
import { flushTraffic } from '../shared/traffic/traffic-flush';
import { pruneTraffic } from '../shared/traffic/traffic-retention';
import { flushUsage, type FlushStores } from '../shared/usage/usage-flush';
import { utcMonth } from '../shared/util/calendar';
import { markRotationDue } from '../shared/credentials/rotation-due';
import { pruneWebhooks } from '../shared/webhooks/webhook-retention';
import type { Handlers } from './registry';

/** What the scheduled upkeep works with. */
export interface MaintenanceDeps {
  /** The worker's Redis connection, as the flushes take it. */
  redis: FlushStores['redis'];
  keys: RedisKeys;
  /** The batch pool: flushes and traffic upkeep are short. */
  db: Db;
  /** The maintenance pool, whose deadline fits a month's reset and partition upkeep. */
  maintenanceDb: Db;
  logger: Logger;
  metrics: Pick<WorkerMetrics, 'usageFlushRun'>;
  clock: () => number;
  /** How long webhook deliveries and relayed outbox events are kept (WEBHOOK_RETENTION). */
  webhookRetentionMs: number;
}

type MaintenanceJob =
  | 'usageFlush'
  | 'trafficFlush'
  | 'trafficRetention'
  | 'trafficPatterns'
  | 'partitionUpkeep'
  | 'testDataReset'
  | 'keyRotationScan'
  | 'webhookRetention';

/** The handlers of the maintenance queue's jobs, each returning the line kept on its job. */
export function maintenanceHandlers(deps: MaintenanceDeps): Pick<Handlers, MaintenanceJob> {
  const { redis, keys, db, maintenanceDb, logger, metrics, clock, webhookRetentionMs } = deps;
  return {
    usageFlush: async () => {
      const result = await flushUsage({ redis, keys, db }).catch((error: unknown) => {
        metrics.usageFlushRun(false);
        throw error;
      });
      metrics.usageFlushRun(true);
      return `flushed ${result.snapshots} snapshots, ${result.rows} rows`;
    },
    trafficFlush: async () => {
      const result = await flushTraffic({ redis, keys, db });
      return `flushed ${result.snapshots} traffic snapshots, ${result.rows} rows`;
    },
    trafficRetention: async () => JSON.stringify(await pruneTraffic(db, clock())),
    trafficPatterns: async () => {
      const run = await detectPatterns(db, clock());
      return run ? `${run.keys} keys, ${run.findings} findings, ${run.created} new` : 'another run holds the lock';
    },
    partitionUpkeep: async () => {
      const created = await ensurePartitions(maintenanceDb, clock());
      if (created.length > 0) logger.info({ created }, 'monthly partitions created');
      return created.length > 0 ? `created ${created.join(', ')}` : 'partitions up to date';
    },
    keyRotationScan: async () => `${await markRotationDue(db, clock())} keys due for rotation`,
    webhookRetention: async () => JSON.stringify(await pruneWebhooks(maintenanceDb, clock(), webhookRetentionMs)),
    testDataReset: async () => {
      const result = await resetTestData(
        { db: maintenanceDb, redis, keys },
        { trigger: 'schedule', period: utcMonth(clock()), now: clock() },
      );
      if (result.ran) logger.info({ period: result.period, rowsRemoved: result.rowsRemoved }, 'monthly test-data reset done');
      return result.ran ? `reset ${result.period}: ${JSON.stringify(result.rowsRemoved)}` : `reset ${result.period} already done`;
    },
  };
}
