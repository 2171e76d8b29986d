import { DelayedError, type Queue } from 'bullmq';
import type { WorkerConfig } from '../shared/config/config';
import type { Db } from '../shared/db/database';
import { JOBS } from '../shared/jobs/catalog';
import type { Logger } from '../shared/logger/logger';
import type { WorkerMetrics } from '../shared/metrics/metrics';
import { AddressGuard, systemResolver, type Resolver } from '../shared/webhooks/address-guard';
import { SecretBox } from '../shared/webhooks/secret-box';
import { attemptDelivery } from '../shared/webhooks/webhook-delivery';
import { relayOutbox } from '../shared/webhooks/webhook-relay';
import type { Handlers } from './registry';

/** What the webhooks queue's handlers work with. */
export interface WebhookDeps {
  /** A pool of its own: deliveries never wait for the batches' connections, nor they for ours. */
  db: Db;
  /** The webhooks queue, where the relay enqueues deliveries. */
  queue: Pick<Queue, 'addBulk'>;
  config: Pick<
    WorkerConfig,
    'COS_SECRET' | 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_DISABLE_AFTER' | 'WEBHOOK_TIMEOUT' | 'WEBHOOK_ALLOWED_ADDRESSES'
  >;
  logger: Logger;
  metrics: Pick<WorkerMetrics, 'webhookAttempted'>;
  clock: () => number;
  resolver?: Resolver;
}

/** The handlers of the webhooks queue: the outbox relay and one delivery's attempt. */
export function webhookHandlers(deps: WebhookDeps): Pick<Handlers, 'webhookRelay' | 'webhookDelivery'> {
  const { db, queue, config, logger, metrics, clock } = deps;
  const delivery = {
    db,
    box: new SecretBox(config.COS_SECRET),
    guard: new AddressGuard(config.WEBHOOK_ALLOWED_ADDRESSES, deps.resolver ?? systemResolver),
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    timeoutMs: config.WEBHOOK_TIMEOUT,
    clock,
    logger,
    observe: (outcome: 'succeeded' | 'failed', latencyMs: number) => metrics.webhookAttempted(outcome, latencyMs),
  };
  const enqueue = async (ids: readonly string[]) => {
    await queue.addBulk(
      ids.map((deliveryId) => ({
        name: 'webhookDelivery',
        data: { deliveryId },
        opts: { ...JOBS.webhookDelivery.options, jobId: JOBS.webhookDelivery.jobId({ deliveryId }) },
      })),
    );
  };
  return {
    webhookRelay: async () => {
      const run = await relayOutbox(db, enqueue, clock());
      return `${run.events} events, ${run.deliveries} deliveries, ${run.enqueued} enqueued`;
    },
    webhookDelivery: async (data, job, token) => {
      const step = await attemptDelivery(delivery, data.deliveryId);
      if (step.kind === 'settled') return step.status;
      // The retry waits in the delayed set as this same job: one job, one delivery, one webhook-id.
      if (token === undefined) throw new Error('a delivery retry needs the job lock token');
      await job.moveToDelayed(Date.now() + step.delayMs, token);
      throw new DelayedError();
    },
  };
}
