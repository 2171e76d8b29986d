import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { detachPartitionsBefore, ensureMonthPartition } from '../../shared/db/partitions';
import { insertDecisions, insertOutcomes } from '../../worker/phases/events.repository';
import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';
import { databaseMigratedTo } from '../support/migrated-to';
import { buildCarriedDecision } from '../support/request-ids';

/**
 * The event tables' keys reordered (issue time before request id) over stored months — attached,
 * in the default partition, and archived: every row stays, each month's key is the new one, an
 * archived month can be attached again, and a stored outcome or decision still refuses its
 * duplicate — exactly once rests on that key.
 */
const tenant = { accountId: 'acct_a', environment: 'live' as const };
const JUNE = Date.parse('2026-06-20T10:00:00Z');
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
  for (const table of ['decisions', 'outcomes'] as const)
    for (const month of ['2026-06', '2026-07']) await ensureMonthPartition(db, table, month);
});
afterAll(() => db.destroy());

it('keeps every row, orders each month’s key by issue time, and still refuses duplicates', async () => {
  // A month archived before the migration, one attached, and one without a partition (its rows sit in the default partition).
  await insertDecisions(db, tenant, [decision('req_june', JUNE), decision('req_july', JULY), decision('req_later', NO_MONTH)]);
  expect(
    await insertOutcomes(db, tenant, [outcome('req_june', JUNE, 1), outcome('req_july', JULY, 0.5), outcome('req_later', NO_MONTH, 0.25)]),
  ).toEqual(new Set(['req_june', 'req_july', 'req_later']));
  expect((await detachPartitionsBefore(db, '2026-07')).sort()).toEqual(['decisions_y2026m06', 'outcomes_y2026m06']);
  expect((await migrateToLatest(db)).error).toBeUndefined();

  const { rows: keys } = await sql<{ relation: string; definition: string }>`
    select c.relname as relation, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i join pg_class c on c.oid = i.indrelid
    where i.indisprimary and (c.relname like 'decisions%' or c.relname like 'outcomes%')
    order by c.relname`.execute(db);
  const months = ['default', 'y2026m06', 'y2026m07'];
  expect(keys.map((k) => k.relation)).toEqual(
    expect.arrayContaining(['decisions', 'outcomes', ...months.flatMap((m) => [`decisions_${m}`, `outcomes_${m}`])]),
  );
  for (const { definition } of keys) expect(definition).toMatch(/\(account_id, environment, issued_at, request_id\)$/);
  // The archived month goes back as OPERATIONS says; the rows in the default partition move into a month made now.
  for (const table of ['decisions', 'outcomes']) {
    await sql`alter table ${sql.table(table)} attach partition ${sql.table(`${table}_y2026m06`)}
      for values from ('2026-06-01 00:00+00') to ('2026-07-01 00:00+00')`.execute(db);
    await ensureMonthPartition(db, table as 'decisions' | 'outcomes', '2031-01');
  }
  await sql`delete from archived_partitions`.execute(db);

  const { rows: stored } = await sql<{ request_id: string; reward: number }>`
    select request_id, reward from outcomes order by issued_at`.execute(db);
  expect(stored).toEqual([
    { request_id: 'req_june', reward: 1 },
    { request_id: 'req_july', reward: 0.5 },
    { request_id: 'req_later', reward: 0.25 },
  ]);
  const { rows: later } = await sql<{ relation: string }>`
    select tableoid::regclass::text as relation from outcomes where request_id = 'req_later'`.execute(db);
  expect(later).toEqual([{ relation: 'outcomes_y2031m01' }]);
  // A redelivered outcome (another reward) and a decision logged twice change nothing.
  expect(await insertOutcomes(db, tenant, [outcome('req_july', JULY, 0.9), outcome('req_new', JULY, 0.75)])).toEqual(new Set(['req_new']));
  await insertDecisions(db, tenant, [decision('req_july', JULY)]);
  const { rows: counts } = await sql<{ decisions: number; outcomes: number }>`
    select (select count(*)::int from decisions) as decisions, (select count(*)::int from outcomes) as outcomes`.execute(db);
  expect(counts).toEqual([{ decisions: 3, outcomes: 4 }]);
  const { rows: july } = await sql<{ reward: number }>`select reward from outcomes where request_id = 'req_july'`.execute(db);
  expect(july).toEqual([{ reward: 0.5 }]);
});
