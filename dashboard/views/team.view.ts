import type { Invitation } from '../../shared/dashboard-users/invitation.repository';
import { ROLES, type LinkState, type Member } from '../services/team.service';
import { tabs } from './account.view';
import { confirmPage } from './confirm.view';
import { formatTime } from './format';
import { html, type Html } from './html';
import { csrfField, formFields, notice, page, type PageNotice, type Viewer } from './layout';

export interface TeamPageInput {
  viewer: Viewer;
  members: Member[];
  /** Open invitations: listed for owners only. */
  invitations: Invitation[];
  /** An invitation link just made: shown this once. */
  invited?: { link: string; email: string };
  message?: PageNotice | undefined;
  /** The invite form's fields as typed, when it was refused. */
  form?: { email?: string; role?: string };
  now: number;
}

const roleSelect = (id: string, selected: string | undefined) =>
  html`<select id="${id}" name="role">
    ${ROLES.map((role) => html`<option value="${role}" ${role === selected ? html` selected` : ''}>${role}</option>`)}
  </select>`;

function memberRow(viewer: Viewer, member: Member): Html {
  const { user } = member;
  const owner = viewer.user.role === 'owner';
  const other = user.role === 'owner' ? 'viewer' : 'owner';
  const actions = owner
    ? html`<form method="post" action="/account/team/members/${user.id}/role" class="inline">
          ${formFields(viewer)}<input type="hidden" name="role" value="${other}" />
          <button type="submit" class="link">Make ${other}</button>
        </form>
        <a class="button danger" href="/account/team/members/${user.id}/remove" aria-label="Remove ${user.email}">Remove</a>`
    : '';
  return html`<tr data-member="${user.email}">
    <td data-label="Email">${user.email}${user.id === viewer.user.id ? html` <strong>(you)</strong>` : ''}</td>
    <td data-label="Role">${user.role}</td>
    <td data-label="Two-factor">${user.twoFactorSince ? 'on' : 'off'}</td>
    <td data-label="Last sign-in">
      ${member.lastSignIn ? html`<time datetime="${member.lastSignIn}">${formatTime(member.lastSignIn)}</time>` : 'never'}
    </td>
    ${owner ? html`<td data-label="" class="actions">${actions}</td>` : ''}
  </tr>`;
}

function invitedCard(invited: { link: string; email: string }): Html {
  return html`<section class="card shown-key" aria-labelledby="invited-title" data-invitation-link>
    <h2 id="invited-title">Invitation link for ${invited.email}</h2>
    <p>Send this link to them yourself: it is stored only as a hash and is not shown again. It works once, for 7 days.</p>
    <label for="invite-link">Invitation link</label>
    <div class="copy-row">
      <input id="invite-link" readonly value="${invited.link}" spellcheck="false" /><button type="button" data-copy="invite-link">
        Copy
      </button>
    </div>
  </section>`;
}

function invitationsSection(viewer: Viewer, invitations: Invitation[], now: number): Html {
  if (invitations.length === 0) return html`<p class="hint">No invitations are waiting.</p>`;
  return html`<table class="data">
    <caption>
      Invitations waiting
    </caption>
    <thead>
      <tr>
        <th scope="col">Email</th>
        <th scope="col">Role</th>
        <th scope="col">Invited by</th>
        <th scope="col">Expires</th>
        <th scope="col"><span class="visually-hidden">Actions</span></th>
      </tr>
    </thead>
    <tbody>
      ${invitations.map(
        (i) =>
          html`<tr data-invitation="${i.email}">
            <td data-label="Email">${i.email}</td>
            <td data-label="Role">${i.role}</td>
            <td data-label="Invited by">${i.invitedBy}</td>
            <td data-label="Expires">${Date.parse(i.expiresAt) <= now ? 'expired' : formatTime(i.expiresAt)}</td>
            <td data-label="" class="actions">
              <form method="post" action="/account/team/invitations/${i.id}/revoke" class="inline">
                ${formFields(viewer)}<button type="submit" class="link danger">Revoke</button>
              </form>
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * The account's users. Owners also see the invitations waiting, invite, change roles and
 * remove members; viewers see the list only.
 */
export function teamPage(input: TeamPageInput): string {
  const { viewer, members } = input;
  const owner = viewer.user.role === 'owner';
  const invite = owner
    ? html`<form method="post" action="/account/team/invite" class="card narrow">
          <h2>Invite a teammate</h2>
          ${formFields(viewer)}
          <label for="email">Email</label>
          <input id="email" name="email" type="email" required maxlength="254" value="${input.form?.email ?? ''}" />
          <label for="role">Role</label>
          ${roleSelect('role', input.form?.role ?? 'viewer')}
          <button type="submit">Create an invitation link</button>
        </form>
        ${invitationsSection(viewer, input.invitations, input.now)}`
    : html`<p class="hint">Owners of ${viewer.account.name} invite teammates and change their roles.</p>`;
  return page({
    title: 'Team',
    viewer,
    active: 'account',
    body: html`${tabs(viewer, 'team')} ${input.message ? notice(input.message.kind, input.message.text) : ''}
      ${input.invited ? invitedCard(input.invited) : ''}
      <table class="data">
        <caption class="visually-hidden">
          Members of ${viewer.account.name}
        </caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Two-factor</th>
            <th scope="col">Last sign-in</th>
            ${owner ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${members.map((m) => memberRow(viewer, m))}
        </tbody>
      </table>
      ${owner ? html`<p class="hint">Changing a member's role or removing them signs them out everywhere.</p>` : ''} ${invite}`,
  });
}

const LINK_STATES: Record<LinkState, { status: number; text: string }> = {
  unknown: { status: 404, text: 'This invitation link is not known. Check that it was copied whole, or ask for a new one.' },
  used: { status: 410, text: 'This invitation was already used. Sign in with the password chosen then.' },
  revoked: { status: 410, text: 'This invitation was revoked by an owner of the account. Ask them for a new one if it was a mistake.' },
  expired: { status: 410, text: 'This invitation has expired. Ask an owner of the account for a new one.' },
};

/** Why a link cannot be accepted, and the status it is answered with. */
export function linkRefused(state: LinkState): { status: number; body: string } {
  const { status, text } = LINK_STATES[state];
  return {
    status,
    body: page({
      title: 'Invitation not valid',
      body: html`${notice('error', text)}
        <p><a href="/signin">Sign in</a></p>`,
    }),
  };
}

/** The invitee's page: choose a password to join the account. */
export function acceptPage(input: {
  csrfToken: string;
  token: string;
  invitation: Invitation;
  accountName: string;
  error?: string;
}): string {
  const { invitation } = input;
  return page({
    title: `Join ${input.accountName}`,
    body: html`${input.error ? notice('error', input.error) : ''}
      <form method="post" action="/invite/${input.token}" class="card narrow">
        ${csrfField(input.csrfToken)}
        <p>You are invited as <strong>${invitation.email}</strong>, with the role <strong>${invitation.role}</strong>.</p>
        <input type="text" name="username" autocomplete="username" value="${invitation.email}" hidden readonly />
        <label for="password">Choose a password (at least 12 characters)</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required maxlength="256" />
        <label for="confirm">The password again</label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength="256" />
        <button type="submit">Join and sign in</button>
      </form>`,
  });
}

/** Asks before removing a member, naming them: email, role, two-factor and last sign-in. */
export function confirmRemovalPage(input: { viewer: Viewer; member: Member }): string {
  const { viewer, member } = input;
  const { user } = member;
  return confirmPage({
    viewer,
    active: 'account',
    action: 'remove-member',
    title: 'Remove member',
    question: `Remove ${user.email} from ${viewer.account.name}?`,
    facts: [
      ['Email', user.email],
      ['Role', user.role],
      ['Two-factor', user.twoFactorSince ? 'on' : 'off'],
      ['Last sign-in', member.lastSignIn ? formatTime(member.lastSignIn) : 'never'],
    ],
    effect: `They are signed out everywhere at once and can no longer sign in to ${viewer.account.name}; their audit entries stay. To bring them back, invite them again.`,
    formAction: `/account/team/members/${user.id}/remove`,
    button: 'Remove member',
    danger: true,
    cancel: '/account/team',
  });
}
