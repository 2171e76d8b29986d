import { sql } from 'kysely';
import type { Db, PoolSettings } from '../db/database';
import type { RedisClient } from '../redis/redis';

/**
 * A dependency as a probe finds it: answering, not answering within the probe's deadline, or —
 * Postgres only — answering but refusing writes (a standby, or `default_transaction_read_only`).
 */
export type DependencyStatus = 'ok' | 'unavailable' | 'read-only';
export type Dependency = 'redis' | 'postgres';
export const DEPENDENCIES: readonly Dependency[] = ['redis', 'postgres'];

export interface Readiness {
  ready: boolean;
  checks: Record<Dependency, DependencyStatus>;
}

/**
 * A probe must answer even while a connection hangs: a check slower than this counts as down
 * (less in a process whose requests have a shorter deadline, so /readyz answers within it).
 */
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

/** One probe per dependency, each answering within its time-out. */
export type DependencyProbes = Record<Dependency, () => Promise<DependencyStatus>>;

/**
 * Redis: `PING` on each of the connections given. Postgres: whether a new transaction may write
 * there, on `probeDb` — a pool of its own, so a probe still gets a connection while the
 * process's other connections hang on a frozen server.
 */
export function dependencyProbes(redis: RedisClient | RedisClient[], probeDb: Db, timeoutMs = CHECK_TIMEOUT_MS): DependencyProbes {
  const clients = Array.isArray(redis) ? redis : [redis];
  const within = async (probe: () => Promise<DependencyStatus>): Promise<DependencyStatus> =>
    (await settleWithin(probe(), timeoutMs)) ?? 'unavailable';
  return {
    // A worker's connection queues commands while Redis is away instead of failing them:
    // a connection that is not ready is reported at once.
    redis: () =>
      within(async () => {
        await Promise.all(
          clients.map((client) => (client.status === 'ready' ? client.ping() : Promise.reject(new Error(`redis ${client.status}`)))),
        );
        return 'ok';
      }),
    postgres: () =>
      within(async () => {
        const { rows } = await sql<{ writable: boolean }>`select not pg_is_in_recovery()
          and current_setting('transaction_read_only') = 'off' as writable`.execute(probeDb);
        return rows[0]?.writable ? 'ok' : 'read-only';
      }),
  };
}

/** GET /readyz: every dependency probed in parallel; ready only when each is `ok`. */
export function readinessCheck(probes: DependencyProbes): () => Promise<Readiness> {
  return async () => {
    const [redis, postgres] = await Promise.all([probes.redis(), probes.postgres()]);
    return { ready: redis === 'ok' && postgres === 'ok', checks: { redis, postgres } };
  };
}

/** A pool of one for probes (see `dependencyProbes`), its waits bounded by the probe's time-out. */
export const probePool = (timeoutMs = CHECK_TIMEOUT_MS): PoolSettings => ({
  poolSize: 1,
  connectMs: timeoutMs,
  // The client's read deadline (a fifth later) then ends a hung probe before the probe gives up,
  // so the next probe finds the connection free.
  statementMs: Math.floor(timeoutMs * 0.8),
});

/** The probe time-out of a process whose requests have `requestDeadlineMs`: /readyz answers within it. */
export const requestProbeTimeout = (requestDeadlineMs: number): number =>
  Math.min(CHECK_TIMEOUT_MS, Math.floor((requestDeadlineMs * 3) / 4));

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
