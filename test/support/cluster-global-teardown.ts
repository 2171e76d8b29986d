import globalTeardown from './global-teardown';

/** Stops the Redis Cluster of cluster-global-setup.ts, and Postgres unless already stopped. */
export default async function clusterGlobalTeardown(): Promise<void> {
  await (globalThis as { __COS_CLUSTER_TEARDOWN__?: () => Promise<void> }).__COS_CLUSTER_TEARDOWN__?.();
  await globalTeardown();
}
