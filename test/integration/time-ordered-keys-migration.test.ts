import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { ensureMonthPartition } from '../../shared/db/partitions';
import { insertDecisions, insertOutcomes } from '../../worker/phases/events.repository';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { databaseMigratedTo } from '../support/migrated-to';
import { buildCarriedDecision } from '../support/request-ids';

/**
 * The event tables' keys reordered (issue time before request id) over stored months: every row
 * stays, each month's key is the new one, and a stored outcome or decision still refuses its
 * duplicate — exactly once rests on that key.
 */
const tenant = { accountId: 'acct_a', environment: 'live' as const };
const JULY = Date.parse('2026-07-03T10:00:00Z');
const NO_MONTH = Date.parse('2031-01-15T10:00:00Z');

const decision = (requestId: string, issuedAt: number): DecisionJob => ({
  ...tenant,
  ...buildCarriedDecision('u1'),
  requestId,
  generation: 'g1',
  explored: [],
  confidence: 0.5,
  issuedAt,
});
const outcome = (requestId: string, issuedAt: number, reward: number) => ({
  job: { ...tenant, requestId, signals: { started: true }, receivedAt: issuedAt + 60_000 } satisfies OutcomeJob,
  userId: 'u1',
  reward,
  issuedAt,
});

let db: Db;
beforeAll(async () => {
  db = await databaseMigratedTo('202611300000_profile_state_json');
  await ensureMonthPartition(db, 'decisions', '2026-07');
  await ensureMonthPartition(db, 'outcomes', '2026-07');
});
afterAll(() => db.destroy());

it('keeps every row, orders each month’s key by issue time, and still refuses duplicates', async () => {
  // A month with a partition, and one without (its rows sit in the default partition).
  await insertDecisions(db, tenant, [decision('req_july', JULY), decision('req_later', NO_MONTH)]);
  expect(await insertOutcomes(db, tenant, [outcome('req_july', JULY, 0.5), outcome('req_later', NO_MONTH, 0.25)])).toEqual(
    new Set(['req_july', 'req_later']),
  );
  expect((await migrateToLatest(db)).error).toBeUndefined();

  const { rows: keys } = await sql<{ relation: string; definition: string }>`
    select c.relname as relation, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i join pg_class c on c.oid = i.indrelid
    where i.indisprimary and (c.relname like 'decisions%' or c.relname like 'outcomes%')
    order by c.relname`.execute(db);
  expect(keys.map((k) => k.relation)).toEqual(
    expect.arrayContaining(['decisions', 'decisions_default', 'decisions_y2026m07', 'outcomes', 'outcomes_default', 'outcomes_y2026m07']),
  );
  for (const { definition } of keys) expect(definition).toMatch(/\(account_id, environment, issued_at, request_id\)$/);

  const { rows: stored } = await sql<{ request_id: string; reward: number }>`
    select request_id, reward from outcomes order by issued_at`.execute(db);
  expect(stored).toEqual([
    { request_id: 'req_july', reward: 0.5 },
    { request_id: 'req_later', reward: 0.25 },
  ]);
  // A redelivered outcome (another reward) and a decision logged twice change nothing.
  expect(await insertOutcomes(db, tenant, [outcome('req_july', JULY, 0.9), outcome('req_new', JULY, 0.75)])).toEqual(new Set(['req_new']));
  await insertDecisions(db, tenant, [decision('req_july', JULY)]);
  const { rows: counts } = await sql<{ decisions: number; outcomes: number }>`
    select (select count(*)::int from decisions) as decisions, (select count(*)::int from outcomes) as outcomes`.execute(db);
  expect(counts).toEqual([{ decisions: 2, outcomes: 3 }]);
  const { rows: july } = await sql<{ reward: number }>`select reward from outcomes where request_id = 'req_july'`.execute(db);
  expect(july).toEqual([{ reward: 0.5 }]);
});
