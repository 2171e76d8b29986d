import type { Db } from '../../shared/db/database';
import type { Environment } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import { findDelivery, type WebhookDelivery } from '../../shared/webhooks/delivery.repository';
import type { EndpointRef, WebhookEndpoint } from '../../shared/webhooks/endpoint.repository';
import type { WebhookActor, WebhookEndpoints } from '../../shared/webhooks/webhook-endpoints.service';

/** How many deliveries the endpoint's page lists at once; `before` pages back. */
export const DELIVERY_PAGE_SIZE = 50;

/**
 * Words the delivery worker (shared/webhooks/webhook-delivery.ts) starts its reason with when it
 * disables an endpoint for failing; an owner's or operator's reason starts "Disabled by". Checked
 * against the worker's real reason in test/integration/dashboard-webhooks.test.ts.
 */
const FAILING_REASON_PREFIX = 'Disabled after failing';

/** The endpoint was turned off by the delivery worker after failing for days, not by a person. */
export const disabledForFailing = (endpoint: WebhookEndpoint): boolean =>
  !endpoint.enabled && (endpoint.disabledReason ?? '').startsWith(FAILING_REASON_PREFIX);

/** An endpoint as a webhook page names it: the viewer's account, the page's environment and its id. */
export interface PageEndpointRef extends EndpointRef {
  environment: Environment;
}

const notFound = (id: string) => new AppError('NOT_FOUND', `No webhook endpoint ${id} in this account and environment`);

/**
 * The webhook pages' view of the shared endpoint service: every endpoint is looked up in the
 * page's environment too (a test endpoint under /webhooks/live is not found), and a redelivery
 * only of a delivery of the endpoint whose page asked for it.
 */
export class Webhooks {
  constructor(
    private readonly db: Db,
    readonly endpoints: WebhookEndpoints,
  ) {}

  list(accountId: string, environment: Environment): Promise<WebhookEndpoint[]> {
    return this.endpoints.list(accountId, environment);
  }

  /** The endpoint of this account and environment; any other is "not found", whoever owns it. */
  async own(ref: PageEndpointRef): Promise<WebhookEndpoint> {
    const { accountId, endpointId } = ref;
    const endpoint = await this.endpoints.get({ accountId, endpointId }).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'NOT_FOUND') return null;
      throw error;
    });
    if (!endpoint || endpoint.environment !== ref.environment) throw notFound(endpointId);
    return endpoint;
  }

  /** A page of the endpoint's deliveries, newest first (after the delivery `before`), and whether older ones follow. */
  async deliveries(ref: PageEndpointRef, before?: string): Promise<{ deliveries: WebhookDelivery[]; hasOlder: boolean }> {
    await this.own(ref);
    const { accountId, endpointId } = ref;
    const found = await this.endpoints.deliveries({ accountId, endpointId }, { limit: DELIVERY_PAGE_SIZE + 1, before });
    return { deliveries: found.slice(0, DELIVERY_PAGE_SIZE), hasOlder: found.length > DELIVERY_PAGE_SIZE };
  }

  /** Delivers a past delivery of this endpoint again (same body and webhook-id); another endpoint's delivery is not found. */
  async redeliver(ref: PageEndpointRef, deliveryId: string, actor: WebhookActor): Promise<WebhookDelivery> {
    await this.own(ref);
    const delivery = { accountId: ref.accountId, deliveryId };
    const past = await findDelivery(this.db, delivery);
    if (!past || past.endpointId !== ref.endpointId) throw new AppError('NOT_FOUND', `No delivery ${deliveryId} of this endpoint`);
    return this.endpoints.redeliver(delivery, actor);
  }
}
