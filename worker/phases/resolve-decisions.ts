import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import type { StoredDecision, TenantBatch } from './event-batch';

/** A tenant's events with each outcome's decision opened from its requestId. */
export interface ResolvedEvents {
  /** Decisions to log (the decision log is an analytics record: no outcome reads it). */
  decisions: DecisionJob[];
  /** The decision sealed in each outcome's requestId, by request id. */
  sealed: Map<string, StoredDecision>;
  /** The batch's outcomes, each request id once. */
  outcomes: OutcomeJob[];
}

/** Thrown for an outcome whose requestId holds no decision of its tenant: bad data, never retried. */
export class UnreadableRequestIdError extends Error {
  constructor(readonly requestIds: string[]) {
    super(`no decision of this tenant sealed in ${requestIds.join(', ')}`);
    this.name = 'UnreadableRequestIdError';
  }
}

/**
 * Opens the decision sealed in each outcome's requestId (the API verified the id before it
 * enqueued the outcome, docs/adr/0010-group-commit.md): an outcome never waits on anything else.
 */
export function resolveDecisions({ tenant, deps }: TenantBatch, decisions: DecisionJob[], outcomes: OutcomeJob[]): ResolvedEvents {
  const unique = [...new Map(outcomes.map((o) => [o.requestId, o] as const)).values()];
  const sealed = new Map<string, StoredDecision>();
  const unreadable: string[] = [];
  for (const outcome of unique) {
    const carried = deps.carriedDecision(tenant, outcome.requestId);
    if (carried) sealed.set(outcome.requestId, carried);
    else unreadable.push(outcome.requestId);
  }
  if (unreadable.length > 0) throw new UnreadableRequestIdError(unreadable);
  return { decisions, sealed, outcomes: unique };
}
