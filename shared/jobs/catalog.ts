import { z } from 'zod';
import { choiceSchema } from '../domain/arms';
import { environmentSchema } from '../domain/environment';
import { loggedContextSchema, selectionProbabilitiesSchema } from '../domain/learner';
import { outcomeSignalsSchema } from '../domain/reward';
import type { JobsOptions } from 'bullmq';
import { RETRY_BACKOFF, UNBOUNDED_ATTEMPTS } from './retry';

/**
 * The typed job catalog: for each job its name, payload schema, queue, default options and
 * dedup key (the BullMQ job id). Jobs carry ids and the change, never secrets.
 */
export const EVENTS_QUEUE = 'events';
/**
 * Scheduled upkeep: usage and traffic flushes, traffic retention and patterns, the monthly
 * test-data reset, the monthly partitions (one at a time per worker).
 */
export const MAINTENANCE_QUEUE = 'maintenance';
/**
 * Webhooks: the outbox relay and one job per delivery, on a queue and BullMQ Worker of their own
 * with their own concurrency, so a slow receiver never delays decisions, outcomes or upkeep
 * (docs/adr/0021-webhooks.md).
 */
export const WEBHOOKS_QUEUE = 'webhooks';
export const QUEUES = [EVENTS_QUEUE, MAINTENANCE_QUEUE, WEBHOOKS_QUEUE] as const;
export type QueueName = (typeof QUEUES)[number];

const tenant = { accountId: z.string(), environment: environmentSchema };

export const decisionJobSchema = z.object({
  ...tenant,
  requestId: z.string(),
  userId: z.string(),
  generation: z.string(),
  context: loggedContextSchema,
  choice: choiceSchema,
  probabilities: selectionProbabilitiesSchema,
  explored: z.array(z.string()),
  confidence: z.number(),
  issuedAt: z.number(),
});
export type DecisionJob = z.infer<typeof decisionJobSchema>;
export type { LoggedContext } from '../domain/learner';

export const outcomeJobSchema = z.object({
  ...tenant,
  requestId: z.string(),
  signals: outcomeSignalsSchema,
  metadata: z.record(z.string(), z.unknown()).optional(),
  receivedAt: z.number(),
});
export type OutcomeJob = z.infer<typeof outcomeJobSchema>;

/**
 * Group commit (docs/adr/0010-group-commit.md): the API collects the decisions, and the
 * outcomes, that arrive within one event-loop turn and enqueues each group as one job, its
 * batch id the job's id. Decisions travel for the decision log only: an outcome carries its
 * own decision, sealed in its requestId.
 */
export const decisionBatchJobSchema = z.object({
  batchId: z.string().regex(/^[0-9a-f]{16}$/),
  decisions: z.array(decisionJobSchema).min(1),
});
export type DecisionBatchJob = z.infer<typeof decisionBatchJobSchema>;

export const outcomeBatchJobSchema = z.object({
  batchId: z.string().regex(/^[0-9a-f]{16}$/),
  outcomes: z.array(outcomeJobSchema).min(1),
});
export type OutcomeBatchJob = z.infer<typeof outcomeBatchJobSchema>;

/**
 * Retried until they succeed, with the worker's capped backoff (shared/jobs/retry.ts): a job
 * reaches the failed set only when it is parked for bad data, and stays there 30 days.
 */
const retrying: JobsOptions = {
  attempts: UNBOUNDED_ATTEMPTS,
  backoff: { type: RETRY_BACKOFF },
  removeOnComplete: { count: 1000, age: 3600 },
  removeOnFail: { age: 30 * 86_400 },
};

const upkeepHistory: JobsOptions = { removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } };
/**
 * Upkeep that the next tick redoes (a failed flush leaves the counts in Redis): a few quick
 * retries ride out a blip, then the job is dropped rather than kept as a failure.
 */
const redoneNextTick: JobsOptions = { ...upkeepHistory, attempts: 3, backoff: { type: 'exponential', delay: 2000 }, removeOnFail: true };

export const usageFlushJobSchema = z.object({});
export const testDataResetJobSchema = z.object({});
export const trafficFlushJobSchema = z.object({});
export const trafficRetentionJobSchema = z.object({});
export const trafficPatternsJobSchema = z.object({});
export const partitionUpkeepJobSchema = z.object({});
export const keyRotationScanJobSchema = z.object({});
export const webhookRelayJobSchema = z.object({});
export const webhookRetentionJobSchema = z.object({});
export const webhookDeliveryJobSchema = z.object({ deliveryId: z.string().regex(/^dlv_[0-9A-Za-z]{20}$/) });
export type WebhookDeliveryJob = z.infer<typeof webhookDeliveryJobSchema>;

export const JOBS = {
  decisions: {
    queue: EVENTS_QUEUE,
    schema: decisionBatchJobSchema,
    options: retrying,
    jobId: (data: Pick<DecisionBatchJob, 'batchId'>) => `decisions-${data.batchId}`,
  },
  outcomes: {
    queue: EVENTS_QUEUE,
    schema: outcomeBatchJobSchema,
    options: retrying,
    jobId: (data: Pick<OutcomeBatchJob, 'batchId'>) => `outcomes-${data.batchId}`,
  },
  usageFlush: {
    queue: MAINTENANCE_QUEUE,
    schema: usageFlushJobSchema,
    options: redoneNextTick,
    /** Run by a job scheduler every USAGE_FLUSH_INTERVAL; flushes are idempotent. */
    scheduler: { id: 'usage-flush', every: 'USAGE_FLUSH_INTERVAL' },
    jobId: null,
  },
  testDataReset: {
    queue: MAINTENANCE_QUEUE,
    schema: testDataResetJobSchema,
    // A month's reset is never given up: retried like events until Postgres takes it.
    options: { ...retrying, ...upkeepHistory },
    /** 00:00 UTC on the 1st of every month; the reset itself runs once per month. */
    scheduler: { id: 'test-data-reset', pattern: '0 0 1 * *', tz: 'UTC' },
    jobId: null,
  },
  /** Dashboard traffic, Redis → Postgres exactly once (docs/adr/0012-traffic-recording.md). */
  trafficFlush: {
    queue: MAINTENANCE_QUEUE,
    schema: trafficFlushJobSchema,
    options: redoneNextTick,
    /** Every USAGE_FLUSH_INTERVAL, with the usage flush; flushes are idempotent. */
    scheduler: { id: 'traffic-flush', every: 'USAGE_FLUSH_INTERVAL' },
    jobId: null,
  },
  /** Deletes traffic rows past their retention (14 days of minutes, 400 days of hours). */
  trafficRetention: {
    queue: MAINTENANCE_QUEUE,
    schema: trafficRetentionJobSchema,
    options: redoneNextTick,
    scheduler: { id: 'traffic-retention', pattern: '23 * * * *', tz: 'UTC' },
    jobId: null,
  },
  /** Unusual-pattern rules over recent traffic (shared/traffic/patterns/). */
  trafficPatterns: {
    queue: MAINTENANCE_QUEUE,
    schema: trafficPatternsJobSchema,
    options: redoneNextTick,
    scheduler: { id: 'traffic-patterns', pattern: '*/5 * * * *', tz: 'UTC' },
    jobId: null,
  },
  /** Attaches the coming months' partitions of the large tables (docs/adr/0013-monthly-partitions.md). */
  partitionUpkeep: {
    queue: MAINTENANCE_QUEUE,
    schema: partitionUpkeepJobSchema,
    // Idempotent, and months ahead of need: a failed run (a lock timeout) is redone the next day.
    options: redoneNextTick,
    /** Daily: each month's partition exists weeks before its first row. */
    scheduler: { id: 'partition-upkeep', pattern: '17 3 * * *', tz: 'UTC' },
    jobId: null,
  },
  /** Marks live keys turning 90 days old and records their `key.rotation_due` events (shared/credentials/rotation-due.ts). */
  keyRotationScan: {
    queue: MAINTENANCE_QUEUE,
    schema: keyRotationScanJobSchema,
    // Marks each key once: a failed run is redone by the next day's.
    options: redoneNextTick,
    scheduler: { id: 'key-rotation-scan', pattern: '41 2 * * *', tz: 'UTC' },
    jobId: null,
  },
  /** Deletes delivery rows and relayed outbox events past WEBHOOK_RETENTION. */
  webhookRetention: {
    queue: MAINTENANCE_QUEUE,
    schema: webhookRetentionJobSchema,
    options: redoneNextTick,
    scheduler: { id: 'webhook-retention', pattern: '47 3 * * *', tz: 'UTC' },
    jobId: null,
  },
  /** Fans the outbox's new events out to their endpoints' deliveries and enqueues them (shared/webhooks/webhook-relay.ts). */
  webhookRelay: {
    queue: WEBHOOKS_QUEUE,
    schema: webhookRelayJobSchema,
    // Idempotent: what one run leaves, the next takes.
    options: redoneNextTick,
    scheduler: { id: 'webhook-relay', every: 'WEBHOOK_RELAY_INTERVAL' },
    jobId: null,
  },
  /**
   * One delivery: attempts it, and waits out its retry schedule in the delayed set under the same
   * job (job id = delivery id, so a relay that runs twice never doubles it). Receiver failures
   * are the delivery's own retries (WEBHOOK_RETRY_SCHEDULE); a failure of ours is retried like
   * any job.
   */
  webhookDelivery: {
    queue: WEBHOOKS_QUEUE,
    schema: webhookDeliveryJobSchema,
    options: { ...retrying, removeOnComplete: { count: 1000, age: 3600 }, removeOnFail: { age: 7 * 86_400 } },
    jobId: (data: WebhookDeliveryJob) => data.deliveryId,
  },
} as const;

/**
 * When a scheduled job runs: every so many milliseconds (the worker setting named), or on a
 * cron pattern in a time zone. Every worker registers each catalog schedule at start
 * (worker/schedules.ts); BullMQ runs each tick once, on whichever worker takes it.
 */
export type Schedule =
  { id: string; every: 'USAGE_FLUSH_INTERVAL' | 'WEBHOOK_RELAY_INTERVAL' } | { id: string; pattern: string; tz: string };

/** Jobs enqueued by the API (the others are created by job schedulers, or the relay, in the worker). */
export type ProducedJobName = 'decisions' | 'outcomes';

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = z.infer<(typeof JOBS)[N]['schema']>;
export const JOB_NAMES = Object.keys(JOBS) as JobName[];
