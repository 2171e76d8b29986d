import { Router } from 'express';
import { requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { worldMap } from '../geo/world-map';
import { geographyPage } from '../views/geography.view';
import { trafficPage } from '../views/traffic.view';
import { chosenScope } from './traffic-scope';

/** Traffic and geography pages: read-only views of the traffic the worker flushed to Postgres. */
export function trafficRoutes(deps: Pick<DashboardDeps, 'viewers' | 'accountKeys' | 'traffic' | 'clock'>): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);

  router.get('/traffic', viewer, (_req, res) => res.redirect(303, '/traffic/test'));
  router.get('/geography', viewer, (_req, res) => res.redirect(303, '/geography/test'));

  router.get('/traffic/:env', viewer, async (req, res) => {
    const chosen = await chosenScope(deps.accountKeys, req, res);
    const { series, usage, rotation } = await deps.traffic.overview(chosen, deps.clock());
    res.setHeader('Cache-Control', 'no-store');
    res.send(trafficPage({ viewer: viewerOf(res), picker: { base: '/traffic', ...chosen }, series, rotation, usage }));
  });

  router.get('/geography/:env', viewer, async (req, res) => {
    const chosen = await chosenScope(deps.accountKeys, req, res);
    const [counts, map] = await Promise.all([deps.traffic.countries(chosen, deps.clock()), worldMap()]);
    res.setHeader('Cache-Control', 'no-store');
    res.send(geographyPage({ viewer: viewerOf(res), picker: { base: '/geography', ...chosen }, counts, map }));
  });

  return router;
}
