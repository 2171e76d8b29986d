import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedisCluster } from '../../scripts/redis-cluster';
import globalSetup from './global-setup';

/**
 * The cluster pass (the `cluster` jest project): a 3-master Redis Cluster on loopback ports,
 * handed to its test files as COS_TEST_REDIS_CLUSTER_NODES, and Postgres from global-setup.ts
 * (started once, whichever project's setup runs first).
 */
export default async function clusterGlobalSetup(): Promise<void> {
  await globalSetup();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cos-test-cluster-'));
  const cluster = await startRedisCluster(dir, { durable: false, masters: 3, replicasPerMaster: 0 }).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  (globalThis as { __COS_CLUSTER_TEARDOWN__?: () => Promise<void> }).__COS_CLUSTER_TEARDOWN__ = async () => {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  process.env.COS_TEST_REDIS_CLUSTER_NODES = cluster.nodes;
}
