import type { BackoffStrategy } from 'bullmq';

/**
 * How failed jobs are retried (docs/adr/0002-exactly-once-outcomes.md): without an end, ever
 * less often up to a cap, so an outage of Postgres or Redis of any length ends with every job
 * applied and none waiting for an operator. Only a job that can never succeed — its own data
 * is bad — is parked (the worker throws UnrecoverableError for it).
 */
export const RETRY_BACKOFF = 'capped-exponential';

/** BullMQ wants a number of attempts: this one lasts about 2,000 years at a 30 s cap. */
export const UNBOUNDED_ATTEMPTS = 2 ** 31 - 1;

export interface RetrySchedule {
  /** Delay before the second attempt; each later one waits twice as long… */
  baseMs: number;
  /** …up to this. */
  maxMs: number;
}

/**
 * Delay before the next attempt of a job that has failed `attemptsMade` times:
 * baseMs·2^(attemptsMade−1), at most maxMs, less up to a fifth at random so that the jobs of
 * a backlog that failed together do not all come back in the same instant.
 */
export function retryDelay(schedule: RetrySchedule, attemptsMade: number, random: () => number = Math.random): number {
  const exponential = schedule.baseMs * 2 ** Math.min(Math.max(0, attemptsMade - 1), 40);
  const capped = Math.min(schedule.maxMs, exponential);
  return Math.max(1, Math.round(capped * (1 - 0.2 * random())));
}

/** The worker's BullMQ backoff strategy for jobs whose backoff type is RETRY_BACKOFF. */
export function cappedBackoff(schedule: RetrySchedule): BackoffStrategy {
  return (attemptsMade) => retryDelay(schedule, attemptsMade);
}
