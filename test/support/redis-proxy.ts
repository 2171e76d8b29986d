import { Redis } from 'ioredis';
import type { RedisTarget } from '../../shared/redis/redis';
import { startCountingProxy, type CountingProxy } from './counting-proxy';
import type { TestEnv } from './test-env';

/**
 * The test's Redis behind counting proxies — one node behind one, or every node of a cluster
 * behind one each, the cluster client pointed at them with a NAT map (REDIS_CLUSTER_NAT_MAP), as
 * a deployment behind NAT is — so that a suite counts, cuts or hangs Redis the same way in both
 * passes.
 */
export interface RedisProxy {
  /** The environment that makes a process reach Redis through the proxies. */
  env: Record<string, string>;
  /** The same, for `createRedis`. */
  target: RedisTarget;
  /** Redis commands sent through every proxy since the last `reset` (per proxy, in order). */
  commands(): string[];
  writes(): number;
  reset(): void;
  interrupt(): Promise<void>;
  hold(): void;
  release(): void;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedisProxy(env: Pick<TestEnv, 'redisUrl' | 'clusterNodes'>): Promise<RedisProxy> {
  if (!env.clusterNodes) {
    const proxy = await startCountingProxy(env.redisUrl);
    return { ...over([proxy]), env: { REDIS_URL: proxy.url }, target: proxy.url };
  }
  const nodes = await clusterNodeAddresses(env.clusterNodes.split(',')[0]!);
  const proxies = await Promise.all(nodes.map((node) => startCountingProxy(`redis://${node}`)));
  const reached = proxies.map((proxy) => new URL(proxy.url));
  const natMap = Object.fromEntries(nodes.map((node, i) => [node, { host: reached[i]!.hostname, port: Number(reached[i]!.port) }]));
  const seeds = reached.map((url) => `${url.hostname}:${url.port}`);
  return {
    ...over(proxies),
    env: {
      REDIS_CLUSTER_NODES: seeds.join(','),
      REDIS_CLUSTER_NAT_MAP: nodes.map((node, i) => `${node}=${seeds[i]}`).join(','),
    },
    target: { clusterNodes: Object.values(natMap), natMap },
  };
}

/** Every node of the cluster, as it announces itself (`host:port`). */
export async function clusterNodeAddresses(seed: string): Promise<string[]> {
  const [host, port] = seed.split(':');
  const client = new Redis(Number(port), host!, { lazyConnect: true });
  try {
    await client.connect();
    const lines = ((await client.call('CLUSTER', 'NODES')) as string).split('\n').filter(Boolean);
    // `<id> <host:port@cport> <flags> …`; a node that failed is left out.
    return lines.filter((line) => !line.split(' ')[2]!.includes('fail')).map((line) => line.split(' ')[1]!.split('@')[0]!);
  } finally {
    client.disconnect();
  }
}

function over(proxies: CountingProxy[]): Omit<RedisProxy, 'env' | 'target'> {
  return {
    commands: () => proxies.flatMap((proxy) => proxy.commands()),
    writes: () => proxies.reduce((sum, proxy) => sum + proxy.writes(), 0),
    reset: () => proxies.forEach((proxy) => proxy.reset()),
    interrupt: async () => void (await Promise.all(proxies.map((proxy) => proxy.interrupt()))),
    hold: () => proxies.forEach((proxy) => proxy.hold()),
    release: () => proxies.forEach((proxy) => proxy.release()),
    resume: async () => void (await Promise.all(proxies.map((proxy) => proxy.resume()))),
    close: async () => void (await Promise.all(proxies.map((proxy) => proxy.close()))),
  };
}
