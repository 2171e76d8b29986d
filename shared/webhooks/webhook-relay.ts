import { sql } from 'kysely';
import type { Db } from '../db/database';
import { markEnqueued, newDeliveryId, unenqueuedDeliveries } from './delivery.repository';

export interface RelayRun {
  /** Outbox events fanned out in this run. */
  events: number;
  /** Deliveries made for them (one per enabled, subscribed endpoint of the event's account and environment). */
  deliveries: number;
  /** Deliveries handed to the queue (these and any left by an earlier run, a test event or a redelivery). */
  enqueued: number;
}

/** Hands deliveries to the webhooks queue, one job each, the job id the delivery id. */
export type EnqueueDeliveries = (deliveryIds: readonly string[]) => Promise<void>;

const BATCH = 500;

/**
 * The outbox relay (docs/adr/0021-webhooks.md). 1: in one transaction, takes events not yet
 * relayed (rows another worker's relay holds are skipped), makes one delivery per enabled
 * endpoint of the event's own account and environment subscribed to its type, and marks the
 * events relayed. 2: enqueues every delivery not yet enqueued and marks it. A crash between
 * the two leaves the deliveries for the next run; a job enqueued twice has one id, so it runs
 * once, and a delivery already settled is not attempted again.
 */
export async function relayOutbox(db: Db, enqueue: EnqueueDeliveries, now: number): Promise<RelayRun> {
  const run: RelayRun = { events: 0, deliveries: 0, enqueued: 0 };
  for (;;) {
    const fanned = await fanOut(db, now);
    run.events += fanned.events;
    run.deliveries += fanned.deliveries;
    if (fanned.events < BATCH) break;
  }
  for (;;) {
    const ids = await unenqueuedDeliveries(db, BATCH);
    if (ids.length === 0) break;
    await enqueue(ids);
    await markEnqueued(db, ids, new Date(now));
    run.enqueued += ids.length;
    if (ids.length < BATCH) break;
  }
  return run;
}

async function fanOut(db: Db, now: number): Promise<{ events: number; deliveries: number }> {
  return db.transaction().execute(async (tx) => {
    const events = await tx
      .selectFrom('webhook_events')
      .select(['id'])
      .where('relayed_at', 'is', null)
      .orderBy('occurred_at')
      .limit(BATCH)
      .forUpdate()
      .skipLocked()
      .execute();
    if (events.length === 0) return { events: 0, deliveries: 0 };
    const eventIds = events.map((event) => event.id);
    // Tenant isolation lives here: an event reaches only endpoints of its own account and environment.
    const targets = await tx
      .selectFrom('webhook_events as e')
      .innerJoin('webhook_endpoints as w', (join) =>
        join.onRef('w.account_id', '=', 'e.account_id').onRef('w.environment', '=', 'e.environment'),
      )
      .select(['e.id as event_id', 'w.id as endpoint_id', 'e.account_id'])
      .where('e.id', 'in', eventIds)
      .where('w.enabled', '=', true)
      .where(sql<boolean>`e.type = any(w.event_types)`)
      .execute();
    if (targets.length > 0) {
      await tx
        .insertInto('webhook_deliveries')
        .values(
          targets.map((target) => ({
            id: newDeliveryId(),
            event_id: target.event_id,
            endpoint_id: target.endpoint_id,
            account_id: target.account_id,
            cause: 'event' as const,
          })),
        )
        .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).where('cause', '=', 'event').doNothing())
        .execute();
    }
    await tx
      .updateTable('webhook_events')
      .set({ relayed_at: new Date(now) })
      .where('id', 'in', eventIds)
      .execute();
    return { events: events.length, deliveries: targets.length };
  });
}
