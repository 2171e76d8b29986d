import type { SessionSummary } from '../services/user-sessions.service';
import type { Enrolment } from '../services/two-factor.service';
import { formatTime } from './format';
import { html, raw, type Html } from './html';
import { csrfField, notice, page, type Viewer } from './layout';

export type Message = { kind: 'success' | 'error' | 'info'; text: string };

/** The account pages' own navigation: two-factor sign-in, password, sessions, the team. */
export function tabs(viewer: Viewer, current: 'two-factor' | 'password' | 'sessions' | 'team'): Html {
  if (viewer.mustEnrol) return html``;
  const tab = (name: typeof current, href: string, label: string) =>
    html`<li><a href="${href}" ${name === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav aria-label="Your account" class="tabs">
    <ul>
      ${tab('two-factor', '/account/two-factor', 'Two-factor sign-in')} ${tab('password', '/account/password', 'Password')}
      ${tab('sessions', '/account/sessions', 'Sessions')} ${tab('team', '/account/team', 'Team')}
    </ul>
  </nav>`;
}

const message = (m: Message | undefined) => (m ? notice(m.kind, m.text) : '');

const passwordField = (id: string, label: string, autocomplete: string) =>
  html`<label for="${id}">${label}</label>
    <input id="${id}" name="${id}" type="password" autocomplete="${autocomplete}" required maxlength="256" />`;

export interface TwoFactorPageInput {
  viewer: Viewer;
  status: { enabled: boolean; unusedRecoveryCodes: number; accountRequires: boolean };
  /** An enrolment begun: its QR code and secret, and the form to confirm a code. */
  enrolment?: Enrolment;
  /** Just enabled: the recovery codes, shown this once. */
  recoveryCodes?: string[];
  message?: Message;
}

export function twoFactorPage(input: TwoFactorPageInput): string {
  const { viewer, status, enrolment, recoveryCodes } = input;
  const token = viewer.csrfToken;
  const required = viewer.mustEnrol
    ? notice('info', 'This account requires two-factor sign-in. Set it up to continue: scan the code with an authenticator app.')
    : '';
  let body: Html;
  if (recoveryCodes) {
    body = html`<section class="card" data-recovery-codes>
      <h2>Recovery codes</h2>
      <p>Two-factor sign-in is on. Keep these codes somewhere safe: each signs you in once without your phone. They are shown only now.</p>
      <ul class="recovery-codes">
        ${recoveryCodes.map((code) => html`<li><code>${code}</code></li>`)}
      </ul>
      <p><a href="/keys/test">Continue to the dashboard</a></p>
    </section>`;
  } else if (enrolment) {
    body = html`<section class="card narrow">
      <h2>Set up two-factor sign-in</h2>
      <p>Scan this code with an authenticator app, then type the 6-digit code it shows.</p>
      <div class="qr" role="img" aria-label="QR code of the two-factor secret">${raw(enrolment.qrSvg)}</div>
      <p>Or type the secret in the app: <code data-secret>${enrolment.secret}</code></p>
      <form method="post" action="/account/two-factor/confirm">
        ${csrfField(token)}
        <label for="code">Code from the app</label>
        <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="10" />
        <button type="submit">Turn on two-factor sign-in</button>
      </form>
    </section>`;
  } else if (status.enabled) {
    body = html`<section class="card narrow">
      <h2>Two-factor sign-in is on</h2>
      <p>${status.unusedRecoveryCodes} recovery codes left unused.</p>
      <form method="post" action="/account/two-factor/disable">
        ${csrfField(token)} ${passwordField('password', 'Your password, to turn it off', 'current-password')}
        <button type="submit">Turn off two-factor sign-in</button>
      </form>
    </section>`;
  } else {
    body = html`<section class="card narrow">
      <h2>Two-factor sign-in is off</h2>
      <p>With it on, signing in takes your password and a code from an authenticator app on your phone.</p>
      <form method="post" action="/account/two-factor/enrol">
        ${csrfField(token)}
        <button type="submit">Set up two-factor sign-in</button>
      </form>
    </section>`;
  }
  const policy =
    viewer.user.role === 'owner' && !viewer.mustEnrol && !recoveryCodes
      ? html`<section class="card narrow">
          <h2>For everyone in ${viewer.account.name}</h2>
          <p>
            ${
              status.accountRequires
                ? 'Two-factor sign-in is required: users without it are sent to set it up after signing in.'
                : 'Two-factor sign-in is optional for the users of this account.'
            }
          </p>
          <form method="post" action="/account/two-factor/require">
            ${csrfField(token)}
            <input type="hidden" name="required" value="${status.accountRequires ? 'no' : 'yes'}" />
            <button type="submit">${status.accountRequires ? 'Make it optional' : 'Require it of every user'}</button>
          </form>
        </section>`
      : '';
  return page({
    title: 'Two-factor sign-in',
    viewer,
    active: 'account',
    body: html`${tabs(viewer, 'two-factor')} ${required} ${message(input.message)} ${body} ${policy}`,
  });
}

export function passwordPage(input: { viewer: Viewer; message?: Message }): string {
  return page({
    title: 'Password',
    viewer: input.viewer,
    active: 'account',
    body: html`${tabs(input.viewer, 'password')} ${message(input.message)}
      <form method="post" action="/account/password" class="card narrow">
        ${csrfField(input.viewer.csrfToken)} ${passwordField('current', 'Current password', 'current-password')}
        ${passwordField('next', 'New password (at least 12 characters)', 'new-password')}
        ${passwordField('confirm', 'New password again', 'new-password')}
        <button type="submit">Change password</button>
      </form>
      <p class="hint">Changing it signs you out everywhere else.</p>`,
  });
}

export function sessionsPage(input: { viewer: Viewer; sessions: SessionSummary[]; message?: Message }): string {
  const { viewer, sessions } = input;
  const others = sessions.filter((s) => !s.current).length;
  const rows = sessions.map(
    (s) =>
      html`<tr ${s.current ? html` data-current` : ''}>
        <td data-label="Signed in"><time datetime="${s.createdAt}">${formatTime(s.createdAt)}</time></td>
        <td data-label="Last seen"><time datetime="${s.lastSeenAt}">${formatTime(s.lastSeenAt)}</time></td>
        <td data-label="From">${s.client ?? 'unknown'}</td>
        <td data-label="Browser">${s.userAgent ?? 'unknown'}</td>
        <td data-label="">${s.current ? html`<strong>this session</strong>` : ''}</td>
      </tr>`,
  );
  return page({
    title: 'Sessions',
    viewer,
    active: 'account',
    body: html`${tabs(viewer, 'sessions')} ${message(input.message)}
      <table class="data">
        <caption class="visually-hidden">
          Your sessions
        </caption>
        <thead>
          <tr>
            <th scope="col">Signed in</th>
            <th scope="col">Last seen</th>
            <th scope="col">From</th>
            <th scope="col">Browser</th>
            <th scope="col"><span class="visually-hidden">This session</span></th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
      ${
        others > 0
          ? html`<form method="post" action="/account/sessions/end-others">
              ${csrfField(viewer.csrfToken)}
              <button type="submit">Sign out everywhere else (${others})</button>
            </form>`
          : html`<p class="hint">You are signed in nowhere else.</p>`
      }`,
  });
}
