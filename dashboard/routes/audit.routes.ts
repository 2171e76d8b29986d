import { Router } from 'express';
import { z } from 'zod';
import { requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { AUDIT_PAGE_SIZE } from '../services/audit-log.service';
import { auditPage } from '../views/audit.view';

export function auditRoutes(deps: Pick<DashboardDeps, 'viewers' | 'audit'>): Router {
  const router = Router();
  router.get('/audit', requireViewer(deps.viewers), async (req, res) => {
    const before = z
      .string()
      .regex(/^\d{1,18}$/)
      .safeParse(req.query.before);
    const viewer = viewerOf(res);
    const entries = await deps.audit.page(viewer.account.id, before.success ? before.data : undefined);
    const older = entries.length === AUDIT_PAGE_SIZE ? `/audit?before=${entries[entries.length - 1]!.id}` : null;
    res.setHeader('Cache-Control', 'no-store');
    res.send(auditPage(viewer, entries, older));
  });
  return router;
}
