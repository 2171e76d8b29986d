import { Queue } from 'bullmq';
import { JOBS, MAINTENANCE_QUEUE } from '../../shared/jobs/catalog';
import { findAccount } from '../../shared/accounts/account.repository';
import { startOfNextMonth } from '../../shared/util/calendar';
import { catchUpTestDataReset, resetTestData } from '../../shared/test-data/test-data-reset';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { runCliCaptured } from '../support/cli';
import { PopulationCache } from '../../shared/population/population-cache.repository';
import { emptyPopulation } from '../../shared/domain/engine/population';
import { findPopulation } from '../../shared/population/population.repository';
import { sql } from 'kysely';
import { createDb, DB_ROLES } from '../../shared/db/database';
import { batchPoolSettings, jobTimings } from '../../worker/job-timings';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.startWorker();
});
afterAll(() => h.close());

async function seedUser(key: string, userId: string): Promise<void> {
  const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId;
  await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true });
  await eventually(async () => (await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body.interactionCount === 1);
  // The decision is logged behind the answer: wait for its row too.
  await h.deps.decisions.sendNow();
  await eventually(() => h.env.db.selectFrom('decisions').select('request_id').where('request_id', '=', rid).executeTakeFirst());
}

async function counts(accountName: string, environment: 'test' | 'live') {
  const account = (await findAccount(h.env.db, accountName))!;
  const out: Record<string, number> = {};
  for (const table of ['profiles', 'profile_versions', 'decisions', 'outcomes'] as const) {
    const row = await h.env.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', account.id)
      .where('environment', '=', environment)
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

const none = { profiles: 0, profile_versions: 0, decisions: 0, outcomes: 0 };
const one = { profiles: 1, profile_versions: 1, decisions: 1, outcomes: 1 };

describe('monthly test-data reset', () => {
  it('deletes every test profile, version, decision and outcome and their cache, never live data; test keys keep working', async () => {
    const aTest = await h.key('reset-a', 'test');
    const aLive = await h.key('reset-a', 'live');
    const bTest = await h.key('reset-b', 'test');
    await seedUser(aTest, 'ra');
    await seedUser(aLive, 'ra');
    await seedUser(bTest, 'rb');
    const result = await resetTestData(h.env, { trigger: 'manual' });
    expect(result.ran).toBe(true);
    expect(result.rowsRemoved.profiles).toBeGreaterThanOrEqual(2);
    expect(await counts('reset-a', 'test')).toEqual(none);
    expect(await counts('reset-b', 'test')).toEqual(none);
    expect(await counts('reset-a', 'live')).toEqual(one);
    expect((await h.http().get('/v1/profile/ra').set(bearer(aTest))).status).toBe(404);
    expect((await h.http().get('/v1/profile/ra').set(bearer(aLive))).body.interactionCount).toBe(1);
    const fresh = await h.http().post('/v1/context').set(bearer(aTest)).send({ userId: 'ra', task: 't', complexity: 'low' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.metadata).toMatchObject({ profilePhase: 'cold_start', interactionCount: 0 });
    const run = await h.env.db.selectFrom('test_data_resets').selectAll().where('trigger', '=', 'manual').executeTakeFirstOrThrow();
    expect(run.rows_removed).toEqual(result.rowsRemoved);
  });

  it('clears test population priors, in Postgres and in Redis (fenced against late writes), never live ones', async () => {
    const pTest = await h.key('reset-p', 'test');
    const pLive = await h.key('reset-p', 'live');
    await seedUser(pTest, 'rp');
    await seedUser(pLive, 'rp');
    const account = (await findAccount(h.env.db, 'reset-p'))!;
    const test = { accountId: account.id, environment: 'test' as const };
    const live = { accountId: account.id, environment: 'live' as const };
    const cache = new PopulationCache(h.env.redis, h.env.keys);
    const before = await findPopulation(h.env.db, test);
    expect(before).not.toBeNull();
    await eventually(async () => (await cache.read(test))?.version === before!.version);

    const result = await resetTestData(h.env, { trigger: 'manual', accountId: account.id });
    expect(result.rowsRemoved.population_priors).toBe(1);
    expect(await findPopulation(h.env.db, test)).toBeNull();
    expect(await findPopulation(h.env.db, live)).not.toBeNull();
    // The copy left in Redis is the empty prior, under a version newer than any before the reset.
    const fenced = (await cache.read(test))!;
    expect(fenced.prior.sums).toEqual(emptyPopulation());
    expect(fenced.version).toBeGreaterThan(before!.version);
    // A worker that committed before the reset and writes its copy late cannot bring it back.
    await cache.writeManyIfNewer([{ tenant: test, population: before! }]);
    expect((await cache.read(test))!.prior.sums).toEqual(emptyPopulation());
    expect((await cache.read(live))?.prior.sums).not.toEqual(emptyPopulation());
  });

  it('resets one account only with --account, through the CLI', async () => {
    const cTest = await h.key('reset-c', 'test');
    const dTest = await h.key('reset-d', 'test');
    await seedUser(cTest, 'rc');
    await seedUser(dTest, 'rd');
    const { code, out } = await runCliCaptured(['test-data', 'reset', '--account', 'reset-c', '--json'], h.env.processEnv());
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ account: 'reset-c', rowsRemoved: { profiles: 1, outcomes: 1, decisions: 1 } });
    expect(await counts('reset-c', 'test')).toEqual(none);
    expect(await counts('reset-d', 'test')).toEqual(one);
  });

  it('drops queued test decisions issued before the reset instead of reviving their users', async () => {
    const key = await h.key('reset-queued', 'test');
    const account = (await findAccount(h.env.db, 'reset-queued'))!;
    const issuedAt = Date.now() - 60_000;
    await resetTestData(h.env, { trigger: 'manual', accountId: account.id });
    const queue = new Queue('events', { connection: h.env.redis, prefix: h.env.keys.queuePrefixes[0]! });
    const rid = `req_before_reset_${Date.now()}`;
    const batchId = Date.now().toString(16).padStart(16, '0');
    await queue.add(
      'decisions',
      {
        batchId,
        decisions: [
          {
            accountId: account.id,
            environment: 'test',
            requestId: rid,
            userId: 'ghost',
            generation: 'g-old',
            context: { complexity: 'low' },
            choice: { framing: 'purpose', style: 'warm', complexityHandling: 'whole', encouragement: 'minimal' },
            probabilities: { framing: 0.2, style: 0.25, complexityHandling: 0.3, encouragement: 0.3 },
            explored: [],
            confidence: 0.01,
            issuedAt,
          },
        ],
      },
      { jobId: JOBS.decisions.jobId({ batchId }) },
    );
    await eventually(async () => (await queue.getJob(JOBS.decisions.jobId({ batchId })))?.isCompleted());
    const job = await queue.getJob(JOBS.decisions.jobId({ batchId })); // read again once settled
    expect(job!.returnvalue).toMatch(/dropped/);
    expect((await h.http().get('/v1/profile/ghost').set(bearer(key))).status).toBe(404);
    await queue.close();
  });

  it('runs once per period however many workers race for it', async () => {
    const runs = await Promise.all(Array.from({ length: 4 }, () => resetTestData(h.env, { trigger: 'schedule', period: '2031-05' })));
    expect(runs.filter((r) => r.ran)).toHaveLength(1);
    const rows = await h.env.db.selectFrom('test_data_resets').select('id').where('period', '=', '2031-05').execute();
    expect(rows).toHaveLength(1);
  });

  it('catches up a month missed while no worker ran, once; a fresh install records a baseline instead', async () => {
    await h.env.db.deleteFrom('test_data_resets').execute();
    const nov = Date.UTC(2032, 10, 14, 9);
    expect(await catchUpTestDataReset(h.env, nov)).toBeNull();
    const baseline = await h.env.db.selectFrom('test_data_resets').selectAll().execute();
    expect(baseline).toEqual([expect.objectContaining({ period: '2032-11', trigger: 'baseline' })]);
    expect(await catchUpTestDataReset(h.env, nov + 86_400_000)).toBeNull();
    const key = await h.key('reset-catchup', 'test');
    await seedUser(key, 'rcu');
    const feb = Date.UTC(2033, 1, 2, 8); // December and January passed with no worker
    const caughtUp = await catchUpTestDataReset(h.env, feb);
    expect(caughtUp).toMatchObject({ ran: true, period: '2033-02' });
    expect(await counts('reset-catchup', 'test')).toEqual(none);
    expect(await catchUpTestDataReset(h.env, feb + 3_600_000)).toBeNull();
  });

  it('schedules the reset for 00:00 UTC on the 1st and usage flushes in the worker', async () => {
    const queue = new Queue(MAINTENANCE_QUEUE, { connection: h.env.redis, prefix: h.env.keys.maintenanceQueuePrefix });
    const scheduler = await eventually(() => queue.getJobScheduler(JOBS.testDataReset.scheduler.id));
    expect(scheduler).toMatchObject({ pattern: '0 0 1 * *', tz: 'UTC' });
    expect(scheduler!.next).toBe(startOfNextMonth(Date.now()));
    const flush = await queue.getJobScheduler(JOBS.usageFlush.scheduler.id);
    expect(flush?.every).toBeGreaterThan(0);
    await queue.close();
  });
  it('completes a reset longer than a batch statement may be: the reset has a deadline of its own', async () => {
    const key = await h.key('reset-long', 'test');
    const account = (await findAccount(h.env.db, 'reset-long'))!;
    // Deleting test profiles takes longer than a worker batch's statement deadline (a statement
    // trigger fires however many rows the statement deletes).
    const batchStatementMs = jobTimings(1).statementMs;
    const sleepS = batchStatementMs / 1000 + 1;
    await sql`create or replace function slow_reset() returns trigger language plpgsql as $$
      begin perform pg_sleep(${sql.lit(sleepS)}); return null; end $$`.execute(h.env.db);
    await sql`create trigger slow_reset after delete on profiles for each statement execute function slow_reset()`.execute(h.env.db);
    const maintenance = createDb(h.env.databaseUrl, DB_ROLES.maintenance);
    const batches = createDb(h.env.databaseUrl, batchPoolSettings(jobTimings(1)));
    try {
      const [reset, batch] = await Promise.allSettled([
        resetTestData({ db: maintenance, redis: h.env.redis, keys: h.env.keys }, { trigger: 'manual', accountId: account.id }),
        sql`select pg_sleep(${sql.lit(sleepS)})`.execute(batches),
      ]);
      expect(batch).toMatchObject({ status: 'rejected', reason: { code: '57014' } }); // canceling statement due to statement timeout
      expect(reset).toMatchObject({ status: 'fulfilled', value: { ran: true } });
      expect(
        (await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'after-reset', task: 't', complexity: 'low' })).status,
      ).toBe(200);
    } finally {
      await sql`drop trigger slow_reset on profiles`.execute(h.env.db);
      await Promise.all([maintenance.destroy(), batches.destroy()]);
    }
  }, 60_000);
});
