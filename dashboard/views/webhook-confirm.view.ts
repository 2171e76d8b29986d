import type { WebhookEndpoint } from '../../shared/webhooks/endpoint.repository';
import { SECRET_OVERLAP_MS } from '../../shared/webhooks/webhook-endpoints.service';
import { formatTime } from './format';
import { confirmPage } from './confirm.view';
import type { Viewer } from './layout';

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
  return confirmPage({
    viewer,
    active: 'webhooks',
    action,
    title: text.title,
    question: `${text.title} of ${endpoint.url}?`,
    facts: [
      ['URL', endpoint.url],
      ['Environment', endpoint.environment],
      ['Event types', endpoint.eventTypes.join(', ')],
      ['Status', endpoint.enabled ? 'enabled' : `disabled since ${formatTime(endpoint.disabledAt)}`],
    ],
    effect: text.effect,
    formAction: `${base}/${action}`,
    button: text.button,
    danger: text.danger,
    cancel: base,
  });
}
