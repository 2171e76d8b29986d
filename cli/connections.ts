import { Queue } from 'bullmq';
import type { CliConfig } from '../shared/config/config';
import { EVENTS_QUEUE, type QueueName } from '../shared/jobs/catalog';
import { publishCredentialChange, type CredentialChange } from '../shared/credentials/credential-changes.repository';
import type { RedisKeys } from '../shared/redis/key-names';
import { announceOrWarn } from '../shared/credentials/key-lifecycle';
import { createRedis, keysFor, redisTarget, type RedisClient } from '../shared/redis/redis';

/** The Redis connections and queues a command opens, each for that command alone. */

/**
 * Announces a change already made in Postgres to every API instance over Redis
 * (docs/adr/0004-credential-cache.md); returns a warning when Redis cannot be reached — the
 * change is made, and instances see it within about 2 s of reaching Postgres.
 */
export function announce(config: CliConfig, change: CredentialChange): Promise<string | undefined> {
  return announceOrWarn((announced) => publish(config, announced), change);
}

/** Announces a change on a connection of its own; throws when Redis cannot be reached. */
export async function publish(config: CliConfig, change: CredentialChange): Promise<void> {
  const redis = createRedis(redisTarget(config), 'once');
  try {
    await redis.connect();
    await publishCredentialChange(redis, keysFor(config), change);
  } finally {
    redis.disconnect();
  }
}

/** A Redis connection, with the names of the keys it holds, for the time `run` takes. */
export async function withRedis<T>(config: CliConfig, run: (redis: RedisClient, keys: RedisKeys) => Promise<T>): Promise<T> {
  const redis = createRedis(redisTarget(config), 'consumer');
  try {
    return await run(redis, keysFor(config));
  } finally {
    redis.disconnect();
  }
}

export type { QueueName };

/** The named queue: every partition of the events queue, or the maintenance or webhooks queue. */
export async function withQueues<T>(config: CliConfig, name: QueueName, run: (queues: Queue[]) => Promise<T>): Promise<T> {
  const redis = createRedis(redisTarget(config), 'consumer');
  const keys = keysFor(config);
  const prefixes = name === EVENTS_QUEUE ? keys.queuePrefixes : [keys.maintenanceQueuePrefix];
  const queues = prefixes.map((prefix) => new Queue(name, { connection: redis, prefix }));
  try {
    return await run(queues);
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    redis.disconnect();
  }
}
