import { lockEventUsers } from '../../shared/db/locks';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { readRequestIdClaims } from '../../shared/keys/request-id';
import { compareStrings } from '../../shared/util/compare';
import type { StoredDecision, TenantBatch } from './event-batch';
import { findVoids } from './events.repository';
import type { ResolvedEvents } from './resolve-decisions';

/** What is left of a tenant's events once erasures and resets have voided theirs. */
export interface LiveEvents {
  /** Decisions to store. */
  decisions: DecisionJob[];
  /** Outcomes to apply, each with its decision. */
  outcomes: Array<{ job: OutcomeJob; decision: StoredDecision }>;
  /** The keyed hash of each user of the batch. */
  hashOf: Map<string, string>;
}

const toStored = (d: DecisionJob): StoredDecision => ({
  userId: d.userId,
  choice: d.choice,
  probabilities: d.probabilities,
  context: { taskComplexity: d.context.complexity, taskType: d.context.taskType },
  issuedAt: d.issuedAt,
});

/**
 * Serialises with erasure and test-data resets (docs/adr/0002-exactly-once-outcomes.md): takes
 * the users' advisory locks (test tenants also share the reset lock), then drops the decisions
 * and outcomes an erasure or reset issued after has made void. Records dropped decisions and
 * outcomes, and outcomes whose decision is nowhere yet (retried), in `result`.
 */
export async function dropVoided({ tx, tenant, deps, result }: TenantBatch, resolved: ResolvedEvents): Promise<LiveEvents> {
  const { hashUser } = deps;
  const { decisions, stored } = resolved;
  const userIds = [...new Set([...decisions.map((d) => d.userId), ...[...stored.values()].map((d) => d.userId)])].sort(compareStrings);
  await lockEventUsers(tx, tenant, userIds);

  const decided = new Map(decisions.map((d) => [d.requestId, d] as const));
  const missingClaims = new Map(
    resolved.outcomes
      .filter((o) => !stored.has(o.requestId) && !decided.has(o.requestId))
      .map((o) => [o.requestId, readRequestIdClaims(o.requestId)] as const),
  );
  const hashOf = new Map(userIds.map((userId) => [userId, hashUser(tenant, userId)] as const));
  const { erasedAt: erased, resetAt } = await findVoids(tx, tenant, [
    ...hashOf.values(),
    ...[...missingClaims.values()].flatMap((claims) => (claims ? [claims.userHash] : [])),
  ]);
  const voided = (hash: string | undefined, issuedAt: number) => {
    const erasedAt = hash === undefined ? undefined : erased.get(hash);
    return (erasedAt !== undefined && erasedAt >= issuedAt) || (resetAt !== undefined && resetAt >= issuedAt);
  };

  const kept = decisions.filter((d) => {
    const drop = voided(hashOf.get(d.userId), d.issuedAt);
    if (drop) result.droppedDecisions.add(d.requestId);
    return !drop;
  });
  const decisionOf = new Map<string, StoredDecision>();
  for (const [requestId, d] of stored) if (!voided(hashOf.get(d.userId), d.issuedAt)) decisionOf.set(requestId, d);
  for (const d of kept) decisionOf.set(d.requestId, toStored(d));
  const outcomes: LiveEvents['outcomes'] = [];
  for (const job of resolved.outcomes) {
    const decision = decisionOf.get(job.requestId);
    if (decision) {
      outcomes.push({ job, decision });
      continue;
    }
    const claims = missingClaims.get(job.requestId);
    if (claims === null || claims === undefined || voided(claims.userHash, claims.issuedAt)) result.droppedOutcomes.add(job.requestId);
    else result.missingOutcomes.add(job.requestId);
  }
  return { decisions: kept, outcomes, hashOf };
}
