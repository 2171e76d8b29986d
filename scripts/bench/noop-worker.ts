import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';

/**
 * The process bench:worker's no-op baseline spawns: a plain BullMQ Worker whose processor does
 * nothing, on the one queue the bench filled, until SIGTERM. What BullMQ itself costs per job
 * on this machine, the floor under any worker of ours.
 */

const env = z
  .object({
    REDIS_URL: z.string().url(),
    NOOP_QUEUE: z.string().min(1),
    NOOP_PREFIX: z.string().min(1),
    NOOP_CONCURRENCY: z.coerce.number().int().min(1),
  })
  .parse(process.env);

const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
const worker = new Worker(env.NOOP_QUEUE, async () => undefined, {
  connection,
  prefix: env.NOOP_PREFIX,
  concurrency: env.NOOP_CONCURRENCY,
});
worker.on('error', (error) => process.stderr.write(`no-op worker: ${error.message}\n`));

process.once('SIGTERM', () => {
  void worker.close().finally(() => {
    connection.disconnect();
    process.exit(0);
  });
});
