import { Cluster, Redis, type ChainableCommander, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redisKeys, type KeyLayout, type RedisKeys } from './key-names';
import { UserHashes } from '../ids/user-hash';
import { coalesceWrites } from './coalesced-writes';

/** One Redis node, or a Redis Cluster: every repository takes either. */
export type RedisClient = Redis | Cluster;

type HostPort = { host: string; port: number };

/**
 * Where Redis is: a node's URL, or a cluster's seed nodes (`REDIS_CLUSTER_NODES`), with where
 * each node is reached when that is not the address it announces, and the nodes' credentials.
 */
export type RedisTarget = string | { clusterNodes: HostPort[]; natMap?: Record<string, HostPort>; username?: string; password?: string };

/** The Redis settings every role's config carries. */
export interface RedisConfig {
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: HostPort[];
  REDIS_CLUSTER_NAT_MAP?: Record<string, HostPort>;
  REDIS_CLUSTER_USERNAME?: string;
  REDIS_CLUSTER_PASSWORD?: string;
  QUEUE_PARTITIONS: number;
  COS_REDIS_PREFIX: string;
  COS_SECRET: string;
}

export function redisTarget(
  config: Pick<
    RedisConfig,
    'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_CLUSTER_NAT_MAP' | 'REDIS_CLUSTER_USERNAME' | 'REDIS_CLUSTER_PASSWORD'
  >,
): RedisTarget {
  if (!config.REDIS_CLUSTER_NODES) return config.REDIS_URL!;
  return {
    clusterNodes: config.REDIS_CLUSTER_NODES,
    natMap: config.REDIS_CLUSTER_NAT_MAP,
    username: config.REDIS_CLUSTER_USERNAME,
    password: config.REDIS_CLUSTER_PASSWORD,
  };
}

/** The key layout of a deployment (docs/adr/0014-redis-cluster-partitions.md). */
export function keyLayout(config: RedisConfig): KeyLayout {
  const hashes = new UserHashes(config.COS_SECRET);
  return {
    cluster: config.REDIS_CLUSTER_NODES !== undefined,
    queuePartitions: config.QUEUE_PARTITIONS,
    userHash: (tenant, userId) => hashes.of(tenant, userId),
  };
}

export function keysFor(config: RedisConfig): RedisKeys {
  return redisKeys(config.COS_REDIS_PREFIX, keyLayout(config));
}

/**
 * Producers (API, dashboard, CLI) fail fast while Redis is down or hangs so a request can answer
 * 503 within its deadline: a command waits at most `commandTimeoutMs` (docs/adr/0018-deadlines.md).
 * Consumers (workers) wait for Redis to come back (BullMQ's production guide). Every role's
 * commands of one event-loop turn leave in one socket write (coalesced-writes.ts), not through
 * ioredis's auto-pipelining: that builds a pipeline object per turn, which cost the API more CPU
 * than the socket writes it saves and kept each turn's commands alive into V8's old generation,
 * lengthening its GC pauses (docs/BENCHMARKS.md, "Static paths"). A `once` client is for one short errand (the CLI's
 * announcements): it connects when `connect()` is called, once, and fails within 2 s if Redis
 * cannot be reached.
 */
export function createRedis(target: RedisTarget, role: 'producer' | 'consumer' | 'once', commandTimeoutMs = 1000): RedisClient {
  const retry = (attempt: number) => Math.min(attempt * 200, 2000);
  const options: RedisOptions =
    role === 'producer'
      ? {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          commandTimeout: commandTimeoutMs,
          lazyConnect: false,
          retryStrategy: retry,
        }
      : role === 'consumer'
        ? { maxRetriesPerRequest: null, enableReadyCheck: true, retryStrategy: retry }
        : { lazyConnect: true, connectTimeout: 2000, commandTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null };
  const client = typeof target === 'string' ? new Redis(target, options) : createCluster(target, options);
  client.on('error', () => undefined); // reported by the callers' failing commands
  coalesceWrites(client);
  return client;
}

/**
 * A cluster client with the node options of its role. Its offline queue stays on, also for
 * producers: without it, a command for a master whose connection is still opening (a process
 * just started, a replica just promoted) fails at once, where on one node it would have gone
 * out. The node command timeout bounds a producer's wait while a master is replaced; while the
 * whole cluster is unreachable its commands wait for it, and a request is answered 503 at its
 * deadline (docs/SCALING.md#redis).
 */
function createCluster(target: Exclude<RedisTarget, string>, options: RedisOptions): Cluster {
  const { enableOfflineQueue: _nodeQueue, retryStrategy, enableAutoPipelining, lazyConnect, ...nodeOptions } = options;
  const redisOptions = { ...nodeOptions, username: target.username, password: target.password };
  const clusterOptions: ClusterOptions = {
    redisOptions,
    natMap: target.natMap,
    enableAutoPipelining: enableAutoPipelining ?? false,
    enableOfflineQueue: true,
    enableReadyCheck: true,
    lazyConnect: lazyConnect ?? false,
    clusterRetryStrategy: retryStrategy === undefined ? (attempt) => Math.min(attempt * 200, 2000) : retryStrategy,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 2000,
  };
  return new Cluster(target.clusterNodes, clusterOptions);
}

/**
 * Runs a pipeline and throws the first command error (ioredis reports them per command);
 * returns the commands' replies in order.
 */
export async function execPipeline(pipeline: ChainableCommander): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
  return results.map(([, reply]) => reply);
}

/**
 * Commands whose keys may lie in different slots, in one round trip on a node. A cluster
 * pipeline must stay in one slot, so there each command is a pipeline of its own, all sent at
 * once.
 */
export async function execEach(redis: RedisClient, commands: Array<(pipeline: ChainableCommander) => void>): Promise<void> {
  if (commands.length === 0) return;
  if (redis instanceof Cluster) {
    await Promise.all(
      commands.map((command) => {
        const pipeline = redis.pipeline();
        command(pipeline);
        return execPipeline(pipeline);
      }),
    );
    return;
  }
  const pipeline = redis.pipeline();
  for (const command of commands) command(pipeline);
  await execPipeline(pipeline);
}

/** Every key matching `pattern`: on a cluster, scanned on every master. */
export async function scanKeys(redis: RedisClient, pattern: string, onKeys: (node: Redis, keys: string[]) => Promise<void>): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (found.length > 0) await onKeys(node, found);
    } while (cursor !== '0');
  }
}

export type { Redis };
