import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import type { StoredDecision, TenantBatch } from './event-batch';
import { findDecisions } from './events.repository';

/** A tenant's events with each outcome's decision found where it is. */
export interface ResolvedEvents {
  /** Decisions to store: the batch's own, and those read from their queued jobs for its outcomes. */
  decisions: DecisionJob[];
  /**
   * Decisions of the batch's outcomes known apart from the decisions to store, by request id:
   * sealed in the requestId (version 4), or, for earlier ids, already in Postgres.
   */
  stored: Map<string, StoredDecision>;
  /** The batch's outcomes, each request id once. */
  outcomes: OutcomeJob[];
}

/**
 * Finds each outcome's decision: sealed in its requestId, or — for ids issued before decisions
 * were sealed in them — in Postgres, in this batch, or in its decision job still queued, so
 * outcomes never wait on decision jobs (docs/adr/0010-group-commit.md).
 */
export async function resolveDecisions(
  { tx, tenant, deps }: TenantBatch,
  decisions: DecisionJob[],
  outcomes: OutcomeJob[],
): Promise<ResolvedEvents> {
  const unique = [...new Map(outcomes.map((o) => [o.requestId, o] as const)).values()];
  const sealed = new Map<string, StoredDecision>();
  const earlier: OutcomeJob[] = [];
  for (const outcome of unique) {
    const carried = deps.carriedDecision(tenant, outcome.requestId);
    if (carried) sealed.set(outcome.requestId, carried);
    else earlier.push(outcome);
  }
  if (earlier.length === 0) return { decisions, stored: sealed, outcomes: unique };
  const stored = await findDecisions(
    tx,
    tenant,
    earlier.map((o) => o.requestId),
  );
  for (const [requestId, decision] of sealed) stored.set(requestId, decision);
  const inBatch = new Set(decisions.map((d) => d.requestId));
  const unresolved = unique.filter((o) => !stored.has(o.requestId) && !inBatch.has(o.requestId));
  if (unresolved.length === 0) return { decisions, stored, outcomes: unique };
  const queued = (await Promise.all(unresolved.map((o) => deps.findQueuedDecision(o.requestId)))).filter(
    (d): d is DecisionJob => d !== null && d.accountId === tenant.accountId && d.environment === tenant.environment,
  );
  // A decision job may have completed (and been removed) since the first read: read again.
  const queuedIds = new Set(queued.map((d) => d.requestId));
  const recheck = unresolved.filter((o) => !queuedIds.has(o.requestId)).map((o) => o.requestId);
  for (const [requestId, decision] of await findDecisions(tx, tenant, recheck)) stored.set(requestId, decision);
  return { decisions: [...decisions, ...queued], stored, outcomes: unique };
}
