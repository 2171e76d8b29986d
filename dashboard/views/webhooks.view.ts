import type { Environment } from '../../shared/domain/environment';
import type { WebhookEndpoint } from '../../shared/webhooks/endpoint.repository';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_EVENT_DESCRIPTIONS, type WebhookEventType } from '../../shared/webhooks/event-catalog';
import { disabledForFailing } from '../services/webhooks.service';
import { SECRET_OVERLAP_MS } from '../../shared/webhooks/webhook-endpoints.service';
import { formatTime } from './format';
import { html, type Html } from './html';
import { formFields, notice, page, type PageNotice, type Viewer } from './layout';

/** A signing secret just made (an endpoint added, or its secret rotated): shown once, with a copy button. */
export interface ShownSecret {
  secret: string;
  url: string;
  /** Set after a rotation: until when the previous secret keeps signing too. */
  previousSecretExpiresAt?: string;
}

/** What an owner typed into the add or edit form, shown again when it was refused. */
export interface EndpointForm {
  url?: string;
  eventTypes?: readonly string[];
}

export interface WebhooksPageInput {
  viewer: Viewer;
  environment: Environment;
  endpoints: WebhookEndpoint[];
  shown?: ShownSecret;
  message?: PageNotice | undefined;
  form?: EndpointForm;
}

export const ENVIRONMENT_NOTE: Record<Environment, string> = {
  test: 'Test endpoints receive the events of test keys only: a test event never reaches a live endpoint.',
  live: 'Live endpoints receive the events of live keys and of the account: a test event never reaches them.',
};

/** Environment tabs: each environment has its own endpoints. */
export function environmentTabs(environment: Environment): Html {
  const tab = (env: Environment, label: string) =>
    html`<li><a href="/webhooks/${env}" ${env === environment ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav class="tabs" aria-label="Environment">
    <ul>
      ${tab('test', 'Test')}${tab('live', 'Live')}
    </ul>
  </nav>`;
}

/** Said wherever the endpoint appears while it is off: a banner when the worker turned it off for failing. */
export function disabledNotice(endpoint: WebhookEndpoint): Html {
  const when = formatTime(endpoint.disabledAt);
  if (disabledForFailing(endpoint)) {
    return html`<div class="notice error" role="alert" data-notice="webhook-auto-disabled" data-endpoint-id="${endpoint.id}">
      <strong>Endpoint ${endpoint.url} was disabled automatically</strong> on ${when}: ${endpoint.disabledReason}. No events are sent to it
      until an owner enables it again; send a test event to check it first.
    </div>`;
  }
  return html`<div class="notice info" role="status" data-notice="webhook-disabled" data-endpoint-id="${endpoint.id}">
    Endpoint ${endpoint.url} is disabled since ${when}${endpoint.disabledReason ? html`: ${endpoint.disabledReason}` : ''}.
  </div>`;
}

/** The event types as checkboxes, the endpoint's (or the refused form's) ticked. */
export function eventTypeFields(idPrefix: string, checked: readonly string[]): Html {
  return html`<fieldset class="event-types">
    <legend>Event types</legend>
    ${SUBSCRIBABLE_EVENT_TYPES.map(
      (type: WebhookEventType) =>
        html`<label class="check" for="${idPrefix}-${type.replace('.', '-')}"
          ><input
            type="checkbox"
            id="${idPrefix}-${type.replace('.', '-')}"
            name="eventTypes"
            value="${type}"
            ${checked.includes(type) ? html` checked` : ''}
          />
          <code>${type}</code> <small>${WEBHOOK_EVENT_DESCRIPTIONS[type]}</small></label
        >`,
    )}
  </fieldset>`;
}

/** The secret, once: the receiver verifies every delivery's signature with it. */
export function shownSecret(shown: ShownSecret): Html {
  return html`<section class="card shown-key" aria-labelledby="shown-secret-title">
    <h2 id="shown-secret-title">The signing secret of ${shown.url}</h2>
    <p>Copy it now into your receiver: it is stored encrypted and is not shown again.</p>
    <label for="new-secret">Signing secret</label>
    <div class="copy-row">
      <input id="new-secret" readonly value="${shown.secret}" spellcheck="false" /><button type="button" data-copy="new-secret">
        Copy
      </button>
    </div>
    ${
      shown.previousSecretExpiresAt
        ? html`<p>
            The previous secret keeps signing too until
            <strong>${formatTime(shown.previousSecretExpiresAt)}</strong> (${SECRET_OVERLAP_MS / 3_600_000} hours): each delivery carries
            both signatures until then, so switch your receiver over before.
          </p>`
        : ''
    }
  </section>`;
}

const statusOf = (endpoint: WebhookEndpoint): Html =>
  endpoint.enabled
    ? endpoint.failingMs !== null
      ? html`<span class="status expiring">failing</span>`
      : html`<span class="status active">enabled</span>`
    : html`<span class="status revoked">disabled</span>`;

function addForm(environment: Environment, viewer: Viewer, form: EndpointForm | undefined): Html {
  return html`<section class="card" aria-labelledby="add-title">
    <h2 id="add-title">Add a ${environment} endpoint</h2>
    <form method="post" action="/webhooks/${environment}" class="stack">
      ${formFields(viewer)}
      <label for="endpoint-url">URL</label>
      <input
        id="endpoint-url"
        name="url"
        type="url"
        required
        maxlength="2048"
        placeholder="https://example.com/webhooks"
        value="${form?.url ?? ''}"
      />
      ${eventTypeFields('add', form?.eventTypes ?? [])}
      <button type="submit">Add endpoint</button>
    </form>
  </section>`;
}

/** The account's endpoints of one environment, with notices of those turned off, and the add form for owners. */
export function webhooksPage(input: WebhooksPageInput): string {
  const { viewer, environment, endpoints } = input;
  const owner = viewer.user.role === 'owner';
  const rows = endpoints.map(
    (e) =>
      html`<tr data-endpoint-id="${e.id}">
        <td data-label="URL"><a href="/webhooks/${environment}/${e.id}">${e.url}</a></td>
        <td data-label="Event types">${e.eventTypes.join(', ')}</td>
        <td data-label="Status">${statusOf(e)}</td>
        <td data-label="Created">${formatTime(e.createdAt)}</td>
      </tr>`,
  );
  return page({
    title: `${environment === 'live' ? 'Live' : 'Test'} webhooks`,
    viewer,
    active: 'webhooks',
    body: html`${environmentTabs(environment)} ${input.message ? notice(input.message.kind, input.message.text) : ''}
      ${endpoints.filter((e) => !e.enabled).map(disabledNotice)} ${input.shown ? shownSecret(input.shown) : ''}
      <p class="hint" data-environment="${environment}">${ENVIRONMENT_NOTE[environment]}</p>
      ${owner ? '' : notice('info', 'You have read-only access: an owner of this account can add, change and delete endpoints.')}
      ${
        endpoints.length === 0
          ? html`<p>No ${environment} endpoints yet.</p>`
          : html`<table class="data webhooks">
              <caption class="visually-hidden">
                ${environment} webhook endpoints
              </caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Event types</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
      }
      ${owner ? addForm(environment, viewer, input.form) : ''}`,
  });
}
