import { Router } from 'express';
import { requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { csvFileName, csvRow, startCsv } from '../http/csv';
import { AUDIT_PAGE_SIZE } from '../services/audit-log.service';
import { auditCsvHeader, auditCsvRow, auditPage } from '../views/audit.view';
import { auditQueryString, chosenAudit } from './audit-filter';

/** The audit log: the same entries for owners and viewers, always of their own account only. */
export function auditRoutes(deps: Pick<DashboardDeps, 'viewers' | 'audit' | 'clock' | 'logger'>): Router {
  const router = Router();
  router.get('/audit', requireViewer(deps.viewers), async (req, res) => {
    const chosen = chosenAudit(req);
    const viewer = viewerOf(res);
    const [entries, choices] = await Promise.all([
      deps.audit.page(viewer.account.id, { beforeId: chosen.before, filter: chosen.filter }),
      deps.audit.choices(viewer.account.id),
    ]);
    const older =
      entries.length === AUDIT_PAGE_SIZE ? `/audit${auditQueryString(chosen.query, { before: entries[entries.length - 1]!.id })}` : null;
    res.setHeader('Cache-Control', 'no-store');
    res.send(auditPage({ viewer, entries, olderHref: older, query: chosen.query, choices, paged: chosen.before !== undefined }));
  });

  router.get('/audit.csv', requireViewer(deps.viewers), async (req, res) => {
    const chosen = chosenAudit(req);
    const { account } = viewerOf(res);
    const batches = deps.audit.all(account.id, chosen.filter);
    // The first batch is read before answering, so a failure then is still an error page.
    const first = await batches.next();
    startCsv(res, csvFileName(['audit-log', account.name, new Date(deps.clock()).toISOString().slice(0, 10)]), auditCsvHeader);
    try {
      if (!first.done) res.write(first.value.map((e) => csvRow(auditCsvRow(e))).join(''));
      for await (const batch of batches) res.write(batch.map((e) => csvRow(auditCsvRow(e))).join(''));
      res.end();
    } catch (error) {
      deps.logger.warn({ err: error }, 'audit export cut short');
      // Headers are gone: cutting the connection tells the client the file is incomplete.
      res.destroy();
    }
  });
  return router;
}
