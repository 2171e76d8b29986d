import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, type LocalServiceOptions, type ServiceProcess } from './local-services';

/** A Redis Cluster of local nodes on loopback ports (tests, the failover test, npm start). */
export interface LocalRedisCluster {
  /** `host:port,…` of every node, for REDIS_CLUSTER_NODES. */
  nodes: string;
  servers: ServiceProcess[];
  stop(): Promise<void>;
}

/** How long a master may be unreachable before its replica takes over. */
const NODE_TIMEOUT_MS = 1000;

/**
 * Starts `masters × (1 + replicasPerMaster)` redis-server nodes in cluster mode and joins them
 * with `redis-cli --cluster create`; resolves once every node reports the cluster ok.
 */
export async function startRedisCluster(
  dataDir: string,
  options: LocalServiceOptions & { masters: number; replicasPerMaster: number },
): Promise<LocalRedisCluster> {
  const servers: ServiceProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop('kill')));
  };
  try {
    for (let i = 0; i < options.masters * (1 + options.replicasPerMaster); i++) {
      servers.push(
        await startRedis(path.join(dataDir, `node-${i}`), options, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(NODE_TIMEOUT_MS),
        ]),
      );
    }
    const addresses = servers.map((server) => new URL(server.url).host);
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', String(options.replicasPerMaster), '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stderr}${created.stdout}`);
    await Promise.all(servers.map((server) => clusterReady(server.url, options.masters * (1 + options.replicasPerMaster))));
    return { nodes: addresses.join(','), servers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Waits until a node sees the cluster ok, with every node known and every replica in sync. */
async function clusterReady(url: string, nodes: number): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const info = await client.cluster('INFO');
      const known = Number(/cluster_known_nodes:(\d+)/.exec(info)?.[1] ?? 0);
      if (/cluster_state:ok/.test(info) && known === nodes && (await replicaInSync(client))) return;
      if (Date.now() > deadline) throw new Error(`Redis Cluster node ${url} not ready: ${info}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    client.disconnect();
  }
}

async function replicaInSync(client: Redis): Promise<boolean> {
  const replication = await client.info('replication');
  if (!/role:slave/.test(replication)) return true;
  return /master_link_status:up/.test(replication) && !/master_sync_in_progress:1/.test(replication);
}
