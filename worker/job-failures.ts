import { UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from '../shared/logger/logger';

/**
 * What becomes of a job whose attempt failed (docs/adr/0002-exactly-once-outcomes.md): it is
 * retried without an end (shared/jobs/retry.ts) unless it can never succeed — an invalid
 * payload, data Postgres refuses, a requestId that holds no decision — and is then parked in
 * the failed set with a log line to alert on.
 */

/** The log message of a parked job: alert on it, or on cos_worker_jobs_failed_total{final="true"}. */
export const PARKED_MESSAGE = 'job parked in the failed set: it will not be retried';

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

/**
 * Logs a failed attempt (the worker's `failed` event, after BullMQ has retried or parked the
 * job) and tells whether it was the job's last (the worker counts it in its metrics). A parked
 * job logs at error level; one to be retried at warn on its 1st, 2nd, 4th, 8th … failure, so a
 * long outage does not flood the log.
 */
export function reportJobFailure(logger: Logger, job: Job | undefined, error: Error): boolean {
  if (!job) {
    logger.error({ err: error }, 'a job failed');
    return false;
  }
  const fields = { jobId: job.id, name: job.name, queue: job.queueName, attempts: job.attemptsMade };
  const unrecoverable = error instanceof UnrecoverableError || error.name === 'UnrecoverableError';
  if (!unrecoverable && job.attemptsMade < (job.opts.attempts ?? 1)) {
    if (isPowerOfTwo(job.attemptsMade)) logger.warn({ ...fields, retryInMs: job.delay, err: error }, 'job failed; will retry');
    return false;
  }
  if (job.opts.removeOnFail === true) {
    logger.warn({ ...fields, err: error }, 'job failed and was dropped: its next scheduled run does the same work');
    return true;
  }
  logger.error({ ...fields, reason: error.message }, PARKED_MESSAGE);
  return true;
}
