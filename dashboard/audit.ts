import type { Request, Response } from 'express';
import type { Environment } from '../shared/domain/environment';
import { viewerOf } from './auth/current-user';
import type { DashboardDeps } from './dependencies';
import type { AuditAction } from '../shared/domain/audit-actions';
import type { DashboardActor } from './services/audit-log.service';

/** The signed-in viewer as the audit log records them, with the client's country. */
export function viewerActor(deps: Pick<DashboardDeps, 'countryOf'>, req: Request, res: Response): DashboardActor {
  return { user: viewerOf(res).user, country: deps.countryOf(req.ip) };
}

/** Writes what the signed-in viewer just did to the account's audit log, with the client's country. */
export function auditViewer(
  deps: Pick<DashboardDeps, 'audit' | 'countryOf'>,
  { req, res, action, key }: { req: Request; res: Response; action: AuditAction; key?: { id: string; environment: Environment } },
): Promise<void> {
  return deps.audit.recordBy(viewerActor(deps, req, res), action, key);
}
