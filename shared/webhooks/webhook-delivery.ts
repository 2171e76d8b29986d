import { recordAudit } from '../audit/audit.repository';
import type { Db } from '../db/database';
import type { Logger } from '../logger/logger';
import { AddressRefusedError, type AddressGuard } from './address-guard';
import { cancelDelivery, loadDeliveryTask, recordAttempt, type DeliveryStatus } from './delivery.repository';
import { recordEndpointFailure, recordEndpointSuccess, sealedSecrets, updateEndpoint } from './endpoint.repository';
import { failingTimeCap, retryWait } from './failing-time';
import { envelopeBody } from './outbox.repository';
import { SecretUnreadableError, type SecretBox } from './secret-box';
import { signDelivery } from './signature';
import { sendWebhook, type AttemptResult } from './webhook-sender';

/** What a delivery attempt needs; one object, built once per worker. */
export interface DeliveryDeps {
  db: Db;
  box: SecretBox;
  guard: AddressGuard;
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE), in ms. */
  schedule: readonly number[];
  disableAfterMs: number;
  timeoutMs: number;
  clock: () => number;
  logger: Logger;
  /** Counted per attempt, for /metrics. */
  observe?: (outcome: 'succeeded' | 'failed', latencyMs: number) => void;
  send?: typeof sendWebhook;
}

/** After an attempt: settled (nothing more to do), or retried after `delayMs`. */
export type DeliveryStep = { kind: 'settled'; status: DeliveryStatus | 'gone' } | { kind: 'retry'; delayMs: number };

/** The actor of the audit entry written when an endpoint is disabled for failing. */
export const DELIVERY_ACTOR = 'webhook delivery';

/**
 * One attempt of a delivery: signs its event's body, sends it to the checked address and
 * records the outcome. Safe to run again (a worker killed mid-way): a settled delivery is left
 * alone, and a pending one is attempted again with the same `webhook-id`.
 */
export async function attemptDelivery(deps: DeliveryDeps, deliveryId: string): Promise<DeliveryStep> {
  const { db, clock } = deps;
  const task = await loadDeliveryTask(db, deliveryId);
  if (!task) return { kind: 'settled', status: 'gone' };
  const { delivery, event, endpoint } = task;
  if (delivery.status !== 'pending') return { kind: 'settled', status: delivery.status };
  // An owner's test event and a redelivery may reach a disabled endpoint: that is how it is checked before enabling it again.
  if (!endpoint.enabled && delivery.cause === 'event') {
    await cancelDelivery(db, delivery.id, 'the endpoint was disabled before this delivery was attempted');
    return { kind: 'settled', status: 'cancelled' };
  }
  const at = new Date(clock());
  const secrets = await readSecrets(deps, endpoint.id, at);
  if (secrets instanceof SecretUnreadableError) {
    await recordAttempt(db, delivery.id, {
      at,
      status: 'failed',
      responseStatus: null,
      latencyMs: null,
      error: secrets.message,
      nextAttemptAt: null,
    });
    deps.logger.error(
      { endpointId: endpoint.id, deliveryId: delivery.id },
      'webhook signing secret unreadable; rotate the endpoint secret',
    );
    return { kind: 'settled', status: 'failed' };
  }
  const result = await send(deps, endpoint.url, { eventId: event.id, at, body: envelopeBody(event), secrets });
  deps.observe?.(result.ok ? 'succeeded' : 'failed', result.latencyMs);
  const attempt = delivery.attempts + 1;
  return db.transaction().execute(async (tx): Promise<DeliveryStep> => {
    const outcome = { at, responseStatus: result.status, latencyMs: result.latencyMs, error: result.error };
    if (result.ok) {
      await recordAttempt(tx, delivery.id, { ...outcome, status: 'succeeded', nextAttemptAt: null });
      await recordEndpointSuccess(tx, endpoint.id);
      return { kind: 'settled', status: 'succeeded' };
    }
    const failingMs = await recordEndpointFailure(tx, endpoint.id, at, failingTimeCap(deps.schedule, attempt));
    if (endpoint.enabled && failingMs >= deps.disableAfterMs) {
      const days = Math.round((deps.disableAfterMs / 86_400_000) * 10) / 10;
      const reason = `Disabled after failing for ${days} days (last attempt: ${result.error ?? 'failed'})`;
      await updateEndpoint(tx, { accountId: event.accountId, endpointId: endpoint.id }, { enabled: { enabled: false, reason, at } });
      await recordAudit(tx, {
        accountId: event.accountId,
        actor: DELIVERY_ACTOR,
        action: 'webhook.auto-disable',
        environment: event.environment,
        subject: endpoint.url,
        country: null,
      });
      await recordAttempt(tx, delivery.id, { ...outcome, status: 'failed', nextAttemptAt: null });
      return { kind: 'settled', status: 'failed' };
    }
    const wait = retryWait(deps.schedule, attempt);
    if (wait === null) {
      await recordAttempt(tx, delivery.id, { ...outcome, status: 'failed', nextAttemptAt: null });
      return { kind: 'settled', status: 'failed' };
    }
    await recordAttempt(tx, delivery.id, { ...outcome, status: 'pending', nextAttemptAt: new Date(at.getTime() + wait) });
    return { kind: 'retry', delayMs: wait };
  });
}

/** The secrets that sign now: the current one, and the previous one during its overlap. */
async function readSecrets(deps: DeliveryDeps, endpointId: string, at: Date): Promise<string[] | SecretUnreadableError> {
  const sealed = await sealedSecrets(deps.db, endpointId);
  if (!sealed) return new SecretUnreadableError('the endpoint has no signing secret');
  try {
    const secrets = [deps.box.open(sealed.secret, endpointId)];
    if (sealed.previousSecret && sealed.previousSecretExpiresAt && sealed.previousSecretExpiresAt > at) {
      secrets.push(deps.box.open(sealed.previousSecret, endpointId));
    }
    return secrets;
  } catch (error) {
    if (error instanceof SecretUnreadableError) return error;
    throw error;
  }
}

async function send(deps: DeliveryDeps, url: string, signing: Parameters<typeof signDelivery>[0]): Promise<AttemptResult> {
  const target = new URL(url);
  let address;
  try {
    address = await deps.guard.check(target);
  } catch (error) {
    if (error instanceof AddressRefusedError) return { ok: false, status: null, latencyMs: 0, error: `refused: ${error.message}` };
    throw error;
  }
  const headers = signDelivery(signing);
  return (deps.send ?? sendWebhook)({ url: target, address, headers: { ...headers }, body: signing.body, timeoutMs: deps.timeoutMs });
}
