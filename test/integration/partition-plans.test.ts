import { CompiledQuery, sql } from 'kysely';
import { ensureMonthPartition, MONTHLY_TABLES } from '../../shared/db/partitions';
import { loggedEventsQuery } from '../../shared/evaluation/evaluation.repository';
import { issueRequestId } from '../../shared/ids/request-id';
import { versionsQuery } from '../../shared/profile/profile.repository';
import { addTrafficQuery } from '../../shared/traffic/traffic-flush';
import { countersQuery } from '../../shared/traffic/traffic-queries';
import { insertOutcomesQuery } from '../../worker/phases/events.repository';
import { createTestEnv, type TestEnv } from '../support/test-env';
import { buildCarriedDecision } from '../support/request-ids';

/**
 * The hot queries on the partitioned tables, planned against six filled months: each reads only
 * the months it names, and reads them through an index.
 */
const MONTHS = ['2026-03', '2026-04', '2026-05', '2026-06', '2026-07', '2026-08'];
const ROWS_PER_MONTH = 12_000;
const hot = { accountId: 'acct_hot', environment: 'live' as const };

let env: TestEnv;
let hotIds: string[];
beforeAll(async () => {
  env = await createTestEnv();
  for (const table of MONTHLY_TABLES) for (const month of MONTHS) await ensureMonthPartition(env.db, table, month);
  for (const [m, month] of MONTHS.entries()) {
    // 40 tenants, 1,000 users each; the hot tenant is one of them.
    const start = sql.lit(`${month}-01T00:00:00Z`);
    await sql`insert into decisions (account_id, environment, user_id, request_id, chosen, probabilities, context, explored, confidence, issued_at)
      select case when i % 40 = 0 then 'acct_hot' else 'acct_' || (i % 40) end, 'live', 'u' || (i % 1000), 'req_fill_' || ${m} || '_' || i,
             '{"framing":"f"}', '{}', '{"complexity":"low"}', '[]', 0.5, ${start}::timestamptz + i * interval '150 seconds'
      from generate_series(1, ${ROWS_PER_MONTH}) as i`.execute(env.db);
    await sql`insert into outcomes (account_id, environment, user_id, request_id, issued_at, fields, reward, received_at)
      select account_id, environment, user_id, request_id, issued_at, '{"started":true}', 0.5, issued_at + interval '1 minute'
      from decisions where request_id like ${`req_fill_${m}_%`}`.execute(env.db);
    await sql`insert into profile_versions (account_id, environment, user_id, profile_version, cause, changed, created_at)
      select case when i % 40 = 0 then 'acct_hot' else 'acct_' || (i % 40) end, 'live', 'u' || (i % 1000), ${m * ROWS_PER_MONTH} + i,
             'outcome', '[]', ${start}::timestamptz + i * interval '150 seconds'
      from generate_series(1, ${ROWS_PER_MONTH}) as i`.execute(env.db);
    for (const table of ['traffic_minute', 'traffic_hour']) {
      await sql`insert into ${sql.table(table)} (account_id, environment, at, key_id, metric, label, count)
        select case when i % 40 = 0 then 'acct_hot' else 'acct_' || (i % 40) end, 'live', ${start}::timestamptz + i * interval '150 seconds',
               'key_' || (i % 40), 'req', 'context:2xx', 1
        from generate_series(1, ${ROWS_PER_MONTH}) as i`.execute(env.db);
    }
  }
  const issuedAt = [Date.parse('2026-07-03T10:00:00Z'), Date.parse('2026-07-20T18:30:00Z')];
  hotIds = issuedAt.map((at, i) =>
    issueRequestId({ ...hot, issuedAt: at, userHash: 'cd'.repeat(8), decision: buildCarriedDecision(`u${i}`) }, 's'),
  );
  for (const [i, id] of hotIds.entries()) {
    await sql`insert into decisions (account_id, environment, user_id, request_id, chosen, probabilities, context, explored, confidence, issued_at)
      values ('acct_hot', 'live', 'u40', ${id}, '{}', '{}', '{}', '[]', 0.5, ${new Date(issuedAt[i]!).toISOString()}::timestamptz)`.execute(
      env.db,
    );
  }
  await sql`analyze decisions, outcomes, profile_versions, traffic_minute, traffic_hour`.execute(env.db);
}, 120_000);
afterAll(() => env.close());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Conflict Arbiter Indexes'?: string[];
  Plans?: PlanNode[];
}

async function plan(compiled: CompiledQuery): Promise<PlanNode> {
  const result = await env.db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
    CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
  );
  return result.rows[0]!['QUERY PLAN'][0]!.Plan;
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
/** The relations the plan scans, each with how: `decisions_y2026m07 Index Scan`. */
const scans = (root: PlanNode) =>
  nodes(root)
    .filter((n) => n['Relation Name'] !== undefined)
    .map((n) => ({ relation: n['Relation Name']!, type: n['Node Type'] }));
const filledMonths = (table: string, months = MONTHS) => months.map((m) => `${table}_y${m.slice(0, 4)}m${m.slice(5)}`);

describe('hot queries on monthly partitions', () => {
  it('the outcome insert checks conflicts on the tenant-leading key and scans no partition', async () => {
    const root = await plan(
      insertOutcomesQuery(env.db, hot, [
        {
          job: { ...hot, requestId: hotIds[0]!, signals: { started: true }, receivedAt: Date.parse('2026-07-03T10:05:00Z') },
          userId: 'u40',
          reward: 0.5,
          issuedAt: Date.parse('2026-07-03T10:00:00Z'),
        },
      ]).compile(env.db),
    );
    expect(root['Node Type']).toBe('ModifyTable');
    expect(root['Conflict Arbiter Indexes']).toEqual(['outcomes_pk']);
    expect(scans(root).filter((s) => s.relation !== 'outcomes')).toEqual([]);
  });

  it('profile version listing reads each month through its key index, never a sequential scan', async () => {
    const found = scans(await plan(versionsQuery(env.db, hot, 'u40', 20).compile()));
    const monthly = found.filter((s) => filledMonths('profile_versions').includes(s.relation));
    expect(monthly.map((s) => s.relation).sort()).toEqual(filledMonths('profile_versions'));
    expect(found.filter((s) => s.type === 'Seq Scan' && filledMonths('profile_versions').includes(s.relation))).toEqual([]);
  });

  it("evaluation's tenant scan since a date prunes the months before it and uses indexes in the others", async () => {
    const found = scans(await plan(loggedEventsQuery(env.db, hot, new Date('2026-07-01T00:00:00Z')).compile()));
    const read = new Set(found.map((s) => s.relation));
    for (const table of ['decisions', 'outcomes']) {
      for (const pruned of filledMonths(table, MONTHS.slice(0, 4))) expect(read).not.toContain(pruned);
      for (const kept of filledMonths(table, MONTHS.slice(4))) expect(read).toContain(kept);
    }
    const filled = [...filledMonths('decisions'), ...filledMonths('outcomes')];
    expect(found.filter((s) => s.type === 'Seq Scan' && filled.includes(s.relation))).toEqual([]);
  });

  it("the traffic flush's upsert checks conflicts on the tenant-leading key and scans no partition", async () => {
    const row = {
      account_id: hot.accountId,
      environment: hot.environment,
      key_id: 'key_0',
      metric: 'req' as const,
      label: 'context:2xx',
      count: 1,
    };
    for (const table of ['traffic_minute', 'traffic_hour'] as const) {
      const root = await plan(addTrafficQuery(env.db, table, new Date('2026-07-03T10:00:00Z'), [row]).compile());
      expect(root['Node Type']).toBe('ModifyTable');
      expect(root['Conflict Arbiter Indexes']).toEqual([`${table}_pk`]);
      expect(scans(root).filter((s) => s.relation !== table)).toEqual([]);
    }
  });

  it("the dashboard's traffic series reads only the months its window covers, through the key", async () => {
    const now = Date.parse('2026-07-10T12:00:00Z');
    const read = async (window: '1h' | '30d') => scans(await plan(countersQuery(hot, window, now, ['req', 'lat']).compile(env.db)));
    const hour = await read('1h');
    expect(hour.map((s) => s.relation)).toEqual(['traffic_minute_y2026m07']);
    // 30 days back from 10 July reach into June.
    const month = await read('30d');
    expect(month.map((s) => s.relation).sort()).toEqual(['traffic_hour_y2026m06', 'traffic_hour_y2026m07']);
    expect([...hour, ...month].filter((s) => s.type === 'Seq Scan')).toEqual([]);
  });

  it("evaluation's full tenant scan reads every month through an index", async () => {
    const found = scans(await plan(loggedEventsQuery(env.db, hot).compile()));
    const filled = [...filledMonths('decisions'), ...filledMonths('outcomes')];
    expect(found.filter((s) => filled.includes(s.relation)).length).toBeGreaterThanOrEqual(filled.length);
    expect(found.filter((s) => s.type === 'Seq Scan' && filled.includes(s.relation))).toEqual([]);
  });
});

describe('keys of the append-only event tables', () => {
  it('order a tenant’s decisions and outcomes by issue time, then request id, in every month', async () => {
    // A random request id before the time would put every insert at a random leaf of the index.
    const { rows } = await sql<{ relation: string; definition: string }>`
      select c.relname as relation, pg_get_indexdef(i.indexrelid) as definition
      from pg_index i join pg_class c on c.oid = i.indrelid
      where i.indisprimary and (c.relname like 'decisions%' or c.relname like 'outcomes%')`.execute(env.db);
    const months = [...filledMonths('decisions'), ...filledMonths('outcomes')];
    expect(rows.map((r) => r.relation)).toEqual(expect.arrayContaining(['decisions', 'outcomes', ...months]));
    for (const { definition } of rows) expect(definition).toMatch(/\(account_id, environment, issued_at, request_id\)$/);
  });
});
