import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import type { Anomaly } from '../../shared/traffic/patterns/anomaly.repository';
import type { PatternRule } from '../../shared/traffic/patterns/rules';
import { formatTime } from './format';
import { html, type Html } from './html';
import { formFields, notice, page, type Viewer } from './layout';
import { withRepeatNotice } from './query-notices';
import type { RepeatState } from '../services/form-tokens.service';

export interface PatternsPageInput {
  viewer: Viewer;
  open: Anomaly[];
  acknowledged: Anomaly[];
  keys: ApiKeyRecord[];
  acknowledgedNow: boolean;
  /** The acknowledgement's form was sent again: nothing was done twice. */
  repeat?: RepeatState | undefined;
  /** Why the last acknowledgement was refused. */
  refusal?: Html;
}

const RULE_LABELS: Record<PatternRule, string> = {
  'volume-high': 'Volume far above usual',
  'volume-low': 'Volume far below usual',
  'error-rate': 'Error rate jump',
  'refused-key': 'Refused key still in use',
  'new-country': 'New country',
  'quota-forecast': 'Quota forecast',
};

function numbers(anomaly: Anomaly): Html {
  const entries = Object.entries(anomaly.numbers);
  if (entries.length === 0) return html``;
  return html`<dl class="numbers">
    ${entries.map(
      ([name, value]) =>
        html`<div>
          <dt>${name}</dt>
          <dd>${typeof value === 'number' ? value.toLocaleString('en-US') : value}</dd>
        </div>`,
    )}
  </dl>`;
}

function keyCell(anomaly: Anomaly, keys: ApiKeyRecord[]): Html {
  const key = keys.find((k) => k.id === anomaly.keyId);
  const label = key ? `${key.name} …${key.last4}` : anomaly.keyId;
  const link = key
    ? html`<a href="/traffic/${anomaly.environment}?key=${key.id}&amp;window=24h">${label}</a>`
    : html`<code>${label}</code>`;
  return html`${link} <small>(${anomaly.environment})</small>`;
}

function row(anomaly: Anomaly, input: PatternsPageInput): Html {
  const owner = input.viewer.user.role === 'owner';
  const state = anomaly.acknowledgedAt
    ? html`<span class="status acknowledged">acknowledged</span><br /><small
          >by ${anomaly.acknowledgedBy ?? '—'}, ${formatTime(anomaly.acknowledgedAt)}</small
        >`
    : owner
      ? html`<form method="post" action="/patterns/${anomaly.id}/acknowledge" class="inline">
          ${formFields(input.viewer)}
          <button type="submit" aria-label="Acknowledge: ${RULE_LABELS[anomaly.rule] ?? anomaly.rule}, pattern ${anomaly.id}">
            Acknowledge
          </button>
        </form>`
      : html`<span class="status open">open</span>`;
  return html`<tr data-pattern="${anomaly.id}">
    <td data-label="Pattern"><strong>${RULE_LABELS[anomaly.rule] ?? anomaly.rule}</strong><br />${keyCell(anomaly, input.keys)}</td>
    <td data-label="Reason">${anomaly.reason}${numbers(anomaly)}</td>
    <td data-label="First seen"><time datetime="${anomaly.firstSeen}">${formatTime(anomaly.firstSeen)}</time></td>
    <td data-label="Last seen"><time datetime="${anomaly.lastSeen}">${formatTime(anomaly.lastSeen)}</time></td>
    <td data-label="Status" class="actions">${state}</td>
  </tr>`;
}

function table(caption: string, anomalies: Anomaly[], input: PatternsPageInput): Html {
  return html`<table class="data patterns">
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        <th scope="col">Pattern and key</th>
        <th scope="col">Reason</th>
        <th scope="col">First seen</th>
        <th scope="col">Last seen</th>
        <th scope="col">Status</th>
      </tr>
    </thead>
    <tbody>
      ${anomalies.map((a) => row(a, input))}
    </tbody>
  </table>`;
}

export function patternsPage(input: PatternsPageInput): string {
  const { open, acknowledged, viewer } = input;
  const done = withRepeatNotice(input.repeat, input.acknowledgedNow ? { kind: 'success', text: 'Pattern acknowledged.' } : undefined);
  return page({
    title: 'Unusual patterns',
    viewer,
    active: 'patterns',
    body: html`${input.refusal ? notice('error', input.refusal) : ''} ${done ? notice(done.kind, done.text) : ''}
      <p class="hint">
        Checked every 5 minutes against each key's own history: volume far from its usual for the hour, error-rate jumps, refused (revoked,
        deleted or rotated-out) keys still sending requests, new countries and quota forecasts at 75, 90 and 100 %.
      </p>
      ${viewer.user.role === 'owner' ? '' : notice('info', 'You have read-only access: an owner of this account can acknowledge patterns.')}
      <section aria-labelledby="open-title">
        <h2 id="open-title">Open (${open.length})</h2>
        ${open.length === 0 ? html`<p>Nothing unusual right now.</p>` : table('Open unusual patterns, most recently seen first', open, input)}
      </section>
      ${
        acknowledged.length === 0
          ? ''
          : html`<section aria-labelledby="acknowledged-title">
              <h2 id="acknowledged-title">Acknowledged</h2>
              ${table('Acknowledged unusual patterns, most recently seen first', acknowledged, input)}
            </section>`
      }`,
  });
}
