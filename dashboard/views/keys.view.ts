import type { Environment } from '../../shared/domain/environment';
import type { Account } from '../../shared/accounts/account.repository';
import { SCOPES } from '../../shared/credentials/api-key';
import { limitsFor, liveKeyCap, PLAN_LIMITS } from '../../shared/limits/plans';
import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import { holdsLiveKeyPlace, keyStatus } from '../../shared/credentials/key-status';
import { ageInDays, formatTime } from './format';
import { html, type Html } from './html';
import { confirmPage } from './confirm.view';
import { formFields, notice, page, type PageNotice, type Viewer } from './layout';

/** From this age a key is flagged: long-lived secrets are worth rotating. */
export const KEY_AGE_WARNING_DAYS = 90;

/** Grace periods offered when rotating (values parsed as durations). */
export const ROTATION_GRACE_CHOICES = [
  { value: '1h', label: '1 hour' },
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
] as const;

/** A key just issued (created or rotated in): shown once, with a copy button. */
export interface ShownKey {
  key: string;
  name: string;
  /** Set after a rotation: when the replaced key stops working. */
  previousKeyExpiresAt?: string;
}

export interface KeysPageInput {
  viewer: Viewer;
  environment: Environment;
  keys: ApiKeyRecord[];
  now: number;
  shown?: ShownKey;
  message?: PageNotice | undefined;
}

/** Replaced keys follow the key that replaced them, so a rotation reads as a pair. */
function ordered(keys: ApiKeyRecord[]): ApiKeyRecord[] {
  const byReplacement = new Map(keys.filter((k) => k.replacedBy).map((k) => [k.replacedBy!, k]));
  const out: ApiKeyRecord[] = [];
  const placed = new Set<string>();
  const place = (key: ApiKeyRecord) => {
    if (placed.has(key.id)) return;
    placed.add(key.id);
    out.push(key);
    const previous = byReplacement.get(key.id);
    if (previous) place(previous);
  };
  for (const key of [...keys].reverse()) if (!key.replacedBy || !keys.some((k) => k.id === key.replacedBy)) place(key);
  for (const key of keys) place(key);
  return out;
}

function statusCell(key: ApiKeyRecord, keys: ApiKeyRecord[], now: number): Html {
  const status = keyStatus(key, now);
  if (status === 'expiring') {
    const successor = keys.find((k) => k.id === key.replacedBy);
    return html`<span class="status expiring">rotating out until ${formatTime(key.expiresAt)}</span>${
        successor ? html`<br /><small>replaced by ${successor.name} …${successor.last4}</small>` : ''
      }`;
  }
  return html`<span class="status ${status}">${status}</span>`;
}

function ageCell(key: ApiKeyRecord, now: number): Html {
  const days = ageInDays(key.createdAt, now);
  if (days < KEY_AGE_WARNING_DAYS || keyStatus(key, now) !== 'active') return html`${days} d`;
  return html`<span class="warning" title="Keys this old are worth rotating">${days} d — consider rotating</span>`;
}

/**
 * A live key the daily scan found 90 days old (the `key.rotation_due` event was sent for it), while
 * it is still the key in use: rotating it replaces it, and the badge goes with it.
 */
function rotationDueBadge(key: ApiKeyRecord, now: number): Html | '' {
  if (!key.rotationDueAt || keyStatus(key, now) !== 'active') return '';
  return html` <span class="badge rotation-due" data-rotation-due title="Due since ${formatTime(key.rotationDueAt)}: rotate this key"
    >rotation due</span
  >`;
}

function actions(key: ApiKeyRecord, env: Environment, viewer: Viewer, now: number): Html {
  const status = keyStatus(key, now);
  const base = `/keys/${env}/${key.id}`;
  const label = `${key.name} …${key.last4}`;
  const rotate =
    status === 'active' && !viewer.account.restricted
      ? html`<form method="post" action="${base}/rotate" class="inline">
          ${formFields(viewer)}
          <label for="grace-${key.id}">Old key works for</label>
          <select id="grace-${key.id}" name="grace">
            ${ROTATION_GRACE_CHOICES.map(
              (c) => html`<option value="${c.value}" ${c.value === '24h' ? html` selected` : ''}>${c.label}</option>`,
            )}
          </select>
          <button type="submit" aria-label="Rotate ${label}">Rotate</button>
        </form>`
      : '';
  // Revoking and deleting cannot be undone: each asks on a page of its own first.
  const revoke =
    status === 'active' || status === 'expiring'
      ? html`<a class="button danger" href="${base}/revoke" aria-label="Revoke ${label}">Revoke</a>`
      : '';
  const remove = html`<a class="button danger" href="${base}/delete" aria-label="Delete ${label}">Delete</a>`;
  return html`${rotate}${revoke}${remove}`;
}

function rateLimitCell(key: ApiKeyRecord, account: Account): string {
  const { perSecond } = limitsFor(account.plan, key.rateLimitRps);
  return key.rateLimitRps === null ? `${perSecond}/s (plan)` : `${perSecond}/s`;
}

function shownKey(shown: ShownKey): Html {
  return html`<section class="card shown-key" aria-labelledby="shown-key-title">
    <h2 id="shown-key-title">Your new key “${shown.name}”</h2>
    <p>Copy it now: it is stored only as a hash and is not shown again.</p>
    <label for="new-key">API key</label>
    <div class="copy-row">
      <input id="new-key" readonly value="${shown.key}" spellcheck="false" /><button type="button" data-copy="new-key">Copy</button>
    </div>
    ${shown.previousKeyExpiresAt ? html`<p>The previous key keeps working until <strong>${formatTime(shown.previousKeyExpiresAt)}</strong>.</p>` : ''}
  </section>`;
}

/** The account's live keys holding a place, and how many places its plan gives. */
interface LivePlaces {
  liveKeys: number;
  cap: number;
}

/** The plan's limits as a live key's owner sees them: the per-second ceiling and the live-key cap. */
function planLine(account: Account, { liveKeys, cap }: LivePlaces): Html {
  const monthly = PLAN_LIMITS[account.plan].perMonth;
  return html`<p class="hint" data-plan-limits>
    The ${account.plan} plan: ${liveKeys} of ${cap} live keys in use; at most ${PLAN_LIMITS[account.plan].perSecond} requests per second per
    key;
    ${monthly === null ? 'no monthly quota' : `${monthly.toLocaleString('en-US')} requests a month for the account, all live keys together`}.
  </p>`;
}

function createForm(env: Environment, viewer: Viewer, { liveKeys, cap }: LivePlaces): Html {
  const account = viewer.account;
  const maxRps = PLAN_LIMITS[account.plan].perSecond;
  const full = env === 'live' && liveKeys >= cap;
  if (account.restricted) {
    return html`<section class="card" aria-labelledby="create-title">
      <h2 id="create-title">Create a ${env} key</h2>
      <p>New keys cannot be created while the account is restricted.</p>
    </section>`;
  }
  return html`<section class="card" aria-labelledby="create-title">
    <h2 id="create-title">Create a ${env} key</h2>
    ${full ? notice('info', 'This account holds as many live keys as its plan allows: revoke or delete one to create another.') : ''}
    <form method="post" action="/keys/${env}" class="stack">
      ${formFields(viewer)}
      <label for="key-name">Name</label>
      <input id="key-name" name="name" maxlength="100" placeholder="${env} key" />
      <fieldset>
        <legend>Scopes</legend>
        ${SCOPES.map(
          (scope) => html`<label class="check"><input type="checkbox" name="scopes" value="${scope}" checked /> ${scope}</label>`,
        )}
      </fieldset>
      ${
        env === 'live'
          ? html`<label for="key-rps">Rate limit (requests per second, at most ${maxRps}; empty for the plan's ${maxRps})</label>
              <input id="key-rps" name="rateLimitRps" type="number" min="1" max="${maxRps}" inputmode="numeric" />`
          : html`<p class="hint">Test keys are free and have no rate limit.</p>`
      }
      <button type="submit">Create key</button>
    </form>
  </section>`;
}

export function keysPage(input: KeysPageInput): string {
  const { viewer, environment, now } = input;
  const owner = viewer.user.role === 'owner';
  const keys = ordered(input.keys.filter((k) => k.environment === environment));
  const places: LivePlaces = {
    liveKeys: input.keys.filter((k) => holdsLiveKeyPlace(k, now)).length,
    cap: liveKeyCap(viewer.account.plan, viewer.account.liveKeyLimit),
  };
  const rows = keys.map(
    (k) =>
      html`<tr data-key-id="${k.id}" data-key-last4="${k.last4}">
        <td data-label="Name">
          <a href="/traffic/${environment}?key=${k.id}" title="Traffic of ${k.name}">${k.name}</a>${rotationDueBadge(k, now)}
        </td>
        <td data-label="Key"><code>…${k.last4}</code></td>
        <td data-label="Scopes">${k.scopes.join(', ')}</td>
        ${environment === 'live' ? html`<td data-label="Rate limit">${rateLimitCell(k, viewer.account)}</td>` : ''}
        <td data-label="Created">${formatTime(k.createdAt)}</td>
        <td data-label="Last used">${formatTime(k.lastUsedAt)}</td>
        <td data-label="Status">${statusCell(k, keys, now)}</td>
        <td data-label="Age">${ageCell(k, now)}</td>
        ${owner ? html`<td data-label="Actions" class="actions"><div>${actions(k, environment, viewer, now)}</div></td>` : ''}
      </tr>`,
  );
  return page({
    title: `${environment === 'live' ? 'Live' : 'Test'} keys`,
    viewer,
    active: `keys-${environment}`,
    body: html`${input.message ? notice(input.message.kind, input.message.text) : ''} ${input.shown ? shownKey(input.shown) : ''}
      ${owner ? '' : notice('info', 'You have read-only access: an owner of this account can create, rotate, revoke and delete keys.')}
      ${
        keys.length === 0
          ? html`<p>No ${environment} keys yet.</p>`
          : html`<table class="data keys">
              <caption class="visually-hidden">
                ${environment} keys
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes</th>
                  ${environment === 'live' ? html`<th scope="col">Rate limit</th>` : ''}
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">Age</th>
                  ${owner ? html`<th scope="col">Actions</th>` : ''}
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
      }
      <p class="hint">“Last used” is written by the API a few seconds after a request.</p>
      ${environment === 'live' ? planLine(viewer.account, places) : ''} ${owner ? createForm(environment, viewer, places) : ''}`,
  });
}

/** The two changes that ask first, each on a page of its own. */
export type ConfirmAction = 'revoke' | 'delete';

const CONFIRM_TEXT: Record<ConfirmAction, { title: string; button: string; effect: string }> = {
  revoke: {
    title: 'Revoke key',
    button: 'Revoke key',
    effect: 'The API refuses a revoked key within 2 seconds. It stays in the list as revoked, and cannot be used again.',
  },
  delete: {
    title: 'Delete key',
    button: 'Delete key',
    effect: 'The API refuses a deleted key within 2 seconds, and it leaves the list. Its audit entries stay.',
  },
};

/** Asks before revoking or deleting a key, naming it: its name, last four characters, environment and last use. */
export function confirmKeyPage(input: { viewer: Viewer; key: ApiKeyRecord; action: ConfirmAction; now: number }): string {
  const { viewer, key, action, now } = input;
  const text = CONFIRM_TEXT[action];
  const status = keyStatus(key, now);
  return confirmPage({
    viewer,
    active: `keys-${key.environment}`,
    action,
    title: text.title,
    question: html`${text.title} “${key.name}” (…${key.last4})?`,
    facts: [
      ['Name', key.name],
      ['Key', html`<code>…${key.last4}</code>`],
      ['Environment', key.environment],
      ['Last used', key.lastUsedAt ? formatTime(key.lastUsedAt) : 'never'],
      ['Status', status === 'expiring' ? `rotating out until ${formatTime(key.expiresAt)}` : status],
    ],
    effect: `${text.effect} This cannot be undone.`,
    formAction: `/keys/${key.environment}/${key.id}/${action}`,
    button: text.button,
    danger: true,
    cancel: `/keys/${key.environment}`,
  });
}
