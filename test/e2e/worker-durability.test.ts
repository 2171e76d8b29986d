import { sql } from 'kysely';
import { KeyService } from '../../shared/keys/key.service';
import { eventually } from '../support/harness';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * The built api and two real worker processes on one Redis and Postgres: exactly-once
 * application and no lost updates under concurrency, SIGKILL and SIGTERM.
 */
let env: TestEnv;
let api: Spawned & { url: string };
let key: string;
const workers: Spawned[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  key = (await new KeyService(env.db, TEST_SECRET).create({ account: 'durable', environment: 'test' })).key;
  api = await spawnApi(env.processEnv());
});
afterAll(async () => {
  await Promise.all([...workers, api].map((p) => stop(p, 'SIGKILL')));
  await env.close();
});

const startWorker = () => {
  const worker = spawnBuilt('worker/main.js', env.processEnv({ WORKER_CONCURRENCY: '64', WORKER_BATCH_SIZE: '50' }));
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
    await new Promise((r) => setTimeout(r, 1000));
    expect((await c.profile('hot-user')).body).toMatchObject({ interactionCount: 300, profileVersion: 'v300' });
    expect(await counts('hot-user')).toEqual({ outcomes: 300, versions: 300, decisions: 300 });
    const stored = await env.db
      .selectFrom('profiles')
      .select(['profile_version', 'interaction_count'])
      .where('user_id', '=', 'hot-user')
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ profile_version: 300, interaction_count: 300 });
  }, 120_000);

  it('loses and double-applies nothing when a worker is SIGKILLed mid-stream', async () => {
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
    startWorker(); // a replacement, as an operator or orchestrator would start
    for (const user of users) {
      await eventually(async () => (await c.profile(user)).body.interactionCount === 200, 90_000, 250);
    }
    await new Promise((r) => setTimeout(r, 1000));
    for (const user of users) {
      expect((await c.profile(user)).body).toMatchObject({ interactionCount: 200, profileVersion: 'v200' });
      expect(await counts(user)).toEqual({ outcomes: 200, versions: 200, decisions: 200 });
    }
  }, 150_000);

  it('drains in-flight jobs on SIGTERM and exits 0', async () => {
    const c = client(api.url, key);
    const ids = await issue('drain-user', 100);
    await Promise.all(ids.map((requestId) => c.outcome({ requestId, started: true })));
    const running = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    const codes = await Promise.all(running.map((w) => stop(w, 'SIGTERM')));
    expect(codes.every((code) => code === 0)).toBe(true);
    // Whatever was fetched was applied; the rest waits in the queue for the next worker.
    startWorker();
    await eventually(async () => (await c.profile('drain-user')).body.interactionCount === 100, 60_000, 200);
    expect(await counts('drain-user')).toEqual({ outcomes: 100, versions: 100, decisions: 100 });
  }, 120_000);
});
