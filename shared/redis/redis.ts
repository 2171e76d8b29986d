import { Redis, type ChainableCommander, type RedisOptions } from 'ioredis';

/**
 * Producers (API, CLI) fail fast while Redis is down so the API can answer 503; consumers
 * (workers) wait for Redis to come back (BullMQ's production guide). Producers pipeline
 * automatically: the commands concurrent requests issue in one event-loop turn leave in one
 * socket write instead of one write each.
 */
export function createRedis(url: string, role: 'producer' | 'consumer'): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          commandTimeout: 5000,
          lazyConnect: false,
          enableAutoPipelining: true,
        }
      : { maxRetriesPerRequest: null, enableReadyCheck: true };
  const client = new Redis(url, {
    ...options,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
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
