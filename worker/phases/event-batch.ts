import type { DbOrTx } from '../../shared/db/database';
import type { Choice } from '../../shared/domain/arms';
import type { Tenant } from '../../shared/domain/environment';
import type { Engine } from '../../shared/domain/engine/engine';
import type { DecisionContext, SelectionProbabilities } from '../../shared/domain/learner';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import type { StoredPopulation } from '../../shared/population/population.repository';
import type { StoredProfile } from '../../shared/profile/profile';
import type { KnownProfiles } from './known-profiles';
import type { PriorMemo } from './population-prior';

/** One event of a job: a decision to log or an outcome to apply. */
export type BatchEvent = { kind: 'decision'; data: DecisionJob } | { kind: 'outcome'; data: OutcomeJob };

/** One job waiting in a batch, with the callbacks that settle its BullMQ processor. */
export type BatchItem =
  | { kind: 'decision'; data: DecisionJob; resolve: (result: string) => void; reject: (error: unknown) => void }
  | { kind: 'outcome'; data: OutcomeJob; resolve: (result: string) => void; reject: (error: unknown) => void };

/** What an outcome is learned from: its decision, as sealed in its requestId. */
export type StoredDecision = {
  userId: string;
  /** userHash(secret, tenant, userId), as the requestId carries it. */
  userHash: string;
  choice: Choice;
  probabilities: SelectionProbabilities;
  context: DecisionContext;
  issuedAt: number;
};

export interface ApplyDeps {
  learner: Engine;
  now: Date;
  /** The decision sealed in a requestId of this tenant, or null when the id holds none (bad data). */
  carriedDecision: (tenant: Tenant, requestId: string) => StoredDecision | null;
  /** userHash(secret, tenant, userId) — erasures are recorded under it. */
  hashUser: (tenant: Tenant, userId: string) => string;
  /** The population priors this process last read or wrote, parsed. */
  priors: PriorMemo;
  /** Profile rows this process has seen committed. */
  knownProfiles: KnownProfiles;
}

/**
 * One tenant's share of a batch as its phases see it: the transaction it is applied in, whose
 * events they are, what applies them, and what it came to so far.
 */
export interface TenantBatch {
  tx: DbOrTx;
  tenant: Tenant;
  deps: ApplyDeps;
  result: TenantBatchResult;
}

export interface TenantBatchResult {
  /** Decision request ids dropped because the user was erased (or test data reset) since. */
  droppedDecisions: Set<string>;
  /** Outcomes newly applied; others in the batch had been applied before (retries). */
  appliedOutcomes: Set<string>;
  /** Outcomes dropped because their user was erased (or test data reset) after the decision. */
  droppedOutcomes: Set<string>;
  /** Every outcome of the batch, applied or not, by request id: its user's hash (as its requestId carries it). */
  outcomeUsers: Map<string, string>;
  /** Profiles changed by this batch or touched by a retried outcome, to refresh in the cache. */
  updatedProfiles: StoredProfile[];
  /** The tenant's population prior after this batch's outcomes, when they changed it. */
  population: StoredPopulation | null;
  /** Users with only decisions here whose profile row exists once the batch commits. */
  seededProfiles: Array<{ userId: string; generation: string }>;
  /** Users whose stored learner state was unreadable and replaced by a fresh one (`issue`: what was wrong), by user hash. */
  replacedStates: Array<{ userHash: string; issue: string }>;
}
