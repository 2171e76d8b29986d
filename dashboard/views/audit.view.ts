import type { AuditedKey, AuditEntry } from '../../shared/audit/audit.repository';
import { AUDIT_ACTIONS, type AuditAction } from '../../shared/domain/audit-actions';
import type { CsvValue } from '../http/csv';
import type { AuditQuery } from '../routes/audit-filter';
import { auditQueryString } from '../routes/audit-filter';
import type { AuditChoices } from '../services/audit-log.service';
import { formatSecond } from './format';
import { html, type Html } from './html';
import { page, type Viewer } from './layout';

export const ACTION_LABELS: Record<AuditAction, string> = {
  'key.create': 'Created a key',
  'key.revoke': 'Revoked a key',
  'key.delete': 'Deleted a key',
  'key.rotate': 'Rotated a key',
  'pattern.acknowledge': 'Acknowledged an unusual pattern',
  'session.sign-in': 'Signed in',
  'session.sign-in-failed': 'Failed sign-in',
  'session.sign-in-refused': 'Sign-in refused (too many attempts)',
  'session.sign-out': 'Signed out',
  'session.code-failed': 'Wrong two-factor code at sign-in',
  'session.end-others': 'Signed out everywhere else',
  'password.change': 'Changed their password',
  'two-factor.enable': 'Turned two-factor sign-in on',
  'two-factor.disable': 'Turned two-factor sign-in off',
  'two-factor.reset': 'Reset two-factor sign-in',
  'two-factor.recovery-code-used': 'Signed in with a recovery code',
  'account.two-factor-required': 'Required two-factor sign-in for the account',
  'account.two-factor-optional': 'Made two-factor sign-in optional for the account',
  'team.invite': 'Invited a teammate',
  'team.invite-revoke': 'Revoked an invitation',
  'team.invite-accept': 'Accepted an invitation and joined',
  'team.role-owner': 'Made a member an owner',
  'team.role-viewer': 'Made a member a viewer',
  'team.remove': 'Removed a member',
  'webhook.create': 'Added a webhook endpoint',
  'webhook.update': 'Edited a webhook endpoint',
  'webhook.enable': 'Enabled a webhook endpoint',
  'webhook.disable': 'Disabled a webhook endpoint',
  'webhook.delete': 'Deleted a webhook endpoint',
  'webhook.rotate-secret': "Rotated a webhook endpoint's signing secret",
  'webhook.auto-disable': 'A webhook endpoint was disabled after failing for 3 days',
  'webhook.test': 'Sent a test event to a webhook endpoint',
  'webhook.redeliver': 'Redelivered a webhook event',
};

/**
 * A UTC date typed as YYYY-MM-DD: a date picker would show it in the browser's locale's format,
 * unlike every other date on the dashboard.
 */
const dateField = (name: 'from' | 'to', label: string, value: string | undefined): Html =>
  html`<div>
    <label for="audit-${name}">${label}</label>
    <input
      id="audit-${name}"
      name="${name}"
      type="text"
      inputmode="numeric"
      pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}"
      maxlength="10"
      placeholder="YYYY-MM-DD"
      autocomplete="off"
      value="${value ?? ''}"
    />
  </div>`;

/** A key as the keys page shows it: name and last 4 characters; its id only when neither is known. */
export function auditKeyLabel(key: { id: string; name: string | null; last4: string | null }): string {
  if (key.name === null) return key.id;
  return key.last4 === null ? key.name : `${key.name} …${key.last4}`;
}

function keyCell(e: AuditEntry): Html | string {
  if (!e.keyId) return '—';
  const old = auditKeyLabel({ id: e.keyId, name: e.keyName, last4: e.keyLast4 });
  const env = e.environment ? ` (${e.environment})` : '';
  if (!e.newKeyId) return html`<span title="${e.keyId}">${old}</span>${env}`;
  const next = auditKeyLabel({ id: e.newKeyId, name: e.newKeyName, last4: e.newKeyLast4 });
  return html`<span title="${e.keyId}">${old}</span> → <span title="${e.newKeyId}">${next}</span>${env}`;
}

const selected = (on: boolean) => (on ? html` selected` : '');

function filterForm(query: AuditQuery, choices: AuditChoices): Html {
  // A value chosen by address but no longer among the choices is still shown as chosen.
  const actors = query.actor && !choices.actors.includes(query.actor) ? [query.actor, ...choices.actors] : choices.actors;
  const keys: AuditedKey[] =
    query.key && !choices.keys.some((k) => k.id === query.key)
      ? [{ id: query.key, name: null, last4: null, environment: null }, ...choices.keys]
      : choices.keys;
  const sortedKeys = [...keys].sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id) || a.id.localeCompare(b.id));
  return html`<form method="get" action="/audit" class="picker" aria-label="Filter the audit log">
    <div>
      <label for="audit-actor">Who</label>
      <select id="audit-actor" name="actor">
        <option value="">Anyone</option>
        ${actors.map((a) => html`<option value="${a}" ${selected(a === query.actor)}>${a}</option>`)}
      </select>
    </div>
    <div>
      <label for="audit-action">What</label>
      <select id="audit-action" name="action">
        <option value="">Any action</option>
        ${AUDIT_ACTIONS.map((a) => html`<option value="${a}" ${selected(a === query.action)}>${ACTION_LABELS[a]}</option>`)}
      </select>
    </div>
    <div>
      <label for="audit-key">Key</label>
      <select id="audit-key" name="key">
        <option value="">Any key</option>
        ${sortedKeys.map(
          (k) =>
            html`<option value="${k.id}" ${selected(k.id === query.key)}>
              ${auditKeyLabel(k)}${k.environment ? ` (${k.environment})` : ''}
            </option>`,
        )}
      </select>
    </div>
    ${dateField('from', 'From (UTC)', query.from)} ${dateField('to', 'To (UTC, included)', query.to)}
    <button type="submit">Filter</button>
    <a href="/audit">Clear</a>
  </form>`;
}

export interface AuditPageInput {
  viewer: Viewer;
  entries: AuditEntry[];
  olderHref: string | null;
  query: AuditQuery;
  choices: AuditChoices;
  /** Showing an older page (`before`): an empty one is not "nothing recorded". */
  paged: boolean;
}

export function auditPage({ viewer, entries, olderHref, query, choices, paged }: AuditPageInput): string {
  const filtered = Object.values(query).some((v) => v !== undefined);
  const rows = entries.map(
    (e) =>
      html`<tr>
        <td data-label="When"><time datetime="${e.createdAt}">${formatSecond(e.createdAt)}</time></td>
        <td data-label="Who">${e.actor}</td>
        <td data-label="What">${ACTION_LABELS[e.action] ?? e.action}${e.subject ? ` (${e.subject})` : ''}</td>
        <td data-label="Key">${keyCell(e)}</td>
        <td data-label="Country">${e.country ?? 'unknown'}</td>
      </tr>`,
  );
  return page({
    title: 'Audit log',
    viewer,
    active: 'audit',
    body: html`<p class="hint">
        Every key action and sign-in of this account, newest first, times in UTC. The country comes from the client's address, which is not
        kept. Refused sign-ins are recorded once per user every 15 minutes.
      </p>
      ${filterForm(query, choices)}
      <p><a href="/audit.csv${auditQueryString(query)}" download>Download as CSV</a>${filtered ? ' (these entries, every page)' : ''}</p>
      ${
        entries.length === 0
          ? html`<p>${filtered || paged ? 'No entries match.' : 'Nothing recorded yet.'}</p>`
          : html`<table class="data">
              <caption class="visually-hidden">
                Audit log
              </caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">Key</th>
                  <th scope="col">Country</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
      }
      ${olderHref ? html`<p><a href="${olderHref}">Older entries</a></p>` : ''}`,
  });
}

export const auditCsvHeader = [
  'time',
  'actor',
  'action',
  'description',
  'subject',
  'environment',
  'key_id',
  'key_name',
  'key_last4',
  'new_key_id',
  'new_key_name',
  'new_key_last4',
  'country',
];

/** One entry as a CSV record, in the order of auditCsvHeader; the time in ISO 8601, UTC. */
export function auditCsvRow(e: AuditEntry): CsvValue[] {
  return [
    e.createdAt,
    e.actor,
    e.action,
    ACTION_LABELS[e.action] ?? e.action,
    e.subject,
    e.environment,
    e.keyId,
    e.keyName,
    e.keyLast4,
    e.newKeyId,
    e.newKeyName,
    e.newKeyLast4,
    e.country,
  ];
}
