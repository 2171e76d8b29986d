import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { redisKeys } from '../../shared/cache/keys';
import { createDb, type Db } from '../../shared/db/database';
import { withDatabase } from './global-setup';

export const TEST_SECRET = 'test-secret-0123456789abcdef';

export interface TestEnv {
  databaseUrl: string;
  redisUrl: string;
  /** A Redis key prefix of this test file's own (queues and caches). */
  prefix: string;
  db: Db;
  redis: Redis;
  keys: ReturnType<typeof redisKeys>;
  /** Environment for spawned api/worker/cli processes of this file. */
  processEnv(extra?: Record<string, string>): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** A fresh database copied from the migrated template, and a unique Redis prefix. */
export async function createTestEnv(): Promise<TestEnv> {
  const adminUrl = process.env.COS_TEST_ADMIN_URL!;
  const template = process.env.COS_TEST_TEMPLATE_DB!;
  const name = `cos_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${template}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, name);
  const redisUrl = process.env.COS_TEST_REDIS_URL!;
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const db = createDb(databaseUrl, 5);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  return {
    databaseUrl,
    redisUrl,
    prefix,
    db,
    redis,
    keys: redisKeys(prefix),
    processEnv: (extra = {}) => ({
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      COS_SECRET: TEST_SECRET,
      COS_REDIS_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      // Spawned workers of parallel test files would share the default port.
      METRICS_PORT: '0',
      ...extra,
    }),
    close: async () => {
      await db.destroy();
      redis.disconnect();
    },
  };
}
