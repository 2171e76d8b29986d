import { readdirSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { Client } from 'pg';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { ensureMonthPartition, ensurePartitions, MONTHLY_TABLES, monthAfter, partitionName } from '../../shared/db/partitions';
import { addTrafficQuery } from '../../shared/traffic/traffic-flush';
import { trafficSeries } from '../../shared/traffic/traffic-queries';
import { issueRequestId } from '../../shared/ids/request-id';
import { findDecisions, insertOutcomes } from '../../worker/phases/events.repository';
import { withDatabase } from '../support/global-setup';
import { buildCarriedDecision } from '../support/request-ids';

const MIGRATIONS = path.join(__dirname, '../../shared/db/migrations');
const BEFORE_PARTITIONING = '202611220300_create_population_priors';
const BEFORE_TRAFFIC_PARTITIONING = '202611251600_partition_event_tables';
const SECRET = 'partition-migration-secret';

/** The repository's migrations, loaded through jest's module system. */
const provider = {
  getMigrations: async (): Promise<Record<string, Migration>> => {
    const files = readdirSync(MIGRATIONS).filter((file) => file.endsWith('.ts'));
    const modules = await Promise.all(files.map((file) => import(path.join(MIGRATIONS, file)) as Promise<Migration>));
    return Object.fromEntries(files.map((file, i) => [path.basename(file, '.ts'), modules[i]!]));
  },
};

let db: Db;
let name: string;
beforeAll(async () => {
  name = `cos_test_migrate_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: process.env.COS_TEST_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  db = createDb(withDatabase(process.env.COS_TEST_ADMIN_URL!, name), { ...DB_ROLES.tool, poolSize: 3 });
});
afterAll(() => db.destroy());

const tableOf = async (table: string, where: string) =>
  (await sql<{ t: string }>`select tableoid::regclass::text as t from ${sql.table(table)} where ${sql.raw(where)}`.execute(db)).rows.map(
    (r) => r.t,
  );

describe('partitioning migration', () => {
  it('moves every row written by the old schema into its month, readable as before', async () => {
    const migrator = new Migrator({ db: db as Kysely<any>, provider });
    expect((await migrator.migrateTo(BEFORE_PARTITIONING)).error).toBeUndefined();
    const old = db as Kysely<any>;
    const tenant = { accountId: 'acct_old', environment: 'live' as const };
    const times = ['2025-12-31T23:59:59.999Z', '2026-01-01T00:00:00.000Z', '2026-06-15T12:00:00.000Z'];
    const ids = times.map((at, i) =>
      issueRequestId({ ...tenant, issuedAt: Date.parse(at), userHash: 'ab'.repeat(8), decision: buildCarriedDecision(`u${i}`) }, SECRET),
    );
    for (const [i, at] of times.entries()) {
      await old
        .insertInto('decisions')
        .values({
          request_id: ids[i],
          account_id: tenant.accountId,
          environment: 'live',
          user_id: `u${i}`,
          chosen: JSON.stringify({ framing: 'f' }),
          probabilities: '{}',
          context: JSON.stringify({ complexity: 'low' }),
          explored: '[]',
          confidence: 0.5,
          issued_at: at,
        })
        .execute();
      // The first outcome arrives in the month after its decision: it stays with its decision.
      const receivedAt = new Date(Date.parse(at) + 60_000).toISOString();
      await old
        .insertInto('outcomes')
        .values({
          request_id: ids[i],
          account_id: tenant.accountId,
          environment: 'live',
          user_id: `u${i}`,
          fields: JSON.stringify({ started: true }),
          reward: 0.25 * i,
          received_at: receivedAt,
          applied_at: receivedAt,
        })
        .execute();
      await old
        .insertInto('profile_versions')
        .values({
          account_id: tenant.accountId,
          environment: 'test',
          user_id: `u${i}`,
          profile_version: 1,
          cause: 'outcome',
          changed: '[]',
          created_at: receivedAt,
        })
        .execute();
    }

    // Traffic counters written by the unpartitioned traffic tables, across a month's end.
    expect((await migrator.migrateTo(BEFORE_TRAFFIC_PARTITIONING)).error).toBeUndefined();
    const counter = { account_id: tenant.accountId, environment: 'live', key_id: 'key_old', metric: 'req', label: 'context:2xx' };
    await old
      .insertInto('traffic_minute')
      .values([
        { ...counter, at: '2026-01-31T23:59:00Z', count: 3 },
        { ...counter, at: '2026-02-01T00:00:00Z', count: 4 },
      ])
      .execute();
    await old
      .insertInto('traffic_hour')
      .values([
        { ...counter, at: '2026-01-31T23:00:00Z', count: 3 },
        { ...counter, at: '2026-02-01T00:00:00Z', count: 4 },
      ])
      .execute();

    expect((await migrator.migrateToLatest()).error).toBeUndefined();

    expect(await tableOf('traffic_minute', 'true order by at')).toEqual(['traffic_minute_y2026m01', 'traffic_minute_y2026m02']);
    expect(await tableOf('traffic_hour', 'true order by at')).toEqual(['traffic_hour_y2026m01', 'traffic_hour_y2026m02']);
    // The flush's upsert adds to a migrated row, and the dashboard's series reads both months.
    await addTrafficQuery(db, 'traffic_minute', new Date('2026-02-01T00:00:00Z'), [
      { ...counter, environment: 'live', metric: 'req', count: 2 },
    ]).execute();
    const series = await trafficSeries(db, tenant, '1h', Date.parse('2026-02-01T00:00:30Z'));
    expect(series.points.filter((p) => p.requests > 0).map((p) => [p.at, p.requests])).toEqual([
      ['2026-01-31T23:59:00.000Z', 3],
      ['2026-02-01T00:00:00.000Z', 6],
    ]);

    expect(await tableOf('decisions', 'true order by issued_at')).toEqual([
      'decisions_y2025m12',
      'decisions_y2026m01',
      'decisions_y2026m06',
    ]);
    expect(await tableOf('outcomes', 'true order by issued_at')).toEqual(['outcomes_y2025m12', 'outcomes_y2026m01', 'outcomes_y2026m06']);
    expect(await tableOf('profile_versions', 'true order by created_at')).toEqual([
      'profile_versions_y2026m01',
      'profile_versions_y2026m01',
      'profile_versions_y2026m06',
    ]);
    const outcomes = await db.selectFrom('outcomes').select(['request_id', 'issued_at', 'reward']).orderBy('issued_at').execute();
    expect(outcomes).toEqual(times.map((at, i) => ({ request_id: ids[i], issued_at: new Date(at), reward: 0.25 * i })));
    // The worker's lookup by request id (pruned by the time each id carries) finds them all.
    const found = await findDecisions(db, tenant, ids);
    expect([...found.values()].map((d) => d.userId).sort()).toEqual(['u0', 'u1', 'u2']);
    // A migrated outcome posted again is a conflict, so it is not applied twice.
    const again = await insertOutcomes(db, tenant, [
      {
        job: { ...tenant, requestId: ids[0]!, signals: { started: true }, receivedAt: Date.now() },
        userId: 'u0',
        reward: 1,
        issuedAt: Date.parse(times[0]!),
      },
    ]);
    expect(again.size).toBe(0);
    // The months around now exist for every table, traffic's included.
    const expected = MONTHLY_TABLES.flatMap((table) => [0, 1, 2].map((offset) => partitionName(table, monthAfter(Date.now(), offset))));
    const { rows } = await sql<{ name: string }>`select relname as name from pg_class where relname = any(${expected})`.execute(db);
    expect(rows.map((r) => r.name).sort()).toEqual([...expected].sort());
  });

  it('keeps a row of a month without a partition in the default partition, then moves it into the month made for it', async () => {
    const tenant = { accountId: 'acct_late', environment: 'test' as const };
    const at = '2031-03-10T08:00:00.000Z';
    await db
      .insertInto('decisions')
      .values({
        request_id: 'req_far_future',
        account_id: tenant.accountId,
        environment: 'test',
        user_id: 'later',
        chosen: '{}',
        probabilities: '{}',
        context: '{}',
        explored: '[]',
        confidence: 1,
        issued_at: at,
      })
      .execute();
    expect(await tableOf('decisions', `request_id = 'req_far_future'`)).toEqual(['decisions_default']);
    expect(await ensureMonthPartition(db, 'decisions', '2031-03')).toBe(true);
    expect(await ensureMonthPartition(db, 'decisions', '2031-03')).toBe(false);
    expect(await tableOf('decisions', `request_id = 'req_far_future'`)).toEqual(['decisions_y2031m03']);
    const row = await db
      .selectFrom('decisions')
      .select(['user_id', 'issued_at'])
      .where('request_id', '=', 'req_far_future')
      .executeTakeFirst();
    expect(row).toEqual({ user_id: 'later', issued_at: new Date(at) });
  });

  it('makes the coming months once however many workers run the upkeep at the same time', async () => {
    const now = Date.parse('2032-11-20T10:00:00Z');
    const runs = await Promise.all([ensurePartitions(db, now), ensurePartitions(db, now), ensurePartitions(db, now)]);
    const expected = ['2032-11', '2032-12', '2033-01'].flatMap((m) => MONTHLY_TABLES.map((t) => partitionName(t, m)));
    expect(runs.flat().sort()).toEqual(expected.sort());
    expect(await ensurePartitions(db, now)).toEqual([]);
  });
});
