import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { ensureMonthPartition, ensurePartitions, MONTHLY_TABLES, monthAfter, partitionName } from '../../shared/db/partitions';
import { BASELINE_MIGRATION, discardSchema, migrateToLatest, preBaselineMigrations } from '../../shared/db/migrator';
import { withDatabase } from '../support/global-setup';

/** A database of this file's own, with its URL. */
async function freshDatabase(): Promise<{ db: Db; url: string }> {
  const name = `cos_test_migrate_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: process.env.COS_TEST_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(process.env.COS_TEST_ADMIN_URL!, name);
  return { db: createDb(url, { ...DB_ROLES.tool, poolSize: 3 }), url };
}

let db: Db;
const others: Db[] = [];
beforeAll(async () => {
  ({ db } = await freshDatabase());
  const { error, results } = await migrateToLatest(db);
  expect(error).toBeUndefined();
  expect(results?.map((r) => r.migrationName)[0]).toBe(BASELINE_MIGRATION);
  expect(results?.every((r) => r.status === 'Success')).toBe(true);
});
afterAll(() => Promise.all([db, ...others].map((d) => d.destroy())));

const tableOf = async (table: string, where: string) =>
  (await sql<{ t: string }>`select tableoid::regclass::text as t from ${sql.table(table)} where ${sql.raw(where)}`.execute(db)).rows.map(
    (r) => r.t,
  );

/** A database as a release before the baseline left it: its own migrations recorded. */
async function preBaselineDatabase(): Promise<{ db: Db; url: string }> {
  const old = await freshDatabase();
  others.push(old.db);
  await sql`create table kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(old.db);
  await sql`insert into kysely_migration values ('202611220100_create_core_tables', '2026-11-22'), ('202611282300_enforce_plan_limits', '2026-11-28')`.execute(
    old.db,
  );
  await sql`create table accounts (id text primary key)`.execute(old.db);
  await sql`insert into accounts values ('acct_old')`.execute(old.db);
  return old;
}

describe('the baseline migration', () => {
  it('creates the large tables partitioned by month, with the current month and the next two', async () => {
    const { rows: partitioned } = await sql<{ name: string }>`
      select c.relname as name from pg_partitioned_table p join pg_class c on c.oid = p.partrelid order by 1`.execute(db);
    expect(partitioned.map((r) => r.name)).toEqual([...MONTHLY_TABLES].sort());
    const expected = MONTHLY_TABLES.flatMap((table) => [0, 1, 2].map((offset) => partitionName(table, monthAfter(Date.now(), offset))));
    const { rows } = await sql<{ name: string }>`select relname as name from pg_class where relname = any(${expected})`.execute(db);
    expect(rows.map((r) => r.name).sort()).toEqual([...expected].sort());
    // Run again: nothing pending.
    expect((await migrateToLatest(db)).results).toEqual([]);
  });

  it('refuses a database made before the baseline, naming its migrations and changing nothing', async () => {
    const old = await preBaselineDatabase();
    expect(await preBaselineMigrations(old.db)).toEqual(['202611220100_create_core_tables', '202611282300_enforce_plan_limits']);
    const { error } = await migrateToLatest(old.db);
    expect(error).toMatchObject({ name: 'PreBaselineDatabaseError' });
    expect(String((error as Error).message)).toMatch(/before the schema baseline .*cannot be carried over/);
    const { rows } = await sql<{ id: string }>`select id from accounts`.execute(old.db);
    expect(rows).toEqual([{ id: 'acct_old' }]);
  });

  it('makes `npm run migrate` exit 1 with that message', async () => {
    const old = await preBaselineDatabase();
    const run = spawnSync(process.execPath, [path.join(__dirname, '../../dist/shared/db/migrate.main.js')], {
      env: { ...process.env, DATABASE_URL: old.url },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/migrate: this database was made by a release before the schema baseline/);
  });

  it("empties a database of npm start's own from before the baseline, then migrates it", async () => {
    const old = await preBaselineDatabase();
    await discardSchema(old.db);
    expect(await preBaselineMigrations(old.db)).toEqual([]);
    expect((await migrateToLatest(old.db)).results?.map((r) => r.migrationName)[0]).toBe(BASELINE_MIGRATION);
    expect(await old.db.selectFrom('accounts').selectAll().execute()).toEqual([]);
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
