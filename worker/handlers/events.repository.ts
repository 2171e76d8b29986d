import { sql } from 'kysely';
import type { DbOrTx } from '../../shared/db/database';
import type { Tenant } from '../../shared/domain/environment';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { readRequestIdClaims } from '../../shared/keys/request-id';
import type { StoredDecision } from './event-batch';

/**
 * The worker's reads and writes of decisions, outcomes, erasures and resets. A batch's rows go
 * in one statement per table, as one JSON parameter unpacked by jsonb_to_recordset: a short
 * statement whatever the batch's size, and each value serialised once.
 */

/** What voids a tenant's events: when each user (by keyed hash) was last erased, and when test data was last reset (epoch ms). */
export interface Voids {
  erasedAt: Map<string, number>;
  /** Live data is never reset. */
  resetAt: number | undefined;
}

/** The erasures of these users (by keyed hash) and, in the test environment, the last reset: one query. */
export async function findVoids(db: DbOrTx, tenant: Tenant, userHashes: string[]): Promise<Voids> {
  const test = tenant.environment === 'test';
  const { rows } = await sql<{ user_hash: string | null; at: string | number | null }>`
    select user_hash, extract(epoch from erased_at) * 1000 as at from erasures
    where account_id = ${tenant.accountId} and environment = ${tenant.environment} and user_hash = any(${[...new Set(userHashes)]}::text[])
    union all
    select null, extract(epoch from max(started_at)) * 1000 from test_data_resets
    where ${test} and trigger != 'baseline' and (account_id is null or account_id = ${tenant.accountId})`.execute(db);
  const voids: Voids = { erasedAt: new Map(), resetAt: undefined };
  for (const row of rows) {
    if (row.at === null) continue;
    if (row.user_hash === null) voids.resetAt = Math.floor(Number(row.at));
    else voids.erasedAt.set(row.user_hash, Math.floor(Number(row.at)));
  }
  return voids;
}

/**
 * Stores decisions as their jobs carry them: the job payloads go to Postgres as one JSON
 * parameter as they are (fields the table has no column for are ignored), with no row objects
 * made on the way.
 */
export async function insertDecisions(db: DbOrTx, tenant: Tenant, decisions: DecisionJob[]): Promise<void> {
  if (decisions.length === 0) return;
  await sql`
    insert into decisions (request_id, account_id, environment, user_id, chosen, probabilities, context, explored, confidence, issued_at)
    select r."requestId", ${tenant.accountId}, ${tenant.environment}, r."userId", r.choice, r.probabilities, r.context, r.explored,
      r.confidence, to_timestamp(r."issuedAt" / 1000.0)
    from jsonb_to_recordset(${JSON.stringify(decisions)}::jsonb) as r("requestId" text, "userId" text, choice jsonb, probabilities jsonb,
      context jsonb, explored jsonb, confidence float8, "issuedAt" bigint)
    on conflict (account_id, environment, request_id, issued_at) do nothing`.execute(db);
}

/**
 * The decisions of these request ids, read from their months only: each request id carries
 * its issue time, the decisions' partition key (docs/adr/0013-monthly-partitions.md), so the
 * span of those times names the partitions to read.
 */
export function decisionsByRequestIdQuery(db: DbOrTx, tenant: Tenant, requestIds: string[]) {
  const query = db
    .selectFrom('decisions')
    .select(['request_id', 'user_id', 'chosen', 'probabilities', 'context', 'issued_at'])
    .where('account_id', '=', tenant.accountId)
    .where('environment', '=', tenant.environment)
    .where('request_id', 'in', requestIds);
  const times = requestIds.flatMap((id) => readRequestIdClaims(id)?.issuedAt ?? []);
  // Ids the worker reads come from the API, which verified them; were one unreadable, all months are read.
  if (times.length < requestIds.length) return query;
  return query.where('issued_at', '>=', new Date(Math.min(...times))).where('issued_at', '<=', new Date(Math.max(...times)));
}

/** The stored decisions of these request ids (the worker wrote them from checked jobs: not parsed again). */
export async function findDecisions(db: DbOrTx, tenant: Tenant, requestIds: string[]): Promise<Map<string, StoredDecision>> {
  if (requestIds.length === 0) return new Map();
  const rows = await decisionsByRequestIdQuery(db, tenant, requestIds).execute();
  return new Map(
    rows.map((row) => [
      row.request_id,
      {
        userId: row.user_id,
        choice: row.chosen,
        probabilities: row.probabilities,
        context: { taskComplexity: row.context.complexity, taskType: row.context.taskType },
        issuedAt: new Date(row.issued_at).getTime(),
      },
    ]),
  );
}

export interface OutcomeRow {
  job: OutcomeJob;
  userId: string;
  reward: number;
  /** The decision's issue time (epoch ms): the outcome's partition key. */
  issuedAt: number;
}

/**
 * The insert of a batch's outcomes, skipping request ids stored before: the conflict target is
 * the key (tenant, request id, decision time), unique exactly when the request id is, since
 * the id carries its decision's time.
 */
export function insertOutcomesQuery(db: DbOrTx, tenant: Tenant, outcomes: OutcomeRow[]) {
  const rows = outcomes.map(({ job, userId, reward, issuedAt }) => ({
    request_id: job.requestId,
    user_id: userId,
    issued_at: new Date(issuedAt).toISOString(),
    fields: job.metadata ? { ...job.signals, metadata: job.metadata } : job.signals,
    reward,
    received_at: new Date(job.receivedAt).toISOString(),
  }));
  return sql<{ request_id: string }>`
    insert into outcomes (request_id, account_id, environment, user_id, issued_at, fields, reward, received_at, applied_at)
    select r.request_id, ${tenant.accountId}, ${tenant.environment}, r.user_id, r.issued_at, r.fields, r.reward, r.received_at, now()
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as r(request_id text, user_id text, issued_at timestamptz, fields jsonb, reward float8, received_at timestamptz)
    on conflict (account_id, environment, request_id, issued_at) do nothing
    returning request_id`;
}

/** Inserts outcomes; returns the request ids inserted now (not already applied before). */
export async function insertOutcomes(db: DbOrTx, tenant: Tenant, outcomes: OutcomeRow[]): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const { rows: inserted } = await insertOutcomesQuery(db, tenant, outcomes).execute(db);
  return new Set(inserted.map((row) => row.request_id));
}
