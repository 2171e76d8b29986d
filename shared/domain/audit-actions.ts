/**
 * What the audit log records: every key action, acknowledged unusual pattern, sign-in and
 * sign-out, every change to a user's password, two-factor sign-in and sessions, and every change
 * to the account's team (invitations, roles, removals).
 */
export const AUDIT_ACTIONS = [
  'key.create',
  'key.revoke',
  'key.delete',
  'key.rotate',
  'pattern.acknowledge',
  'session.sign-in',
  'session.sign-in-failed',
  'session.sign-in-refused',
  'session.sign-out',
  'session.code-failed',
  'session.end-others',
  'password.change',
  'two-factor.enable',
  'two-factor.disable',
  'two-factor.reset',
  'two-factor.recovery-code-used',
  'account.two-factor-required',
  'account.two-factor-optional',
  'team.invite',
  'team.invite-revoke',
  'team.invite-accept',
  'team.role-owner',
  'team.role-viewer',
  'team.remove',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
