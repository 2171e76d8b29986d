import { Redis, type ChainableCommander, type RedisOptions } from 'ioredis';

/**
 * Producers (API, CLI) fail fast while Redis is down so the API can answer 503; consumers
 * (workers) wait for Redis to come back (BullMQ's production guide). Producers pipeline
 * automatically: the commands concurrent requests issue in one event-loop turn leave in one
 * socket write instead of one write each. A `once` client is for one short errand (the CLI's
 * announcements): it connects when `connect()` is called, once, and fails within 2 s if Redis
 * cannot be reached.
 */
export function createRedis(url: string, role: 'producer' | 'consumer' | 'once'): Redis {
  const retry = (attempt: number) => Math.min(attempt * 200, 2000);
  const options: RedisOptions =
    role === 'producer'
      ? {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          commandTimeout: 5000,
          lazyConnect: false,
          enableAutoPipelining: true,
          retryStrategy: retry,
        }
      : role === 'consumer'
        ? { maxRetriesPerRequest: null, enableReadyCheck: true, retryStrategy: retry }
        : { lazyConnect: true, connectTimeout: 2000, commandTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null };
  const client = new Redis(url, options);
  client.on('error', () => undefined); // reported by the callers' failing commands
  return client;
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

export type { Redis };
