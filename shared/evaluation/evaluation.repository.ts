import { z } from 'zod';
import type { DbOrTx } from '../db/database';
import { choiceSchema, taskComplexitySchema } from '../domain/arms';
import type { Tenant } from '../domain/environment';
import { loggedProbabilitiesSchema, type LoggedEvent } from './offline-evaluation';

/** Only the task complexity of a logged context matters here (taskType and metadata are ignored). */
const loggedContextSchema = z.object({ complexity: taskComplexitySchema.optional() });

export interface LoggedEvents {
  events: LoggedEvent[];
  /** Decisions with an outcome whose logged choice, probabilities, context or reward do not parse. */
  skipped: number;
}

/**
 * The tenant's decisions that have an outcome, oldest first, optionally only those issued at
 * or after `since`. Both rows must belong to the tenant (request ids are unique, but an
 * outcome row is only trusted for the tenant it was stored under). An outcome sits in its
 * decision's month, so the join pairs partitions month by month.
 */
export function loggedEventsQuery(db: DbOrTx, tenant: Tenant, since?: Date) {
  let query = db
    .selectFrom('decisions as d')
    .innerJoin('outcomes as o', (join) => join.onRef('o.request_id', '=', 'd.request_id').onRef('o.issued_at', '=', 'd.issued_at'))
    .select(['d.chosen', 'd.probabilities', 'd.context', 'o.reward'])
    .where('d.account_id', '=', tenant.accountId)
    .where('d.environment', '=', tenant.environment)
    .where('o.account_id', '=', tenant.accountId)
    .where('o.environment', '=', tenant.environment)
    .orderBy('d.issued_at')
    .orderBy('d.request_id');
  if (since) query = query.where('d.issued_at', '>=', since).where('o.issued_at', '>=', since);
  return query;
}

export async function findLoggedEvents(db: DbOrTx, tenant: Tenant, since?: Date): Promise<LoggedEvents> {
  const rows = await loggedEventsQuery(db, tenant, since).execute();
  const events: LoggedEvent[] = [];
  for (const row of rows) {
    const choice = choiceSchema.safeParse(row.chosen);
    const probabilities = loggedProbabilitiesSchema.safeParse(row.probabilities);
    const context = loggedContextSchema.safeParse(row.context);
    const reward = z.number().min(0).max(1).safeParse(row.reward);
    if (choice.success && probabilities.success && context.success && reward.success) {
      events.push({
        choice: choice.data,
        probabilities: probabilities.data,
        ...(context.data.complexity ? { taskComplexity: context.data.complexity } : {}),
        reward: reward.data,
      });
    }
  }
  return { events, skipped: rows.length - events.length };
}
