import { Router } from 'express';
import { requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { worldMap } from '../geo/world-map';
import { geographyPage } from '../views/geography.view';
import { csvFileName, csvRow, startCsv } from '../http/csv';
import { trafficCsvHeader, trafficCsvRows } from '../views/traffic-csv';
import { trafficPage } from '../views/traffic.view';
import { chosenScope } from './traffic-scope';

/** Traffic and geography pages: read-only views of the traffic the worker flushed to Postgres. */
export function trafficRoutes(deps: Pick<DashboardDeps, 'viewers' | 'accountKeys' | 'traffic' | 'clock'>): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);

  router.get('/traffic', viewer, (_req, res) => res.redirect(303, '/traffic/test'));
  router.get('/geography', viewer, (_req, res) => res.redirect(303, '/geography/test'));

  // Before /traffic/:env, which would take "live.csv" for an environment.
  router.get('/traffic/:env.csv', viewer, async (req, res) => {
    const chosen = await chosenScope(deps.accountKeys, req, res);
    const series = await deps.traffic.series(chosen, deps.clock());
    const { account } = viewerOf(res);
    const who = chosen.key ? [chosen.key.name, chosen.key.last4] : ['all-keys'];
    const day = new Date(deps.clock()).toISOString().slice(0, 10);
    startCsv(res, csvFileName(['traffic', account.name, chosen.environment, ...who, chosen.window, day]), trafficCsvHeader);
    res.end(trafficCsvRows(series, chosen.environment, chosen.key).map(csvRow).join(''));
  });

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
