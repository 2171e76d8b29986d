import { Queue } from 'bullmq';
import { EVENTS_QUEUE } from '../../shared/jobs/catalog';
import { utcMonth } from '../../shared/util/calendar';
import { PLAN_LIMITS } from '../../shared/limits/plans';
import { KeyService } from '../../shared/credentials/key.service';
import { eventually } from '../support/harness';
import { outcomeLedger } from '../support/ledger';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * Scale-out on the Redis Cluster (cluster pass only): the built api with API_PROCESSES=2 and
 * three worker processes apply a burst of outcomes for overlapping users exactly once, through
 * the partitioned event queues, and the monthly quota admits exactly what is left of it.
 */
let env: TestEnv;
let api: Spawned & { url: string };
const workers: Spawned[] = [];
let queues: Queue[];

beforeAll(async () => {
  env = await createTestEnv();
  expect(env.clusterNodes).toBeDefined();
  api = await spawnApi(env.processEnv({ API_PROCESSES: '2' }));
  // spawnApi saw one process ready; the port's connections go to both, each ready once its
  // cluster clients have the slot map (503 before, as for any process not ready yet).
  await eventually(async () => (await Promise.all(Array.from({ length: 8 }, () => fetch(`${api.url}/readyz`)))).every((res) => res.ok));
  for (let i = 0; i < 3; i++)
    workers.push(spawnBuilt('worker/main.js', env.processEnv({ WORKER_CONCURRENCY: '64', WORKER_BATCH_SIZE: '50' })));
  queues = env.keys.queuePrefixes.map((prefix) => new Queue(EVENTS_QUEUE, { connection: env.redis, prefix }));
});
afterAll(async () => {
  await Promise.all([...workers, api].filter(Boolean).map((p) => stop(p)));
  await Promise.all((queues ?? []).map((queue) => queue.close()));
  await env?.close();
});

it('applies a burst of outcomes for overlapping users exactly once, spread over the queue partitions', async () => {
  const { key } = await new KeyService(env.db, TEST_SECRET).create({ account: 'burst', environment: 'test' });
  const http = client(api.url, key);
  const users = Array.from({ length: 12 }, (_, i) => `burst-user-${i}`);
  // Every user asks eight times at once, across both API processes.
  const contexts = await Promise.all(users.flatMap((user) => Array.from({ length: 8 }, () => http.context(user))));
  expect(contexts.map((res) => res.status)).toEqual(contexts.map(() => 200));
  const ids: string[] = contexts.map((res) => res.body.requestId);

  // Every outcome, and a retry of every third one (same signals), at once.
  const bodies = ids.map((requestId, i) => ({ requestId, started: true, completed: i % 2 === 0, satisfaction: (i % 5) / 4 }));
  const posts = await Promise.all([...bodies, ...bodies.filter((_, i) => i % 3 === 0)].map((body) => http.outcome(body)));
  expect(posts.map((res) => res.status)).toEqual(posts.map(() => 202));

  const ledger = await eventually(async () => {
    const state = await outcomeLedger(env.db, ids);
    return state.applied === ids.length ? state : null;
  }, 60_000);
  expect(ledger).toEqual({ applied: ids.length, missing: [], appliedTwice: [] });
  // The users' events went through more than one partition (and so more than one slot).
  const completed = await Promise.all(queues.map((queue) => queue.getJobCountByTypes('completed')));
  expect(completed.filter((count) => count > 0).length).toBeGreaterThan(1);
});

it("admits exactly the rest of the account's monthly quota when both API processes are asked at once, through two keys", async () => {
  // Two live keys of one account share its quota: each one's requests count against the account.
  const service = new KeyService(env.db, TEST_SECRET);
  const first = await service.create({ account: 'quota', environment: 'live', rateLimitRps: 100_000 });
  const second = await service.create({ account: 'quota', environment: 'live', rateLimitRps: 100_000 });
  const quota = PLAN_LIMITS.starter.perMonth!;
  const left = 40;
  await env.redis.set(env.keys.monthlyCount({ accountId: first.accountId, month: utcMonth(Date.now()) }), String(quota - left), 'EX', 3600);
  const clients = [client(api.url, first.key), client(api.url, second.key)];
  const answers = await Promise.all(Array.from({ length: 3 * left }, (_, i) => clients[i % 2]!.profile('nobody')));
  const statuses = answers.map((res) => res.status);
  expect(statuses.filter((status) => status === 404)).toHaveLength(left);
  expect(statuses.filter((status) => status === 429)).toHaveLength(2 * left);
  expect(answers.filter((res) => res.status === 429).every((res) => res.body.error.details.scope === 'month')).toBe(true);
});
