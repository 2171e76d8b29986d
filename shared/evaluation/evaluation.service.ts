import type { DbOrTx } from '../db/database';
import { createEngine, emptyPrior } from '../domain/engine/engine';
import type { Tenant } from '../domain/environment';
import { findPopulation } from '../population/population.repository';
import { findLoggedEvents } from './evaluation.repository';
import { evaluateOffline, type OfflineEvaluation } from './offline-evaluation';

export interface TenantEvaluation {
  evaluation: OfflineEvaluation;
  /** Logged events that could not be read (see findLoggedEvents). */
  skipped: number;
  /** Version of the stored population prior; null when the tenant has none yet (the empty prior is used). */
  priorVersion: number | null;
}

/**
 * Offline evaluation of one tenant's logged events. "Population best" is what the tenant's
 * current population prior recommends per task complexity, replayed over the whole period.
 */
export async function evaluateTenant(db: DbOrTx, tenant: Tenant, since?: Date): Promise<TenantEvaluation> {
  const { events, skipped } = await findLoggedEvents(db, tenant, since);
  const stored = await findPopulation(db, tenant);
  const prior = stored?.prior ?? emptyPrior();
  const engine = createEngine();
  const evaluation = evaluateOffline(events, (complexity) =>
    engine.populationBest(prior, complexity ? { taskComplexity: complexity } : {}),
  );
  return { evaluation, skipped, priorVersion: stored?.version ?? null };
}
