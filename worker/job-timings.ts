import type { PoolSettings } from '../shared/db/database';

/**
 * The most a batch may take per event it carries — engine CPU and Postgres together — with room
 * over what the worker benchmark measures, so that no setting below is met by a healthy batch.
 */
const EVENT_ALLOWANCE_MS = 1;
/** The least a batch is allowed, however small the largest batch is configured. */
const MIN_BATCH_MS = 5_000;

/** A job's lock, how often stalled jobs are looked for, and how often one may stall before it is parked. */
export interface JobTimings {
  /** The longest a batch of the largest size may take. */
  batchMs: number;
  /** A job's lock; renewed every half of it while the worker holds the job. */
  lockMs: number;
  /** How often a worker looks for jobs whose lock expired (their worker died) and returns them to waiting. */
  stalledIntervalMs: number;
  /**
   * Stalls a job may have before it is parked. A stall is a worker dying with the job, or a Redis
   * outage longer than the lock; an outcome applied twice is applied once
   * (docs/adr/0002-exactly-once-outcomes.md), so only a job that keeps killing its workers must
   * end up parked.
   */
  maxStalledCount: number;
  /**
   * Postgres's deadline for one statement of a batch: a statement that hangs ends, while the
   * batch's locks are renewed (the event loop is free while it waits).
   */
  statementMs: number;
}

/**
 * Every lock and stall setting of the event jobs, derived from the largest batch
 * (WORKER_BATCH_SIZE) so that a change of batch size keeps them consistent
 * (docs/adr/0018-deadlines.md): a lock outlasts three of the longest batches, so the renewal
 * every half lock survives an event loop busy with a whole batch.
 */
export function jobTimings(maxBatch: number): JobTimings {
  const batchMs = Math.max(MIN_BATCH_MS, maxBatch * EVENT_ALLOWANCE_MS);
  const lockMs = 3 * batchMs;
  return { batchMs, lockMs, stalledIntervalMs: batchMs, maxStalledCount: 50, statementMs: lockMs };
}

/** The worker's batch connections: a few transactions at a time, each statement within the batch deadline. */
export function batchPoolSettings(timings: JobTimings): PoolSettings {
  return { poolSize: 10, connectMs: 5_000, statementMs: timings.statementMs };
}
