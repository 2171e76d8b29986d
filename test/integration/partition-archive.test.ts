import { sql } from 'kysely';
import { Queue } from 'bullmq';
import { ensureMonthPartition, monthAfter, MONTHLY_TABLES, partitionName } from '../../shared/db/partitions';
import { JOBS, MAINTENANCE_QUEUE } from '../../shared/jobs/catalog';
import { findAccount } from '../../shared/accounts/account.repository';
import { resetTestData } from '../../shared/test-data/test-data-reset';
import { runCliCaptured } from '../support/cli';
import { bearer, startHarness, type Harness } from '../support/harness';

let h: Harness;
let liveKey: string;
let accountId: string;
beforeAll(async () => {
  h = await startHarness();
  liveKey = await h.key('archive', 'live');
  await h.key('archive', 'test');
  accountId = (await findAccount(h.env.db, 'archive'))!.id;
});
afterAll(() => h.close());

const cli = (...argv: string[]) => runCliCaptured(argv, h.env.processEnv());
const OLD_MONTH = '2025-01';

/** One decision, outcome and version in January 2025 for each (environment, user). */
async function seedOldMonth(rows: Array<{ environment: 'test' | 'live'; userId: string }>): Promise<void> {
  for (const table of MONTHLY_TABLES) await ensureMonthPartition(h.env.db, table, OLD_MONTH);
  for (const [i, { environment, userId }] of rows.entries()) {
    const at = `2025-01-${String(10 + i).padStart(2, '0')}T12:00:00Z`;
    const requestId = `req_archive_${i}`;
    await sql`insert into decisions (account_id, environment, user_id, request_id, chosen, probabilities, context, explored, confidence, issued_at)
      values (${accountId}, ${environment}, ${userId}, ${requestId}, '{}', '{}', '{}', '[]', 0.5, ${at}::timestamptz)`.execute(h.env.db);
    await sql`insert into outcomes (account_id, environment, user_id, request_id, issued_at, fields, reward, received_at)
      values (${accountId}, ${environment}, ${userId}, ${requestId}, ${at}::timestamptz, '{}', 1, ${at}::timestamptz)`.execute(h.env.db);
    await sql`insert into profile_versions (account_id, environment, user_id, profile_version, cause, changed, created_at)
      values (${accountId}, ${environment}, ${userId}, 1, 'outcome', '[]', ${at}::timestamptz)`.execute(h.env.db);
    await sql`insert into traffic_hour (account_id, environment, at, key_id, metric, label, count)
      values (${accountId}, ${environment}, ${at}::timestamptz, ${`key_${userId}`}, 'req', 'context:2xx', 1)`.execute(h.env.db);
  }
}

const usersIn = async (table: string) =>
  (await sql<{ u: string }>`select environment || ':' || user_id as u from ${sql.table(table)} order by 1`.execute(h.env.db)).rows.map(
    (r) => r.u,
  );

describe('partition upkeep in the worker', () => {
  it('schedules the daily upkeep and has the coming months made once started', async () => {
    // The month after next, gone (it is empty): the worker makes it again as it starts, traffic's too.
    const later = MONTHLY_TABLES.map((table) => partitionName(table, monthAfter(Date.now(), 2)));
    await sql`drop table ${sql.join(later.map((name) => sql.table(name)))}`.execute(h.env.db);
    const worker = h.startWorker();
    await worker.ready;
    const made = await sql<{ n: number }>`select count(*)::int as n from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where c.relname = any(${later})`.execute(h.env.db);
    expect(made.rows[0]!.n).toBe(MONTHLY_TABLES.length);
    const queue = new Queue(MAINTENANCE_QUEUE, { connection: h.env.redis, prefix: h.env.keys.maintenanceQueuePrefix });
    expect(await queue.getJobScheduler(JOBS.partitionUpkeep.scheduler.id)).toMatchObject({ pattern: '17 3 * * *', tz: 'UTC' });
    await queue.close();
  });
});

describe('cos partitions', () => {
  it('refuses a --before that is not a month, or that would detach a month still taking outcomes', async () => {
    expect(await cli('partitions', 'detach', '--before', '2025-13')).toMatchObject({ code: 2, err: expect.stringContaining('YYYY-MM') });
    const current = monthAfter(Date.now(), 0);
    // Detaching the months before next month would take the current one.
    const refused = await cli('partitions', 'detach', '--before', monthAfter(Date.now(), 1));
    expect(refused).toMatchObject({ code: 2, err: expect.stringContaining('still taking outcomes') });
    const listed = JSON.parse((await cli('partitions', 'list', '--json')).out);
    expect(listed.data).toContainEqual(expect.objectContaining({ table: 'decisions', month: current, state: 'attached' }));
  });

  it('detaches old months as plain tables that stay queryable; erasure and the test reset still reach them', async () => {
    await seedOldMonth([
      { environment: 'live', userId: 'erased' },
      { environment: 'live', userId: 'kept' },
      { environment: 'test', userId: 'kept' },
    ]);
    const detached = await cli('partitions', 'detach', '--before', '2025-02', '--json');
    expect(detached.code).toBe(0);
    expect(JSON.parse(detached.out).detached.sort()).toEqual(['decisions_y2025m01', 'outcomes_y2025m01', 'profile_versions_y2025m01']);
    // Traffic months stay attached: the traffic retention deletes their rows instead.
    const traffic = await sql<{
      t: string;
    }>`select tableoid::regclass::text as t from traffic_hour where account_id = ${accountId}`.execute(h.env.db);
    expect(traffic.rows.map((r) => r.t)).toEqual(['traffic_hour_y2025m01', 'traffic_hour_y2025m01', 'traffic_hour_y2025m01']);
    const listed = JSON.parse((await cli('partitions', 'list', '--json')).out);
    expect(listed.data).toContainEqual(expect.objectContaining({ name: 'outcomes_y2025m01', month: OLD_MONTH, state: 'archived' }));
    expect(listed.data).toContainEqual(
      expect.objectContaining({ name: 'traffic_hour_y2025m01', table: 'traffic_hour', state: 'attached' }),
    );
    // Out of the live tables, still in the database.
    expect(await h.env.db.selectFrom('decisions').select('request_id').where('request_id', 'like', 'req_archive_%').execute()).toEqual([]);
    expect(await usersIn('decisions_y2025m01')).toEqual(['live:erased', 'live:kept', 'test:kept']);

    expect((await h.http().delete('/v1/profile/erased').set(bearer(liveKey))).status).toBe(204);
    for (const table of ['decisions_y2025m01', 'outcomes_y2025m01', 'profile_versions_y2025m01']) {
      expect(await usersIn(table)).toEqual(['live:kept', 'test:kept']);
    }

    const reset = await resetTestData(h.env, { trigger: 'manual', accountId });
    expect(reset.rowsRemoved).toMatchObject({ decisions: 1, outcomes: 1, profile_versions: 1 });
    for (const table of ['decisions_y2025m01', 'outcomes_y2025m01', 'profile_versions_y2025m01']) {
      expect(await usersIn(table)).toEqual(['live:kept']);
    }
    // Nothing left to detach before that month: the command is idempotent.
    expect(JSON.parse((await cli('partitions', 'detach', '--before', '2025-02', '--json')).out).detached).toEqual([]);
  });
});
