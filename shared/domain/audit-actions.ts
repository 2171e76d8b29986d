/**
 * What the audit log records: every key action, acknowledged unusual pattern, sign-in and
 * sign-out, every change to a user's password, two-factor sign-in and sessions, and every change
 * to the account's team (invitations, roles, removals), and every change to its webhook
 * endpoints (an endpoint disabled for failing too long included).
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
  'webhook.create',
  'webhook.update',
  'webhook.enable',
  'webhook.disable',
  'webhook.delete',
  'webhook.rotate-secret',
  'webhook.auto-disable',
  'webhook.test',
  'webhook.redeliver',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
