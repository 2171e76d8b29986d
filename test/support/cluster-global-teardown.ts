/** Stops the Redis Cluster of cluster-global-setup.ts and removes its data. */
export default async function clusterGlobalTeardown(): Promise<void> {
  await (globalThis as { __COS_CLUSTER_TEARDOWN__?: () => Promise<void> }).__COS_CLUSTER_TEARDOWN__?.();
}
