import { Router } from 'express';
import { quotaForecasts } from '../../shared/traffic/quota-forecast';
import { countryCounts, trafficSeries } from '../../shared/traffic/traffic-queries';
import { requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { worldMap } from '../geo/world-map';
import { geographyPage } from '../views/geography.view';
import { trafficPage } from '../views/traffic.view';
import { chosenScope, rotationPartner } from './traffic-scope';

/** Traffic and geography pages: read-only views of the traffic the worker flushed to Postgres. */
export function trafficRoutes(deps: DashboardDeps): Router {
  const router = Router();
  const viewer = requireViewer(deps.db);

  router.get('/traffic', viewer, (_req, res) => res.redirect(303, '/traffic/test'));
  router.get('/geography', viewer, (_req, res) => res.redirect(303, '/geography/test'));

  router.get('/traffic/:env', viewer, async (req, res) => {
    const chosen = await chosenScope(deps.db, req, res);
    const now = deps.clock();
    const accountId = viewerOf(res).account.id;
    const pair = chosen.key ? rotationPartner(chosen.key, chosen.keys, now) : null;
    const [series, usage, rotation] = await Promise.all([
      trafficSeries(deps.db, chosen.scope, chosen.window, now),
      chosen.environment === 'live' ? quotaForecasts(deps.db, { accountId, keyId: chosen.key?.id, now }) : null,
      pair
        ? Promise.all([
            trafficSeries(deps.db, { ...chosen.scope, keyId: pair.old.id }, chosen.window, now),
            trafficSeries(deps.db, { ...chosen.scope, keyId: pair.next.id }, chosen.window, now),
          ]).then(([oldSeries, nextSeries]) => ({ ...pair, oldSeries, nextSeries }))
        : null,
    ]);
    res.setHeader('Cache-Control', 'no-store');
    res.send(trafficPage({ viewer: viewerOf(res), picker: { base: '/traffic', ...chosen }, series, rotation, usage }));
  });

  router.get('/geography/:env', viewer, async (req, res) => {
    const chosen = await chosenScope(deps.db, req, res);
    const [counts, map] = await Promise.all([countryCounts(deps.db, chosen.scope, chosen.window, deps.clock()), worldMap()]);
    res.setHeader('Cache-Control', 'no-store');
    res.send(geographyPage({ viewer: viewerOf(res), picker: { base: '/geography', ...chosen }, counts, map }));
  });

  return router;
}
