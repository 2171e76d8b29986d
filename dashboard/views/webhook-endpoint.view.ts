import type { WebhookDelivery } from '../../shared/webhooks/delivery.repository';
import type { WebhookEndpoint } from '../../shared/webhooks/endpoint.repository';
import { DAY_MS, formatSecond, formatTime } from './format';
import { html, type Html } from './html';
import { formFields, notice, page, type PageNotice, type Viewer } from './layout';
import { disabledNotice, ENVIRONMENT_NOTE, eventTypeFields, shownSecret, type EndpointForm, type ShownSecret } from './webhooks.view';

export interface EndpointPageInput {
  viewer: Viewer;
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  now: number;
  /** The page of the log shown: the delivery it starts after, and whether older ones follow. */
  before?: string;
  hasOlder: boolean;
  shown?: ShownSecret;
  message?: PageNotice | undefined;
  form?: EndpointForm;
}

const CAUSES: Record<WebhookDelivery['cause'], string> = { event: 'event', test: 'test event', redelivery: 'redelivery' };

/** How long an endpoint has been failing, as people say it. */
function failingFor(ms: number): string {
  if (ms < 3_600_000) return 'less than an hour';
  if (ms < 2 * DAY_MS) return `${Math.floor(ms / 3_600_000)} h`;
  return `${Math.floor((ms / DAY_MS) * 10) / 10} days`;
}

function facts(endpoint: WebhookEndpoint, now: number): Html {
  return html`<dl class="key-facts">
    <dt>URL</dt>
    <dd>${endpoint.url}</dd>
    <dt>Environment</dt>
    <dd data-environment="${endpoint.environment}">${endpoint.environment}</dd>
    <dt>Event types</dt>
    <dd>${endpoint.eventTypes.join(', ')}</dd>
    <dt>Status</dt>
    <dd>
      ${endpoint.enabled ? 'enabled' : 'disabled'}${
        endpoint.enabled && endpoint.failingMs !== null
          ? html` — failing for ${failingFor(endpoint.failingMs)}; it is disabled after 3 days of failures`
          : ''
      }
    </dd>
    <dt>Created</dt>
    <dd>${formatTime(endpoint.createdAt)}</dd>
    ${
      endpoint.previousSecretExpiresAt && Date.parse(endpoint.previousSecretExpiresAt) > now
        ? html`<dt>Previous secret</dt>
            <dd>signs too until ${formatTime(endpoint.previousSecretExpiresAt)}</dd>`
        : ''
    }
  </dl>`;
}

/** An owner's changes: edit, enable or disable, send a test event, rotate the secret, delete. */
function ownerActions(endpoint: WebhookEndpoint, viewer: Viewer, form: EndpointForm | undefined): Html {
  const base = `/webhooks/${endpoint.environment}/${endpoint.id}`;
  return html`<section class="card" aria-labelledby="actions-title">
      <h2 id="actions-title">Check and change</h2>
      <div class="button-row">
        <form method="post" action="${base}/test" class="inline">
          ${formFields(viewer)}<button type="submit">Send a test event</button>
        </form>
        <form method="post" action="${base}/${endpoint.enabled ? 'disable' : 'enable'}" class="inline">
          ${formFields(viewer)}<button type="submit" class="${endpoint.enabled ? 'secondary' : ''}">
            ${endpoint.enabled ? 'Disable' : 'Enable'}
          </button>
        </form>
        <a class="button secondary" href="${base}/rotate-secret">Rotate secret</a>
        <a class="button danger" href="${base}/delete">Delete</a>
      </div>
      <p class="hint">A test event goes to this endpoint alone, also while it is disabled: check a receiver before enabling it.</p>
    </section>
    <section class="card" aria-labelledby="edit-title">
      <h2 id="edit-title">Edit</h2>
      <form method="post" action="${base}" class="stack">
        ${formFields(viewer)}
        <label for="edit-url">URL</label>
        <input id="edit-url" name="url" type="url" required maxlength="2048" value="${form?.url ?? endpoint.url}" />
        ${eventTypeFields('edit', form?.eventTypes ?? endpoint.eventTypes)}
        <button type="submit">Save</button>
      </form>
    </section>`;
}

function statusCell(delivery: WebhookDelivery): Html {
  const kind = { pending: 'expiring', succeeded: 'active', failed: 'revoked', cancelled: 'revoked' }[delivery.status];
  return html`<span class="status ${kind}">${delivery.status}</span>${
      delivery.lastError ? html`<br /><small>${delivery.lastError}</small>` : ''
    }`;
}

function deliveryRow(delivery: WebhookDelivery, endpoint: WebhookEndpoint, viewer: Viewer): Html {
  const owner = viewer.user.role === 'owner';
  return html`<tr data-delivery-id="${delivery.id}" data-status="${delivery.status}">
    <td data-label="Created">${formatSecond(delivery.createdAt)}</td>
    <td data-label="Event type"><code>${delivery.eventType}</code><br /><small>${CAUSES[delivery.cause]}</small></td>
    <td data-label="webhook-id"><code>${delivery.eventId}</code></td>
    <td data-label="Status">${statusCell(delivery)}</td>
    <td data-label="Response">${delivery.responseStatus ?? '—'}</td>
    <td data-label="Latency">${delivery.latencyMs === null ? '—' : `${delivery.latencyMs} ms`}</td>
    <td data-label="Attempts">${delivery.attempts}</td>
    <td data-label="Next retry">${formatSecond(delivery.nextAttemptAt)}</td>
    ${
      owner
        ? html`<td data-label="Actions" class="actions">
            <form
              method="post"
              action="/webhooks/${endpoint.environment}/${endpoint.id}/deliveries/${delivery.id}/redeliver"
              class="inline"
            >
              ${formFields(viewer)}<button type="submit" aria-label="Redeliver ${delivery.eventType} ${delivery.eventId}">Redeliver</button>
            </form>
          </td>`
        : ''
    }
  </tr>`;
}

function deliveryLog(input: EndpointPageInput): Html {
  const { endpoint, deliveries, viewer } = input;
  const owner = viewer.user.role === 'owner';
  const base = `/webhooks/${endpoint.environment}/${endpoint.id}`;
  const oldest = deliveries.at(-1);
  return html`<section aria-labelledby="log-title">
    <h2 id="log-title">Deliveries</h2>
    <p class="hint">
      Newest first. A redelivery sends the same body with the same <code>webhook-id</code> again, as a delivery of its own; retries follow
      an exponential backoff over about 3 days.
    </p>
    ${
      deliveries.length === 0
        ? html`<p>${input.before ? 'No older deliveries.' : 'No deliveries yet.'}</p>`
        : html`<table class="data deliveries">
            <caption class="visually-hidden">
              Deliveries to ${endpoint.url}
            </caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event type</th>
                <th scope="col">webhook-id</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">Latency</th>
                <th scope="col">Attempts</th>
                <th scope="col">Next retry</th>
                ${owner ? html`<th scope="col">Actions</th>` : ''}
              </tr>
            </thead>
            <tbody>
              ${deliveries.map((d) => deliveryRow(d, endpoint, viewer))}
            </tbody>
          </table>`
    }
    <p>
      ${input.before ? html`<a href="${base}">Newest deliveries</a>` : ''}
      ${input.hasOlder && oldest ? html` <a href="${base}?before=${oldest.id}">Older deliveries</a>` : ''}
    </p>
  </section>`;
}

/** One endpoint: its facts, a notice while it is off, the owner's actions and its delivery log. */
export function endpointPage(input: EndpointPageInput): string {
  const { viewer, endpoint } = input;
  const owner = viewer.user.role === 'owner';
  return page({
    title: `Webhook endpoint (${endpoint.environment})`,
    viewer,
    active: 'webhooks',
    body: html`<p><a href="/webhooks/${endpoint.environment}">All ${endpoint.environment} endpoints</a></p>
      ${input.message ? notice(input.message.kind, input.message.text) : ''} ${endpoint.enabled ? '' : disabledNotice(endpoint)}
      ${input.shown ? shownSecret(input.shown) : ''}
      <section class="card" aria-labelledby="facts-title" data-endpoint-id="${endpoint.id}">
        <h2 id="facts-title">${endpoint.url}</h2>
        ${facts(endpoint, input.now)}
        <p class="hint">${ENVIRONMENT_NOTE[endpoint.environment]}</p>
      </section>
      ${owner ? ownerActions(endpoint, viewer, input.form) : notice('info', 'You have read-only access: an owner can change this endpoint.')}
      ${deliveryLog(input)}`,
  });
}
