/**
 * What the audit log records: every key action, acknowledged unusual pattern, sign-in and
 * sign-out, and every change to a user's password, two-factor sign-in and sessions.
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
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
