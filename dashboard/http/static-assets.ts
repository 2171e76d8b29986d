import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
import { projectRoot } from '../../shared/config/dev-env';

/**
 * The dashboard's own files, read once at start and served under /assets/ — nothing comes from
 * a CDN. Pages added later list their files (or files of an npm package, by require.resolve) here.
 */
export const ASSETS: Record<string, { file: string; type: string }> = {
  'dashboard.css': { file: path.join(projectRoot(), 'dashboard', 'assets', 'dashboard.css'), type: 'text/css; charset=utf-8' },
  'dashboard.js': { file: path.join(projectRoot(), 'dashboard', 'assets', 'dashboard.js'), type: 'text/javascript; charset=utf-8' },
  'charts.js': { file: path.join(projectRoot(), 'dashboard', 'assets', 'charts.js'), type: 'text/javascript; charset=utf-8' },
  'favicon.svg': { file: path.join(projectRoot(), 'dashboard', 'assets', 'favicon.svg'), type: 'image/svg+xml' },
  'uPlot.iife.min.js': { file: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

export function staticAssets(): Router {
  const loaded = new Map(Object.entries(ASSETS).map(([name, asset]) => [name, { body: readFileSync(asset.file), type: asset.type }]));
  const router = Router();
  router.get('/assets/:name', (req, res, next) => {
    const asset = loaded.get(String(req.params.name));
    if (!asset) return next();
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type(asset.type).send(asset.body);
  });
  return router;
}
