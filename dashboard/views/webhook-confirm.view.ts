import type { WebhookEndpoint } from '../../shared/webhooks/endpoint.repository';
import { SECRET_OVERLAP_MS } from '../../shared/webhooks/webhook-endpoints.service';
import { formatTime } from './format';
import { html } from './html';
import { formFields, page, type Viewer } from './layout';

/** The endpoint changes that ask first, each on a page of its own. */
export type EndpointConfirmAction = 'delete' | 'rotate-secret';

const CONFIRM_TEXT: Record<EndpointConfirmAction, { title: string; button: string; effect: string; danger: boolean }> = {
  delete: {
    title: 'Delete webhook endpoint',
    button: 'Delete endpoint',
    effect: 'No event is sent to it any more, and its delivery log is deleted with it. Its audit entries stay. This cannot be undone.',
    danger: true,
  },
  'rotate-secret': {
    title: 'Rotate signing secret',
    button: 'Rotate secret',
    effect: `A new signing secret is made and shown once. The old one keeps signing for ${SECRET_OVERLAP_MS / 3_600_000} hours beside it (each delivery carries both signatures), so your receiver can switch over without missing an event.`,
    danger: false,
  },
};

/** Asks before deleting an endpoint or rotating its secret, naming it: URL, environment, event types and status. */
export function confirmEndpointPage(input: { viewer: Viewer; endpoint: WebhookEndpoint; action: EndpointConfirmAction }): string {
  const { viewer, endpoint, action } = input;
  const text = CONFIRM_TEXT[action];
  const base = `/webhooks/${endpoint.environment}/${endpoint.id}`;
  return page({
    title: text.title,
    viewer,
    active: 'webhooks',
    body: html`<section class="card narrow confirm" aria-labelledby="confirm-title" data-confirm="${action}">
      <h2 id="confirm-title">${text.title} of ${endpoint.url}?</h2>
      <dl class="key-facts">
        <dt>URL</dt>
        <dd>${endpoint.url}</dd>
        <dt>Environment</dt>
        <dd>${endpoint.environment}</dd>
        <dt>Event types</dt>
        <dd>${endpoint.eventTypes.join(', ')}</dd>
        <dt>Status</dt>
        <dd>${endpoint.enabled ? 'enabled' : `disabled since ${formatTime(endpoint.disabledAt)}`}</dd>
      </dl>
      <p>${text.effect}</p>
      <form method="post" action="${base}/${action}" class="stack">
        ${formFields(viewer)}
        <div class="button-row">
          <button type="submit" ${text.danger ? html` class="danger"` : ''}>${text.button}</button>
          <a class="button secondary" href="${base}">Cancel</a>
        </div>
      </form>
    </section>`,
  });
}
