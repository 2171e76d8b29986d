import { Router, type Response } from 'express';
import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error';
import { viewerActor } from '../audit';
import { requireOwner, requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { formBody, parseForm } from '../http/form';
import { refusedForm } from '../http/refused-form';
import { submitOnceThenRedirect } from '../http/submit-once';
import { requestGuards } from '../http/request-guards';
import { repeatState } from '../services/form-tokens.service';
import { patternsPage, type PatternsPageInput } from '../views/patterns.view';

const actionForm = z.object({ _csrf: z.string(), _once: z.string().optional() });

export function patternsRoutes(deps: Pick<DashboardDeps, 'viewers' | 'patterns' | 'formTokens' | 'countryOf' | 'clock'>): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);

  const render = async (res: Response, notices: Pick<PatternsPageInput, 'acknowledgedNow' | 'repeat' | 'refusal'>) => {
    const v = viewerOf(res);
    const { open, acknowledged, keys } = await deps.patterns.overview(v.account.id);
    res.setHeader('Cache-Control', 'no-store');
    res.send(patternsPage({ viewer: v, open, acknowledged, keys, ...notices }));
  };

  router.get('/patterns', viewer, async (req, res) => {
    await render(res, { acknowledgedNow: req.query.done === 'acknowledged', repeat: repeatState(req.query) });
  });

  router.post('/patterns/:id/acknowledge', viewer, formBody, requestGuards, requireOwner, async (req, res) => {
    const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).safeParse(req.params.id);
    if (!id.success) throw new AppError('NOT_FOUND', 'No such unusual pattern in this account');
    parseForm(actionForm, req);
    await submitOnceThenRedirect(deps.formTokens, req, res, '/patterns', async () => {
      await deps.patterns.acknowledge(viewerOf(res).account.id, viewerActor(deps, req, res), id.data, deps.clock());
      return '/patterns?done=acknowledged';
    });
  });

  router.use(
    refusedForm(async (req, res, refusal) => {
      if (!req.path.startsWith('/patterns/')) return false;
      await render(res, { acknowledgedNow: false, refusal });
      return true;
    }),
  );

  return router;
}
