import { errorCode, PG_RETRYABLE_TRANSACTION } from '../errors/pg-errors';

/** Runs of a transaction that keeps losing deadlocks or serialization conflicts, in all. */
export const TRANSACTION_ATTEMPTS = 3;
/** The wait before the first rerun; each further rerun waits twice as long. */
export const RETRY_BASE_DELAY_MS = 20;

export interface RetryOptions {
  attempts?: number;
  baseDelayMs?: number;
  /** In [0, 1); injected by tests. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The wait before rerun `rerun` (1 for the first): the base doubled per rerun, times a random
 * factor in [½, 1), so two transactions that deadlocked do not meet again in step.
 */
export function backoffMs(rerun: number, baseDelayMs = RETRY_BASE_DELAY_MS, random: () => number = Math.random): number {
  return baseDelayMs * 2 ** (rerun - 1) * (0.5 + random() / 2);
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `run` (a whole transaction) again after a backoff when Postgres rolled it back for a deadlock or serialization conflict. */
export async function retryTransaction<T>(run: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { attempts = TRANSACTION_ATTEMPTS, baseDelayMs = RETRY_BASE_DELAY_MS, random = Math.random, sleep = wait } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const code = errorCode(error);
      if (!code || !PG_RETRYABLE_TRANSACTION.has(code) || attempt >= attempts) throw error;
      await sleep(backoffMs(attempt, baseDelayMs, random));
    }
  }
}
