import { lockEventUsers } from '../../shared/db/locks';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
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

/**
 * Serialises with erasure and test-data resets (docs/adr/0002-exactly-once-outcomes.md): takes
 * the users' advisory locks (test tenants also share the reset lock), then drops the decisions
 * and outcomes an erasure or reset issued after has made void. Records dropped decisions and
 * outcomes in `result`.
 */
export async function dropVoided({ tx, tenant, deps, result }: TenantBatch, resolved: ResolvedEvents): Promise<LiveEvents> {
  const { hashUser } = deps;
  const { decisions, sealed } = resolved;
  const userIds = [...new Set([...decisions.map((d) => d.userId), ...[...sealed.values()].map((d) => d.userId)])].sort(compareStrings);
  await lockEventUsers(tx, tenant, userIds);

  // An outcome's user hash is sealed in its requestId; a decision's user is hashed here.
  const sealedHash = new Map([...sealed.values()].map((d) => [d.userId, d.userHash] as const));
  const hashOf = new Map(userIds.map((userId) => [userId, sealedHash.get(userId) ?? hashUser(tenant, userId)] as const));
  const { erasedAt: erased, resetAt } = await findVoids(tx, tenant, [...hashOf.values()]);
  const voided = (hash: string | undefined, issuedAt: number) => {
    const erasedAt = hash === undefined ? undefined : erased.get(hash);
    return (erasedAt !== undefined && erasedAt >= issuedAt) || (resetAt !== undefined && resetAt >= issuedAt);
  };

  const kept = decisions.filter((d) => {
    const drop = voided(hashOf.get(d.userId), d.issuedAt);
    if (drop) result.droppedDecisions.add(d.requestId);
    return !drop;
  });
  const outcomes: LiveEvents['outcomes'] = [];
  for (const job of resolved.outcomes) {
    const decision = sealed.get(job.requestId)!;
    if (voided(hashOf.get(decision.userId), decision.issuedAt)) result.droppedOutcomes.add(job.requestId);
    else outcomes.push({ job, decision });
  }
  return { decisions: kept, outcomes, hashOf };
}
