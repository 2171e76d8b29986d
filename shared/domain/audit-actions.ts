/** What the audit log records: every key action, acknowledged unusual pattern, sign-in and sign-out. */
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
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
