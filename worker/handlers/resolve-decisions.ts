import type { DbOrTx } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import type { ApplyDeps, StoredDecision } from './event-batch';
import { findDecisions } from './events.repository';

/** A tenant's events with each outcome's decision found where it is. */
export interface ResolvedEvents {
  /** Decisions to store: the batch's own, and those read from their queued jobs for its outcomes. */
  decisions: DecisionJob[];
  /** Decisions of the batch's outcomes already in Postgres, by request id. */
  stored: Map<string, StoredDecision>;
  /** The batch's outcomes, each request id once. */
  outcomes: OutcomeJob[];
}

/**
 * Finds each outcome's decision: in Postgres, in this batch, or — when its own job has not
 * been applied yet — in that queued job, so outcomes never wait on decision jobs
 * (docs/adr/0010-group-commit.md).
 */
export async function resolveDecisions(
  tx: DbOrTx,
  tenant: Tenant,
  decisions: DecisionJob[],
  outcomes: OutcomeJob[],
  findQueuedDecision: ApplyDeps['findQueuedDecision'],
): Promise<ResolvedEvents> {
  const unique = [...new Map(outcomes.map((o) => [o.requestId, o] as const)).values()];
  const stored = await findDecisions(
    tx,
    tenant,
    unique.map((o) => o.requestId),
  );
  const inBatch = new Set(decisions.map((d) => d.requestId));
  const unresolved = unique.filter((o) => !stored.has(o.requestId) && !inBatch.has(o.requestId));
  if (unresolved.length === 0) return { decisions, stored, outcomes: unique };
  const queued = (await Promise.all(unresolved.map((o) => findQueuedDecision(o.requestId)))).filter(
    (d): d is DecisionJob => d !== null && d.accountId === tenant.accountId && d.environment === tenant.environment,
  );
  // A decision job may have completed (and been removed) since the first read: read again.
  const queuedIds = new Set(queued.map((d) => d.requestId));
  const recheck = unresolved.filter((o) => !queuedIds.has(o.requestId)).map((o) => o.requestId);
  for (const [requestId, decision] of await findDecisions(tx, tenant, recheck)) stored.set(requestId, decision);
  return { decisions: [...decisions, ...queued], stored, outcomes: unique };
}
