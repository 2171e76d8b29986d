import { sql } from 'kysely';
import { createEngine } from '../../shared/domain/engine/engine';
import type { EngineState } from '../../shared/domain/engine/state';
import type { Tenant } from '../../shared/domain/environment';
import { findPopulation, mergeIntoPopulation } from '../../shared/population/population.repository';
import { newProfile, type StoredProfile } from '../../shared/profile/profile';
import { findProfile, insertNewProfiles, insertProfilesIfMissing, updateProfiles } from '../../shared/profile/profile.repository';
import { seededRandom } from '../../shared/domain/random';
import { mergeDelta, PriorMemo, readPrior } from '../../worker/phases/population-prior';
import { insertDecisions } from '../../worker/phases/events.repository';
import type { Job } from 'bullmq';
import { lockEventUsers } from '../../shared/db/locks';
import { JOBS } from '../../shared/jobs/catalog';
import { eventsQueues } from '../support/ledger';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

/** The worker's one-statement-per-table writes, its prior memo, and two workers sharing one backlog. */
let h: Harness;
beforeAll(async () => {
  // Small batches: the two workers' transactions interleave on the same users many times.
  h = await startHarness({ WORKER_BATCH_SIZE: '16' });
});
afterAll(async () => h.close());

const tenant: Tenant = { accountId: 'batch-writes', environment: 'live' };
const now = new Date('2026-11-25T10:00:00.000Z');

/** A state after `outcomes` outcomes, different for each seed, as JSON gives it back. */
function learned(outcomes: number, seed: number): EngineState {
  const prior = engine.emptyPrior();
  const random = seededRandom(seed);
  let state = engine.initialState(prior);
  for (let i = 0; i < outcomes; i++) {
    const { choice } = engine.decide(state, { context: { taskComplexity: 'low' }, pins: {}, random }, prior);
    state = engine.update(state, { context: { taskComplexity: 'low' }, choice, reward: random(), started: true }, prior);
  }
  return JSON.parse(JSON.stringify(state)) as EngineState;
}

const engine = createEngine();

describe('batch writes', () => {
  it("writes each profile's own state, pins, version, count and time in one multi-row update", async () => {
    const users = ['mu-a', 'mu-b', 'mu-c'];
    await insertProfilesIfMissing(
      h.env.db,
      tenant,
      users.map((u) => newProfile({ userId: u, generation: `gen-${u}` }, engine.initialState(engine.emptyPrior()), now)),
    );
    const next: StoredProfile[] = users.map((userId, i) => ({
      userId,
      generation: `gen-${userId}`,
      version: 10 + i,
      state: learned(i + 1, i + 1),
      pins: i === 1 ? { framing: 'curiosity' as const } : {},
      interactionCount: 20 + i,
      updatedAt: new Date(now.getTime() + i * 1000).toISOString(),
    }));
    await updateProfiles(h.env.db, tenant, next);
    for (const expected of next) expect(await findProfile(h.env.db, tenant, expected.userId)).toEqual(expected);
  });

  it('creates the missing profiles from one shared state and leaves existing rows as they are', async () => {
    const existing = { ...newProfile({ userId: 'np-old', generation: 'gen-old' }, learned(3, 7), now), version: 3, interactionCount: 3 };
    await insertProfilesIfMissing(h.env.db, tenant, [existing]);
    const initial = engine.initialState(engine.emptyPrior());
    await insertNewProfiles(
      h.env.db,
      tenant,
      [
        { userId: 'np-old', generation: 'gen-other' },
        { userId: 'np-new', generation: 'gen-new' },
      ],
      initial,
      now,
    );
    expect(await findProfile(h.env.db, tenant, 'np-old')).toEqual(existing);
    expect(await findProfile(h.env.db, tenant, 'np-new')).toEqual(
      newProfile({ userId: 'np-new', generation: 'gen-new' }, JSON.parse(JSON.stringify(initial)), now),
    );
  });

  it('stores decisions as their jobs carry them, at the millisecond of their requestId, once however often they come', async () => {
    const issuedAt = Date.parse('2026-11-25T10:00:00.123Z');
    const decision = {
      ...tenant,
      requestId: 'req_stored-as-carried',
      userId: 'sd-user',
      generation: 'g',
      context: { complexity: 'low' as const, taskType: 'mail', metadata: { source: 'test' } },
      choice: {
        framing: 'purpose' as const,
        style: 'warm' as const,
        complexityHandling: 'chunked' as const,
        encouragement: 'minimal' as const,
      },
      probabilities: { framing: 0.5, style: 0.25, complexityHandling: 1, encouragement: Math.fround(0.1) },
      explored: ['style'],
      confidence: 0.42,
      issuedAt,
    };
    await insertDecisions(h.env.db, tenant, [decision]);
    await insertDecisions(h.env.db, tenant, [decision]);
    const rows = await h.env.db.selectFrom('decisions').selectAll().where('request_id', '=', decision.requestId).execute();
    expect(rows).toHaveLength(1);
    expect(new Date(rows[0]!.issued_at).getTime()).toBe(issuedAt);
    expect(rows[0]).toMatchObject({
      user_id: 'sd-user',
      chosen: decision.choice,
      probabilities: decision.probabilities,
      context: decision.context,
      explored: ['style'],
      confidence: 0.42,
    });
  });

  it("merges a worker's delta into the prior as stored, not the older copy its memo holds", async () => {
    const priorTenant: Tenant = { accountId: 'memo', environment: 'live' };
    const [a, b] = [new PriorMemo(), new PriorMemo()];
    const delta = (n: number) => ({ ...engine.emptyDelta(), outcomeCount: n, complexityCount: [n, 0, 0] });
    const first = await h.env.db.transaction().execute((tx) => mergeDelta({ tx, tenant: priorTenant, learner: engine, memo: a }, delta(1)));
    await h.env.db.transaction().execute((tx) => mergeDelta({ tx, tenant: priorTenant, learner: engine, memo: b }, delta(2)));
    // a's memo still holds `first`: its next merge must start from b's prior.
    expect(a.get(priorTenant)?.version).toBe(first.version);
    await h.env.db.transaction().execute((tx) => mergeDelta({ tx, tenant: priorTenant, learner: engine, memo: a }, delta(4)));
    const expected = [1, 2, 4].reduce((prior, n) => engine.mergePrior(prior, delta(n)), engine.emptyPrior());
    expect((await findPopulation(h.env.db, priorTenant))?.prior.sums).toEqual(JSON.parse(JSON.stringify(expected.sums)));
    // A prior stored by other code (the version moves on) is read again too.
    await mergeIntoPopulation(h.env.db, priorTenant, () => engine.emptyPrior());
    await h.env.db.transaction().execute((tx) => mergeDelta({ tx, tenant: priorTenant, learner: engine, memo: a }, delta(1)));
    expect((await findPopulation(h.env.db, priorTenant))?.prior.sums).toEqual(
      JSON.parse(JSON.stringify(engine.mergePrior(engine.emptyPrior(), delta(1)).sums)),
    );
  });

  it("keeps at most its bound of tenants' priors, and reads an evicted tenant's again", async () => {
    const memo = new PriorMemo(2);
    const tenants: Tenant[] = ['memo-a', 'memo-b', 'memo-c'].map((accountId) => ({ accountId, environment: 'test' }));
    const delta = () => ({ ...engine.emptyDelta(), outcomeCount: 1 });
    for (const tenant of tenants)
      await h.env.db.transaction().execute((tx) => mergeDelta({ tx, tenant: tenant, learner: engine, memo: memo }, delta()));
    expect(tenants.filter((tenant) => memo.get(tenant) !== undefined)).toHaveLength(2);
    // Every tenant's next merge starts from its stored prior, remembered or not.
    for (const tenant of tenants)
      await h.env.db.transaction().execute((tx) => mergeDelta({ tx, tenant: tenant, learner: engine, memo: memo }, delta()));
    const twice = engine.mergePrior(engine.mergePrior(engine.emptyPrior(), delta()), delta());
    for (const tenant of tenants) {
      const stored = await findPopulation(h.env.db, tenant);
      expect(stored?.prior.sums).toEqual(JSON.parse(JSON.stringify(twice.sums)));
      expect((await h.env.db.transaction().execute((tx) => readPrior({ tx, tenant, learner: engine, memo }))).sums).toEqual(
        stored?.prior.sums,
      );
    }
  });
});

describe('two workers on one backlog', () => {
  it('apply every outcome exactly once: one row, one interaction and one version each', async () => {
    const key = await h.key('two-workers', 'test');
    const users = Array.from({ length: 12 }, (_, i) => `tw-${i}`);
    const ids: string[] = [];
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(
        users.map((userId) => h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'medium' })),
      );
      ids.push(...answers.map((a) => a.body.requestId as string));
    }
    // No worker runs yet: decisions and outcomes wait in the queue together.
    for (const [i, requestId] of ids.entries()) {
      const res = await h
        .http()
        .post('/v1/outcome')
        .set(bearer(key))
        .send({ requestId, started: true, completed: i % 2 === 0 });
      expect(res.status).toBe(202);
    }
    h.startWorker();
    h.startWorker();
    const count = async () =>
      (
        await sql<{ outcomes: number; interactions: number; versions: number }>`
          select (select count(*) from outcomes where user_id like 'tw-%')::int as outcomes,
                 (select coalesce(sum(interaction_count), 0) from profiles where user_id like 'tw-%')::int as interactions,
                 (select count(*) from profile_versions where user_id like 'tw-%' and cause = 'outcome')::int as versions`.execute(h.env.db)
      ).rows[0]!;
    await eventually(async () => (await count()).interactions === ids.length, 60_000);
    expect(await count()).toEqual({ outcomes: ids.length, interactions: ids.length, versions: ids.length });
    const { rows } = await sql<{ user_id: string; versions: number[] }>`
      select user_id, array_agg(profile_version order by profile_version) as versions
      from profile_versions where user_id like 'tw-%' group by user_id`.execute(h.env.db);
    for (const row of rows) expect(row.versions).toEqual([1, 2, 3, 4, 5, 6]);
  });
  it('makes an applier wait on a user another applier holds (a lock wait seen in pg_locks), then apply each outcome once', async () => {
    const key = await h.key('lock-wait', 'test');
    const { id: accountId } = await h.env.db.selectFrom('accounts').select('id').where('name', '=', 'lock-wait').executeTakeFirstOrThrow();
    const tenant: Tenant = { accountId, environment: 'test' };
    const ids: string[] = [];
    for (let round = 0; round < 3; round++) {
      const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'lw-user', task: 't', complexity: 'low' });
      ids.push(res.body.requestId as string);
    }
    const applied = async () =>
      Number((await sql<{ n: number }>`select count(*)::int as n from outcomes where user_id = 'lw-user'`.execute(h.env.db)).rows[0]!.n);
    // Advisory locks some backend is waiting for: the running workers' batches for this user.
    const waiting = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`.execute(h.env.db))
          .rows[0]!.n,
      );
    expect(await waiting()).toBe(0);
    // The first applier: a transaction holding the user's lock, as a worker batch does while it applies.
    await h.env.db.transaction().execute(async (tx) => {
      await lockEventUsers(tx, tenant, ['lw-user']);
      for (const requestId of ids) {
        expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true })).status).toBe(202);
      }
      // The workers (started above) take the jobs, and their batch waits for the lock: nothing applied meanwhile.
      await eventually(async () => (await waiting()) > 0);
      expect(await applied()).toBe(0);
    });
    await eventually(async () => (await applied()) === ids.length);
    // The same outcomes once more, as a second applier that got them too would see them: nothing changes.
    const queue = eventsQueues(h.env.redis, h.env.keys);
    const ours = (job: Job) =>
      job.name === 'outcomes' && JOBS.outcomes.schema.parse(job.data).outcomes.some((o) => ids.includes(o.requestId));
    const requeued: Job[] = [];
    for (const partition of queue.queues) {
      for (const job of (await partition.getJobs(['completed'])).filter(ours)) {
        requeued.push(await partition.add(job.name, job.data, { jobId: `again-${requeued.length}` }));
      }
    }
    expect(requeued.length).toBeGreaterThan(0);
    await eventually(async () => (await Promise.all(requeued.map((job) => job.isCompleted()))).every(Boolean));
    await queue.close();
    expect(await applied()).toBe(ids.length);
    const { rows } = await sql<{ versions: number[]; interactions: number }>`
      select array_agg(v.profile_version order by v.profile_version) as versions, max(p.interaction_count) as interactions
      from profile_versions v join profiles p on p.account_id = v.account_id and p.environment = v.environment and p.user_id = v.user_id
      where v.user_id = 'lw-user' and v.cause = 'outcome'`.execute(h.env.db);
    expect(rows).toEqual([{ versions: [1, 2, 3], interactions: 3 }]);
  });
});
