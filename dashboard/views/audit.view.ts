import type { AuditEntry } from '../../shared/audit/audit.repository';
import { formatTime } from './format';
import { html } from './html';
import { page, type Viewer } from './layout';
import type { AuditAction } from '../../shared/domain/audit-actions';

const ACTION_LABELS: Record<AuditAction, string> = {
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
};

export function auditPage(viewer: Viewer, entries: AuditEntry[], olderHref: string | null): string {
  const rows = entries.map(
    (e) =>
      html`<tr>
        <td data-label="When"><time datetime="${e.createdAt}">${formatTime(e.createdAt)}</time></td>
        <td data-label="Who">${e.actor}</td>
        <td data-label="What">${ACTION_LABELS[e.action] ?? e.action}${e.subject ? ` (${e.subject})` : ''}</td>
        <td data-label="Key">${e.keyId ? html`<code>${e.keyId}</code>${e.environment ? ` (${e.environment})` : ''}` : '—'}</td>
        <td data-label="Country">${e.country ?? 'unknown'}</td>
      </tr>`,
  );
  return page({
    title: 'Audit log',
    viewer,
    active: 'audit',
    body: html`<p class="hint">
        Every key action and sign-in of this account, newest first. The country comes from the client's address, which is not kept.
      </p>
      ${
        entries.length === 0
          ? html`<p>Nothing recorded yet.</p>`
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
