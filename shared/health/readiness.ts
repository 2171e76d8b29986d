import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { RedisClient } from '../redis/redis';

export type DependencyStatus = 'ok' | 'unavailable';

export interface Readiness {
  ready: boolean;
  checks: { redis: DependencyStatus; postgres: DependencyStatus };
}

/** A probe must answer even while a connection hangs: a check slower than this counts as down. */
export const CHECK_TIMEOUT_MS = 2000;

/** The promise's value, or `undefined` when it takes longer than `ms` (or fails). */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

const check = async (probe: () => Promise<unknown>): Promise<DependencyStatus> =>
  (await settleWithin(
    probe().then(() => 'ok' as const),
    CHECK_TIMEOUT_MS,
  )) ?? 'unavailable';

/**
 * Whether this process reaches Redis (`PING`, on each of its connections given) and Postgres
 * (`select 1`), checked in parallel.
 */
export function readinessCheck(redis: RedisClient | RedisClient[], db: Db): () => Promise<Readiness> {
  const clients = Array.isArray(redis) ? redis : [redis];
  return async () => {
    const [redisStatus, postgres] = await Promise.all([
      // A worker's connection queues commands while Redis is away instead of failing them:
      // a connection that is not ready is reported at once.
      check(() =>
        Promise.all(
          clients.map((client) => (client.status === 'ready' ? client.ping() : Promise.reject(new Error(`redis ${client.status}`)))),
        ),
      ),
      check(() => sql`select 1`.execute(db)),
    ]);
    return { ready: redisStatus === 'ok' && postgres === 'ok', checks: { redis: redisStatus, postgres } };
  };
}

/**
 * Resolves `true` once `check` reports ready, polling every `intervalMs`; `false` when it has
 * not within `timeoutMs`.
 */
export async function untilReady(
  check: () => Promise<Readiness>,
  { timeoutMs, intervalMs }: { timeoutMs: number; intervalMs: number },
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await check()).ready) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
  }
}
