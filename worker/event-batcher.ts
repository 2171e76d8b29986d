import { UnrecoverableError } from 'bullmq';
import type { Db } from '../shared/db/database';
import { errorCode, PG_BAD_DATA } from '../shared/errors/pg-errors';
import { retryTransaction } from '../shared/db/transaction-retry';
import { tenantKey, type Tenant } from '../shared/domain/environment';
import type { Engine } from '../shared/domain/engine/engine';
import type { Logger } from '../shared/logger/logger';
import type { WorkerMetrics } from '../shared/metrics/metrics';
import type { ProfileCache } from '../shared/profile/profile-cache.repository';
import type { PopulationCache } from '../shared/population/population-cache.repository';
import type { PendingOutcomes } from '../shared/profile/pending-outcomes.repository';
import { UserHashes } from '../shared/ids/user-hash';
import { openRequestId } from '../shared/ids/request-id';
import { compareStrings } from '../shared/util/compare';
import { isDependencyUnavailable } from '../shared/errors/unavailable';
import { applyTenantEvents } from './phases/apply-events';
import type { BatchEvent, BatchItem, StoredDecision } from './phases/event-batch';
import { KnownProfiles } from './phases/known-profiles';
import { PriorMemo } from './phases/population-prior';
import { UnreadableRequestIdError } from './phases/resolve-decisions';

/** How long a batch with an outcome waits for more jobs: outcomes are awaited by readers. */
export const FLUSH_DELAY_MS = 2;
/**
 * How long a batch of decisions alone waits: nobody awaits a logged decision (an outcome carries
 * its own in its requestId), and each transaction costs the same few statements however many
 * decisions it carries, so a longer wait makes moderate traffic as cheap as a backlog.
 */
export const DECISION_FLUSH_DELAY_MS = 200;
/** A job whose data Postgres refuses, or whose requestId holds no decision, fails for good: retrying cannot help. */
function unrecoverableIfBadData(error: unknown): unknown {
  if (error instanceof UnreadableRequestIdError) return new UnrecoverableError(error.message);
  const code = errorCode(error);
  return code && PG_BAD_DATA.has(code) && error instanceof Error
    ? new UnrecoverableError(`the database refused this job's data: ${error.message}`)
    : error;
}

const MAX_PARALLEL_FLUSHES = 4;

/** What an EventBatcher reads, writes and applies with. */
export interface EventBatcherDeps {
  db: Db;
  cache: ProfileCache;
  populations: PopulationCache;
  pendingOutcomes: PendingOutcomes;
  learner: Engine;
  logger: Logger;
  /** Most jobs applied in one transaction. */
  maxBatch: number;
  /** The deployment secret: user hashes and the decisions sealed in requestIds. */
  secret: string;
  metrics: Pick<WorkerMetrics, 'batchCommitted'>;
}

/**
 * Collects jobs handed over by the BullMQ processor and applies them in batches: one Postgres
 * transaction per batch, grouped per tenant and user. Each job's promise settles with its own
 * result, so BullMQ still completes, retries or fails jobs one by one.
 */
export class EventBatcher {
  private pending: BatchItem[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** When the timer fires (ms since epoch), to move it earlier when an outcome arrives. */
  private timerDue = 0;
  private pendingOutcomeCount = 0;
  private flushing = 0;
  private readonly priors = new PriorMemo();
  private readonly knownProfiles = new KnownProfiles();
  private readonly hashes: UserHashes;

  constructor(private readonly deps: EventBatcherDeps) {
    this.hashes = new UserHashes(deps.secret, 65_536);
  }

  submit(item: BatchEvent): Promise<string> {
    return new Promise((resolve, reject) => {
      // Written out, not spread: a spread followed by more properties is slow per item (docs/adr/0016-hot-path.md).
      this.pending.push(
        item.kind === 'decision'
          ? { kind: 'decision', data: item.data, resolve, reject }
          : { kind: 'outcome', data: item.data, resolve, reject },
      );
      if (item.kind === 'outcome') this.pendingOutcomeCount++;
      this.schedule();
    });
  }

  /**
   * Submits every item of a batch job. Settles once all have: with a summary, or failing the
   * job — unrecoverably only when every failure was (retrying the job re-applies nothing that
   * was applied, docs/adr/0002-exactly-once-outcomes.md).
   */
  async submitAll(items: BatchEvent[]): Promise<string> {
    const settled = await Promise.allSettled(items.map((item) => this.submit(item)));
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    const transient = failures.find((error) => !(error instanceof UnrecoverableError));
    if (transient !== undefined) throw transient;
    if (failures.length > 0) throw new UnrecoverableError(`${failures.length} of ${items.length} items refused: ${String(failures[0])}`);
    const counts = new Map<string, number>();
    for (const s of settled) if (s.status === 'fulfilled') counts.set(s.value, (counts.get(s.value) ?? 0) + 1);
    return [...counts].map(([result, n]) => `${n} ${result}`).join(', ');
  }

  private schedule(): void {
    if (this.flushing >= MAX_PARALLEL_FLUSHES) return; // a finishing flush reschedules
    if (this.pending.length >= this.deps.maxBatch) {
      this.clearTimer();
      void this.flush();
      return;
    }
    if (this.pending.length === 0) return;
    const delay = this.pendingOutcomeCount > 0 ? FLUSH_DELAY_MS : DECISION_FLUSH_DELAY_MS;
    const due = Date.now() + delay;
    if (this.timer && this.timerDue <= due) return;
    this.clearTimer();
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delay);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.deps.maxBatch);
    if (batch.length === 0) return;
    this.pendingOutcomeCount -= batch.reduce((n, item) => n + (item.kind === 'outcome' ? 1 : 0), 0);
    this.flushing++;
    try {
      await this.applyWithFallback(batch);
    } finally {
      this.flushing--;
      this.schedule();
    }
  }

  /**
   * A failing batch is split into single jobs so one bad job cannot fail the others — unless
   * Postgres or Redis is unreachable: then every job would fail alike, and all are retried later.
   */
  private async applyWithFallback(batch: BatchItem[]): Promise<void> {
    try {
      await this.apply(batch);
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(unrecoverableIfBadData(error));
      if (isDependencyUnavailable(error)) return batch.forEach((item) => item.reject(error));
      this.deps.logger.warn({ err: error, size: batch.length }, 'batch failed; applying its jobs one by one');
      for (const item of batch) await this.apply([item]).catch((e: unknown) => item.reject(unrecoverableIfBadData(e)));
    }
  }

  private async apply(batch: BatchItem[]): Promise<void> {
    const byTenant = new Map<string, { tenant: Tenant; items: BatchItem[] }>();
    for (const item of batch) {
      const key = tenantKey(item.data);
      const group = byTenant.get(key) ?? { tenant: { accountId: item.data.accountId, environment: item.data.environment }, items: [] };
      group.items.push(item);
      byTenant.set(key, group);
    }
    const results = await retryTransaction(() =>
      this.deps.db.transaction().execute(async (tx) => {
        const now = new Date();
        const out = [];
        for (const [, { tenant, items }] of [...byTenant.entries()].sort(([a], [b]) => compareStrings(a, b))) {
          const decisions = items.flatMap((i) => (i.kind === 'decision' ? [i.data] : []));
          const outcomes = items.flatMap((i) => (i.kind === 'outcome' ? [i.data] : []));
          out.push({
            tenant,
            result: await applyTenantEvents(
              {
                tx,
                tenant,
                deps: {
                  learner: this.deps.learner,
                  now,
                  carriedDecision: (t, requestId) => this.carriedDecision(t, requestId),
                  hashUser: (t, userId) => this.hashes.of(t, userId),
                  priors: this.priors,
                  knownProfiles: this.knownProfiles,
                },
              },
              { decisions, outcomes },
            ),
          });
        }
        return out;
      }),
    );
    for (const { tenant, result } of results) this.knownProfiles.add(tenant, result.seededProfiles);
    // Counted at commit: should the cache refresh below fail, the retried jobs find them applied.
    this.deps.metrics.batchCommitted(batch, new Set(results.flatMap(({ result }) => [...result.appliedOutcomes])), Date.now());
    // Postgres has committed: report replaced states once (a retried or rolled-back run did not replace them),
    // refresh the cache (never to an older version), then settle jobs.
    for (const { tenant, result } of results) {
      for (const { userHash: hash, issue } of result.replacedStates) {
        this.deps.logger.warn(
          { accountId: tenant.accountId, environment: tenant.environment, userHash: hash, issue },
          "a profile's learner state was unreadable: its learning starts again from the population prior",
        );
      }
    }
    // If the refresh fails the jobs fail too; their retry finds the outcomes applied and
    // refreshes the cache from the committed rows.
    await Promise.all([
      this.deps.cache.writeManyIfNewer(
        results.flatMap(({ tenant, result }) => result.updatedProfiles.map((profile) => ({ tenant, profile }))),
      ),
      this.deps.populations.writeManyIfNewer(
        results.flatMap(({ tenant, result }) => (result.population ? [{ tenant, population: result.population }] : [])),
      ),
    ]);
    const all = (pick: (r: (typeof results)[number]['result']) => Set<string>) =>
      new Set(results.flatMap(({ result }) => [...pick(result)]));
    const droppedDecisions = all((r) => r.droppedDecisions);
    const droppedOutcomes = all((r) => r.droppedOutcomes);
    const applied = all((r) => r.appliedOutcomes);
    // The cache shows every settled outcome now: profile reads need not wait for them any more.
    // A failure here costs readers a short wait, not the outcome.
    await this.deps.pendingOutcomes
      .clear(
        results.flatMap(({ tenant, result }) => [...result.outcomeUsers].map(([requestId, userHash]) => ({ tenant, userHash, requestId }))),
      )
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'clearing pending-outcome marks failed'));
    for (const item of batch) {
      const id = item.data.requestId;
      if (item.kind === 'decision') item.resolve(droppedDecisions.has(id) ? 'dropped: user erased' : 'stored');
      else if (droppedOutcomes.has(id)) item.resolve('dropped: user erased or test data reset');
      else item.resolve(applied.has(id) ? 'applied' : 'already applied');
    }
  }

  /** The decision sealed in a requestId issued to `tenant` (the API verified its MAC). */
  private carriedDecision(tenant: Tenant, requestId: string): StoredDecision | null {
    const opened = openRequestId(requestId, this.deps.secret);
    if (!opened) return null;
    const { claims, decision } = opened;
    if (claims.accountId !== tenant.accountId || claims.environment !== tenant.environment) return null;
    return { ...decision, userHash: claims.userHash, issuedAt: claims.issuedAt };
  }

  /** Applies whatever is pending (used when the worker drains on SIGTERM). */
  async drain(): Promise<void> {
    this.clearTimer();
    while (this.pending.length > 0) await this.flush();
  }
}
