import { Router } from 'express';
import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error';
import { listKeys } from '../../shared/credentials/key.repository';
import { acknowledgeAnomaly, listAnomalies } from '../../shared/traffic/patterns/anomaly.repository';
import { auditViewer } from '../audit';
import { requireOwner, requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { formBody, parseForm } from '../http/form';
import { requestGuards } from '../http/request-guards';
import { patternsPage } from '../views/patterns.view';

/** How many acknowledged patterns the page keeps showing below the open ones. */
export const ACKNOWLEDGED_SHOWN = 50;

const actionForm = z.object({ _csrf: z.string() });

export function patternsRoutes(deps: DashboardDeps): Router {
  const router = Router();
  const viewer = requireViewer(deps.db);

  router.get('/patterns', viewer, async (req, res) => {
    const v = viewerOf(res);
    const accountId = v.account.id;
    const [open, all, keys] = await Promise.all([
      listAnomalies(deps.db, { accountId }),
      listAnomalies(deps.db, { accountId, includeAcknowledged: true, limit: ACKNOWLEDGED_SHOWN + 100 }),
      listKeys(deps.db, accountId),
    ]);
    const acknowledged = all.filter((a) => a.acknowledgedAt).slice(0, ACKNOWLEDGED_SHOWN);
    res.setHeader('Cache-Control', 'no-store');
    res.send(patternsPage({ viewer: v, open, acknowledged, keys, acknowledgedNow: req.query.done === 'acknowledged' }));
  });

  router.post('/patterns/:id/acknowledge', viewer, formBody, requestGuards, requireOwner, async (req, res) => {
    const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).safeParse(req.params.id);
    if (!id.success) throw new AppError('NOT_FOUND', 'No such unusual pattern in this account');
    parseForm(actionForm, req);
    const { user, account } = viewerOf(res);
    const now = deps.clock();
    const anomaly = await acknowledgeAnomaly(deps.db, { accountId: account.id, role: user.role, name: user.email }, id.data, now);
    // Acknowledging twice keeps the first acknowledgement: only the request that made it is audited.
    if (anomaly.acknowledgedAt === new Date(now).toISOString()) {
      await auditViewer(deps, req, res, 'pattern.acknowledge', { id: anomaly.keyId, environment: anomaly.environment });
    }
    res.redirect(303, '/patterns?done=acknowledged');
  });

  return router;
}
