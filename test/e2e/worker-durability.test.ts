import os from 'node:os';
import { sql } from 'kysely';
import { WorkerGroup } from '../../shared/jobs/worker-group.repository';
import { KeyService } from '../../shared/credentials/key.service';
import { eventually } from '../support/harness';
import { eventsIdle, eventsQueues, type EventsQueues } from '../support/ledger';
import { startRedisProxy } from '../support/redis-proxy';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * The built api and two real worker processes on one Redis and Postgres: exactly-once
 * application and no lost updates under concurrency, SIGKILL and SIGTERM.
 */
let env: TestEnv;
let api: Spawned & { url: string };
let key: string;
let queue: EventsQueues;
let group: WorkerGroup;
const workers: Spawned[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  queue = eventsQueues(env.redis, env.keys);
  group = new WorkerGroup(env.redis, env.keys);
  key = (await new KeyService(env.db, TEST_SECRET).create({ account: 'durable', environment: 'test' })).key;
  api = await spawnApi(env.processEnv());
});
afterAll(async () => {
  await Promise.all([...workers, api].map((p) => stop(p, 'SIGKILL')));
  await queue.close();
  await env.close();
});

const startWorker = (extra: Record<string, string> = {}) => {
  const worker = spawnBuilt('worker/main.js', env.processEnv({ WORKER_CONCURRENCY: '64', WORKER_BATCH_SIZE: '50', ...extra }));
  workers.push(worker);
  return worker;
};

async function counts(userId: string) {
  const row = await sql<{ outcomes: number; versions: number; decisions: number }>`
    select (select count(*) from outcomes where user_id = ${userId})::int as outcomes,
           (select count(*) from profile_versions where user_id = ${userId})::int as versions,
           (select count(*) from decisions where user_id = ${userId})::int as decisions`.execute(env.db);
  return row.rows[0]!;
}

async function issue(userId: string, n: number): Promise<string[]> {
  const api1 = client(api.url, key);
  const ids: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, () => api1.context(userId, ['low', 'medium', 'high'][i % 3])),
    );
    for (const res of batch) {
      expect(res.status).toBe(200);
      ids.push(res.body.requestId);
    }
  }
  return ids;
}

describe('worker processes', () => {
  it('applies 300 concurrent outcomes for one user with 2 workers exactly once: count 300, version v300', async () => {
    startWorker();
    startWorker();
    const c = client(api.url, key);
    const ids = await issue('hot-user', 300);
    const results = await Promise.all(
      ids.map((requestId, i) => c.outcome({ requestId, started: i % 2 === 0, satisfaction: (i % 10) / 10 })),
    );
    expect(results.every((r) => r.status === 202)).toBe(true);
    // Retries of every outcome, concurrently, must not double-apply.
    const retries = await Promise.all(
      ids.map((requestId, i) => c.outcome({ requestId, started: i % 2 === 0, satisfaction: (i % 10) / 10 })),
    );
    expect(retries.every((r) => r.status === 202)).toBe(true);
    const profile = await eventually(
      async () => {
        const p = await c.profile('hot-user');
        return p.body.interactionCount === 300 ? p.body : null;
      },
      60_000,
      200,
    );
    expect(profile.profileVersion).toBe('v300');
    await eventually(() => eventsIdle(queue)); // nothing left that could apply one again
    expect((await c.profile('hot-user')).body).toMatchObject({ interactionCount: 300, profileVersion: 'v300' });
    expect(await counts('hot-user')).toEqual({ outcomes: 300, versions: 300, decisions: 300 });
    const stored = await env.db
      .selectFrom('profiles')
      .select(['profile_version', 'interaction_count'])
      .where('user_id', '=', 'hot-user')
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ profile_version: 300, interaction_count: 300 });
  }, 120_000);

  it('loses and double-applies nothing when a worker is SIGKILLed mid-stream; the survivor takes its partitions over', async () => {
    const c = client(api.url, key);
    const users = ['kill-a', 'kill-b', 'kill-c'];
    const ids = (await Promise.all(users.map((u) => issue(u, 200)))).flat();
    const victim = workers[0]!;
    const posting = Promise.all(ids.map((requestId) => c.outcome({ requestId, started: true, completed: requestId.length % 2 === 0 })));
    // Kill once the workers are demonstrably mid-stream: some outcomes applied, most not.
    await eventually(
      async () => {
        const applied = await sql<{ n: number }>`select count(*)::int as n from outcomes where user_id like 'kill-%'`.execute(env.db);
        return applied.rows[0]!.n > 0;
      },
      30_000,
      5,
    );
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBe('SIGKILL');
    const results = await posting;
    expect(results.filter((r) => r.status !== 202)).toEqual([]);
    // Once the victim's heartbeat times out, the survivor is the group and consumes every partition.
    const all = env.keys.queuePrefixes.map((_, partition) => partition);
    await eventually(
      async () => {
        const { members, partitions } = await group.read();
        return members.length === 1 && partitions.get(members[0]!.id)?.join() === all.join();
      },
      30_000,
      100,
    );
    startWorker(); // a replacement, as an operator or orchestrator would start
    for (const user of users) {
      await eventually(async () => (await c.profile(user)).body.interactionCount === 200, 90_000, 250);
    }
    await eventually(() => eventsIdle(queue), 30_000); // including jobs the killed worker held
    for (const user of users) {
      expect((await c.profile(user)).body).toMatchObject({ interactionCount: 200, profileVersion: 'v200' });
      expect(await counts(user)).toEqual({ outcomes: 200, versions: 200, decisions: 200 });
    }
  }, 150_000);

  it('drains on SIGTERM: the jobs it holds are applied by that same worker before it exits 0, the rest wait', async () => {
    const c = client(api.url, key);
    await Promise.all(workers.map((w) => stop(w, 'SIGTERM')));
    // A backlog, queued while no worker runs, for the worker to be in the middle of.
    const users = ['drain-a', 'drain-b', 'drain-c'];
    const ids = (await Promise.all(users.map((u) => issue(u, 200)))).flat();
    const posted = await Promise.all(ids.map((requestId) => c.outcome({ requestId, started: true })));
    expect(posted.every((r) => r.status === 202)).toBe(true);
    // Two jobs at a time (a job carries a whole batch of events): most of the backlog stays queued.
    const draining = startWorker({ LOG_LEVEL: 'info', WORKER_CONCURRENCY: '2' });
    await eventually(
      async () => {
        const applied = await sql<{ n: number }>`select count(*)::int as n from outcomes where user_id like 'drain-%'`.execute(env.db);
        return applied.rows[0]!.n > 0;
      },
      30_000,
      5,
    );
    draining.child.kill('SIGTERM');
    const inFlight = await queue.getJobs(['active']);
    expect(inFlight.length).toBeGreaterThan(0);
    expect(await draining.exited).toBe(0);
    expect(draining.output()).toContain('worker draining in-flight jobs');
    expect((await group.read()).members).toEqual([]); // it left the group: nothing waits for its timeout
    // No other worker ran: each job it held when told to stop was completed by it before it exited.
    const settled = await Promise.all(inFlight.map((job) => queue.getJob(job.id!)));
    for (const job of settled) {
      expect(await job!.getState()).toBe('completed');
      expect(job!.processedBy).toBe(`${os.hostname()}:${draining.child.pid}`);
    }
    expect(await queue.count('wait')).toBeGreaterThan(0); // it stopped taking new ones
    startWorker();
    for (const user of users) await eventually(async () => (await c.profile(user)).body.interactionCount === 200, 60_000, 200);
    await eventually(() => eventsIdle(queue));
    for (const user of users) expect(await counts(user)).toEqual({ outcomes: 200, versions: 200, decisions: 200 });
  }, 120_000);

  it('exits 1 once WORKER_DRAIN_TIMEOUT has passed when it cannot drain; what it held is applied later, once', async () => {
    const c = client(api.url, key);
    await Promise.all(workers.map((w) => stop(w, 'SIGTERM')));
    const users = ['stuck-a', 'stuck-b'];
    const ids = (await Promise.all(users.map((u) => issue(u, 100)))).flat();
    const posted = await Promise.all(ids.map((requestId) => c.outcome({ requestId, started: true })));
    expect(posted.every((r) => r.status === 202)).toBe(true);
    // The worker reaches Redis through a proxy that can cut it off, as a network partition does.
    const redis = await startRedisProxy(env);
    try {
      const stuck = startWorker({ ...redis.env, WORKER_CONCURRENCY: '2', WORKER_DRAIN_TIMEOUT: '2s' });
      await eventually(
        async () => {
          const applied = await sql<{ n: number }>`select count(*)::int as n from outcomes where user_id like 'stuck-%'`.execute(env.db);
          return applied.rows[0]!.n > 0;
        },
        30_000,
        5,
      );
      await redis.interrupt();
      const told = Date.now();
      stuck.child.kill('SIGTERM');
      expect(await stuck.exited).toBe(1);
      // It waited out its drain time-out (2 s), not less (it gave up early) and not much more (it hung).
      const waited = Date.now() - told;
      expect(waited).toBeGreaterThanOrEqual(1_950);
      expect(waited).toBeLessThan(10_000);
      expect(stuck.output()).toContain('worker did not drain in time');
    } finally {
      await redis.close();
    }
    startWorker();
    for (const user of users) await eventually(async () => (await c.profile(user)).body.interactionCount === 100, 60_000, 200);
    await eventually(() => eventsIdle(queue));
    for (const user of users) expect(await counts(user)).toEqual({ outcomes: 100, versions: 100, decisions: 100 });
  }, 120_000);
});
