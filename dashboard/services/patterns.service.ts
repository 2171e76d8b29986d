import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import type { Db } from '../../shared/db/database';
import { acknowledgeAnomaly, listAnomalies, type Anomaly } from '../../shared/traffic/patterns/anomaly.repository';
import type { AccountKeys } from './account-keys.service';
import type { AuditLog, DashboardActor } from './audit-log.service';

/** How many acknowledged patterns the page keeps showing below the open ones. */
export const ACKNOWLEDGED_SHOWN = 50;

/** An account's unusual patterns: the open ones, the latest acknowledged, and the keys they name. */
export interface PatternsOverview {
  open: Anomaly[];
  acknowledged: Anomaly[];
  keys: ApiKeyRecord[];
}

/** The unusual patterns the worker found in an account's traffic, and their acknowledgement. */
export class Patterns {
  constructor(
    private readonly db: Db,
    private readonly keys: AccountKeys,
    private readonly audit: AuditLog,
  ) {}

  async overview(accountId: string): Promise<PatternsOverview> {
    const [open, all, keys] = await Promise.all([
      listAnomalies(this.db, { accountId }),
      listAnomalies(this.db, { accountId, includeAcknowledged: true, limit: ACKNOWLEDGED_SHOWN + 100 }),
      this.keys.list(accountId),
    ]);
    return { open, acknowledged: all.filter((a) => a.acknowledgedAt).slice(0, ACKNOWLEDGED_SHOWN), keys };
  }

  /**
   * Acknowledges a pattern of `accountId` (viewers may not: FORBIDDEN; another account's is
   * NOT_FOUND). Acknowledging twice keeps the first acknowledgement: only the call that made it
   * is audited.
   */
  async acknowledge(accountId: string, by: DashboardActor, anomalyId: number, now: number): Promise<void> {
    const anomaly = await acknowledgeAnomaly(this.db, { accountId, role: by.user.role, name: by.user.email }, anomalyId, now);
    if (anomaly.acknowledgedAt === new Date(now).toISOString()) {
      await this.audit.recordBy(by, 'pattern.acknowledge', { id: anomaly.keyId, environment: anomaly.environment });
    }
  }
}
