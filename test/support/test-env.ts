import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Cluster, Redis } from 'ioredis';
import { redisKeys } from '../../shared/redis/key-names';
import { keyLayout, type RedisClient } from '../../shared/redis/redis';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { withDatabase } from './global-setup';
import { DEFAULT_QUEUE_PARTITIONS } from '../../shared/config/config';

export const TEST_SECRET = 'test-secret-0123456789abcdef';

export interface TestEnv {
  databaseUrl: string;
  redisUrl: string;
  /** The Redis Cluster's nodes (`host:port,…`) in the cluster pass (jest project `cluster`). */
  clusterNodes?: string;
  /** A Redis key prefix of this test file's own (queues and caches). */
  prefix: string;
  db: Db;
  redis: RedisClient;
  keys: ReturnType<typeof redisKeys>;
  /** The metered usage of a day for these API keys (on a cluster, merged from their usage shards). */
  usage(day: string, ...keyIds: string[]): Promise<Record<string, string>>;
  /** Every key matching a glob, on one node or on every master of a cluster (KEYS reaches one node). */
  keysMatching(pattern: string): Promise<string[]>;
  /** Environment for spawned api/worker/cli processes of this file. */
  processEnv(extra?: Record<string, string>): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/**
 * A fresh database copied from the migrated template, and a unique Redis prefix. In the cluster
 * pass Redis is the pass's cluster, or the one at `clusterNodes` (a test's own cluster).
 */
export async function createTestEnv(options: { clusterNodes?: string } = {}): Promise<TestEnv> {
  const adminUrl = process.env.COS_TEST_ADMIN_URL!;
  const template = process.env.COS_TEST_TEMPLATE_DB!;
  const name = `cos_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${template}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, name);
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const db = createDb(databaseUrl, { ...DB_ROLES.tool, poolSize: 5 });
  const clusterNodes =
    options.clusterNodes ?? (process.env.COS_TEST_REDIS_MODE === 'cluster' ? process.env.COS_TEST_REDIS_CLUSTER_NODES! : undefined);
  const nodes = clusterNodes?.split(',').map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
  // On the cluster, REDIS_URL names one of its nodes (for the few tests that speak to one node).
  const redisUrl = nodes ? `redis://${nodes[0]!.host}:${nodes[0]!.port}` : process.env.COS_TEST_REDIS_URL!;
  const redis = nodes
    ? new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })
    : new Redis(redisUrl, { maxRetriesPerRequest: null });
  const keys = nodes
    ? redisKeys(
        prefix,
        keyLayout({
          COS_REDIS_PREFIX: prefix,
          COS_SECRET: TEST_SECRET,
          REDIS_CLUSTER_NODES: nodes,
          QUEUE_PARTITIONS: DEFAULT_QUEUE_PARTITIONS,
        }),
      )
    : redisKeys(prefix);
  return {
    databaseUrl,
    redisUrl,
    clusterNodes,
    prefix,
    db,
    redis,
    keys,
    usage: async (day, ...keyIds) => {
      // Every shard: a key meters into its account's, which the caller need not know.
      const shards = Array.from({ length: keys.usageShards }, (_, shard) => shard);
      const all: Record<string, string> = Object.assign(
        {},
        ...(await Promise.all(shards.map((shard) => redis.hgetall(keys.usage(day, shard))))),
      );
      return Object.fromEntries(Object.entries(all).filter(([field]) => keyIds.includes(field.split('|')[0]!)));
    },
    keysMatching: async (pattern) => {
      const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
      return (await Promise.all(nodes.map((node) => node.keys(pattern)))).flat();
    },
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
      // The tests reach the processes at 127.0.0.1, whatever HOST the shell exports (tcsh sets it).
      HOST: '127.0.0.1',
      // The suite's other processes are not an API answering users: a worker yielding the CPU
      // to them only makes the tests that wait on it slower on a loaded machine.
      WORKER_NICE: '0',
      DASHBOARD_NICE: '0',
      ...(clusterNodes ? { REDIS_CLUSTER_NODES: clusterNodes } : {}),
      // In the cluster pass, a test pointing REDIS_URL elsewhere (a dead port: Redis unreachable)
      // points the cluster's seed there too; the seed list is what a cluster client uses.
      ...(clusterNodes && extra.REDIS_URL && !extra.REDIS_CLUSTER_NODES ? { REDIS_CLUSTER_NODES: new URL(extra.REDIS_URL).host } : {}),
      ...extra,
    }),
    close: async () => {
      await db.destroy();
      redis.disconnect();
    },
  };
}
