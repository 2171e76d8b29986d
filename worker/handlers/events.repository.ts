import { sql } from 'kysely';
import type { DbOrTx } from '../../shared/db/database';
import { choiceSchema } from '../../shared/domain/arms';
import type { Tenant } from '../../shared/domain/environment';
import { decisionContextSchema, selectionProbabilitiesSchema } from '../../shared/domain/learner';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import type { StoredDecision } from './apply-events';

/** When each of these users (by keyed hash) was last erased (epoch ms). */
export async function erasuresByHash(db: DbOrTx, tenant: Tenant, userHashes: string[]): Promise<Map<string, number>> {
  if (userHashes.length === 0) return new Map();
  const rows = await db
    .selectFrom('erasures')
    .select(['user_hash', 'erased_at'])
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .where('user_hash', 'in', [...new Set(userHashes)])
    .execute();
  return new Map(rows.map((row) => [row.user_hash, new Date(row.erased_at).getTime()]));
}

/** When test data of this tenant was last reset (epoch ms); live data is never reset. */
export async function lastTestReset(db: DbOrTx, tenant: Tenant): Promise<number | undefined> {
  if (tenant.environment !== 'test') return undefined;
  const row = await db
    .selectFrom('test_data_resets')
    .select((eb) => eb.fn.max('started_at').as('at'))
    .where('trigger', '!=', 'baseline')
    .where((eb) => eb.or([eb('account_id', 'is', null), eb('account_id', '=', tenant.accountId)]))
    .executeTakeFirst();
  return row?.at ? new Date(row.at).getTime() : undefined;
}

export async function insertDecisions(db: DbOrTx, tenant: Tenant, decisions: DecisionJob[]): Promise<void> {
  if (decisions.length === 0) return;
  await db
    .insertInto('decisions')
    .values(
      decisions.map((d) => ({
        request_id: d.requestId,
        account_id: tenant.accountId,
        environment: tenant.environment,
        user_id: d.userId,
        chosen: JSON.stringify(d.choice),
        probabilities: JSON.stringify(d.probabilities),
        context: JSON.stringify(d.context),
        explored: JSON.stringify(d.explored),
        confidence: d.confidence,
        issued_at: new Date(d.issuedAt),
      })),
    )
    .onConflict((oc) => oc.column('request_id').doNothing())
    .execute();
}

export async function findDecisions(db: DbOrTx, tenant: Tenant, requestIds: string[]): Promise<Map<string, StoredDecision>> {
  if (requestIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('decisions')
    .select(['request_id', 'user_id', 'chosen', 'probabilities', 'context', 'issued_at'])
    .where('request_id', 'in', requestIds)
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .execute();
  return new Map(
    rows.map((row) => [
      row.request_id,
      {
        userId: row.user_id,
        choice: choiceSchema.parse(row.chosen),
        probabilities: selectionProbabilitiesSchema.parse(row.probabilities),
        context: decisionContextSchema.parse(row.context),
        issuedAt: new Date(row.issued_at).getTime(),
      },
    ]),
  );
}

/** Inserts outcomes; returns the request ids inserted now (not already applied before). */
export async function insertOutcomes(
  db: DbOrTx,
  tenant: Tenant,
  outcomes: Array<{ job: OutcomeJob; userId: string; reward: number }>,
): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const rows = await db
    .insertInto('outcomes')
    .values(
      outcomes.map(({ job, userId, reward }) => ({
        request_id: job.requestId,
        account_id: tenant.accountId,
        environment: tenant.environment,
        user_id: userId,
        fields: JSON.stringify({ ...job.signals, ...(job.metadata ? { metadata: job.metadata } : {}) }),
        reward,
        received_at: new Date(job.receivedAt),
        applied_at: sql`now()`,
      })),
    )
    .onConflict((oc) => oc.column('request_id').doNothing())
    .returning('request_id')
    .execute();
  return new Set(rows.map((row) => row.request_id));
}
