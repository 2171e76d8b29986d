import type { Redis } from 'ioredis';

/**
 * Redis memory of the idempotency records a load run left (every POST of bench:load carries a
 * key): records and the users' indexes, by MEMORY USAGE, per record and per million keyed
 * requests, for docs/SCALING.md.
 */
export interface IdempotencyMemory {
  records: number;
  /** Records measured one by one (a sample of all when there are many). */
  sampled: number;
  bytesPerRecord: number;
  /** The users' indexes, spread over the records they list. */
  indexBytesPerRecord: number;
  mbPerMillionRequests: number;
}

const SAMPLE = 5000;

async function scan(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

async function usage(redis: Redis, keys: string[]): Promise<number> {
  const pipeline = redis.pipeline();
  for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0);
  const answers = (await pipeline.exec()) ?? [];
  return answers.reduce((sum, [, bytes]) => sum + Number(bytes ?? 0), 0);
}

export async function idempotencyMemory(redis: Redis): Promise<IdempotencyMemory> {
  const records = await scan(redis, '*:idem:*');
  const indexes = await scan(redis, '*:idem-index:*');
  const step = Math.max(1, Math.floor(records.length / SAMPLE));
  const sample = records.filter((_, i) => i % step === 0);
  const bytesPerRecord = sample.length ? (await usage(redis, sample)) / sample.length : 0;
  const indexBytesPerRecord = records.length ? (await usage(redis, indexes)) / records.length : 0;
  return {
    records: records.length,
    sampled: sample.length,
    bytesPerRecord: Math.round(bytesPerRecord),
    indexBytesPerRecord: Math.round(indexBytesPerRecord),
    mbPerMillionRequests: Math.round(((bytesPerRecord + indexBytesPerRecord) * 1e6) / 2 ** 20),
  };
}
