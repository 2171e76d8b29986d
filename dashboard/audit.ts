import type { Request, Response } from 'express';
import { recordAudit } from '../shared/audit/audit.repository';
import type { Environment } from '../shared/domain/environment';
import { viewerOf } from './auth/current-user';
import type { DashboardDeps } from './dependencies';
import type { AuditAction } from '../shared/domain/audit-actions';

/** Writes what the signed-in viewer just did to the account's audit log, with the client's country. */
export function auditViewer(
  deps: DashboardDeps,
  req: Request,
  res: Response,
  action: AuditAction,
  key?: { id: string; environment: Environment },
): Promise<void> {
  const { user } = viewerOf(res);
  return recordAudit(deps.db, {
    accountId: user.accountId,
    actor: user.email,
    action,
    keyId: key?.id,
    environment: key?.environment,
    country: deps.countryOf(req.ip),
  });
}
