import { Router } from 'express';
import { z } from 'zod';
import { listAudit } from '../../shared/audit/audit.repository';
import { requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { auditPage } from '../views/audit.view';

export const AUDIT_PAGE_SIZE = 50;

export function auditRoutes(deps: DashboardDeps): Router {
  const router = Router();
  router.get('/audit', requireViewer(deps.db), async (req, res) => {
    const before = z
      .string()
      .regex(/^\d{1,18}$/)
      .safeParse(req.query.before);
    const viewer = viewerOf(res);
    const entries = await listAudit(deps.db, viewer.account.id, AUDIT_PAGE_SIZE, before.success ? before.data : undefined);
    const older = entries.length === AUDIT_PAGE_SIZE ? `/audit?before=${entries[entries.length - 1]!.id}` : null;
    res.setHeader('Cache-Control', 'no-store');
    res.send(auditPage(viewer, entries, older));
  });
  return router;
}
