import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { freePort, startPostgres, startRedis, type ServiceProcess } from '../../scripts/local-services';
import { signalTree } from '../../scripts/process-tree';
import { redisKeys } from '../../shared/redis/key-names';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { KeyService } from '../../shared/credentials/key.service';
import { eventually } from '../support/harness';
import { eventsIdle, eventsQueues, outcomeLedger, type EventsQueues } from '../support/ledger';
import { addUser, DashboardClient, spawnDashboard } from '../support/dashboard';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { TEST_SECRET } from '../support/test-env';

/**
 * Dependencies that hang, die or refuse writes under the built api, worker and dashboard, on a
 * Postgres and a Redis of this suite's own (a freeze must not stall the other suites). A frozen
 * server is every one of its processes stopped with SIGSTOP: Postgres's backends call setsid(),
 * so a signal to the postmaster's group would miss them. With REQUEST_DEADLINE at 1 s every
 * answer comes within the deadline and a little scheduling slack, whatever hangs.
 */
const DEADLINE_MS = 1000;
/** The sweep's granularity and a busy 2-core machine's scheduling. */
const SLACK_MS = 700;
/** The worker's readiness probes have their own deadline (2 s); the API's and the dashboard's are within the request's. */
const PROBE_BOUND_MS = 2000 + SLACK_MS;

const prefix = `faults${process.pid}`;
let dir: string;
let postgres: ServiceProcess & { dataDir: string };
let redisServer: ServiceProcess;
let db: Db;
let redis: Redis;
let queue: EventsQueues;
let api: Spawned & { url: string };
let worker: Spawned;
let workerOps: string;
let dashboard: Spawned & { url: string };
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cos-faults-'));
  chmodSync(dir, 0o755); // the postgres user must reach its data folder
  postgres = await startPostgres(path.join(dir, 'pg'), { durable: false });
  redisServer = await startRedis(path.join(dir, 'redis'), { durable: false });
  db = createDb(postgres.url, { ...DB_ROLES.tool, poolSize: 2 });
  const { error } = await migrateToLatest(db);
  if (error) throw error;
  redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  queue = eventsQueues(redis, redisKeys(prefix));
  key = (await new KeyService(db, TEST_SECRET).create({ account: 'faults', environment: 'test' })).key;
  await addUser(db, 'faults', 'owner@faults.test', 'owner');
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: postgres.url,
    REDIS_URL: redisServer.url,
    COS_SECRET: TEST_SECRET,
    COS_REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    REQUEST_DEADLINE: `${DEADLINE_MS}ms`,
    TRUST_PROXY: 'loopback',
  };
  const opsPort = await freePort();
  workerOps = `http://127.0.0.1:${opsPort}`;
  api = await spawnApi(env);
  worker = spawnBuilt('worker/main.js', { ...env, METRICS_PORT: String(opsPort), WORKER_CONCURRENCY: '64' });
  dashboard = await spawnDashboard(env);
  await eventually(async () => (await fetch(`${workerOps}/readyz`)).status === 200, 20_000, 100);
}, 90_000);

afterAll(async () => {
  for (const server of [postgres, redisServer]) thaw(server);
  await Promise.all([api, worker, dashboard].filter(Boolean).map((p) => stop(p, 'SIGKILL')));
  await queue.close();
  redis.disconnect();
  await db.destroy();
  await Promise.all([postgres.stop(), redisServer.stop()]);
  for (const folder of [postgres.dataDir, dir]) rmSync(folder, { recursive: true, force: true });
});

const freeze = (server: ServiceProcess) => signalTree(server.child.pid!, 'SIGSTOP');
const thaw = (server: ServiceProcess | undefined) => {
  if (server?.child.pid) signalTree(server.child.pid, 'SIGCONT');
};

/** The call's result and how long it took. */
async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

const readyz = async (url: string) => {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
};

const users = Array.from({ length: 8 }, (_, i) => `fault-user-${i}`);

/** Context calls for every user, each answered 200; their requestIds. */
async function contexts(): Promise<string[]> {
  const c = client(api.url, key);
  return Promise.all(
    users.map(async (userId) => {
      const res = await c.context(userId);
      expect(res.status).toBe(200);
      return res.body.requestId as string;
    }),
  );
}

/** Outcomes for the requestIds, each answered 202. */
async function outcomes(requestIds: string[]): Promise<string[]> {
  const c = client(api.url, key);
  const statuses = await Promise.all(requestIds.map(async (requestId) => (await c.outcome({ requestId, started: true })).status));
  expect(statuses).toEqual(requestIds.map(() => 202));
  return requestIds;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

it('answers within the deadline while Postgres is frozen: cached context 200, what needs Postgres 503, probes in their own time', async () => {
  const warm = await outcomes(await contexts()); // keys and profiles cached, users known
  await eventually(() => eventsIdle(queue), 30_000);
  const issued = await contexts();
  const c = client(api.url, key);
  freeze(postgres);
  try {
    const [context, versions, put, apiReady, workerReady, signIn] = await Promise.all([
      timed(() => c.context(users[0]!)),
      timed(() => c.versions(users[1]!)),
      timed(() => c.put(users[2]!, { communicationStyle: 'direct' })),
      timed(() => readyz(api.url)),
      timed(() => readyz(workerOps)),
      timed(() => new DashboardClient(dashboard.url, '203.0.113.9').signIn('owner@faults.test')),
    ]);
    expect(context.value.status).toBe(200);
    expect(context.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    for (const answer of [versions, put]) {
      expect(answer.value.status).toBe(503);
      expect(answer.value.headers.get('retry-after')).toBe('1');
      expect(answer.value.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(answer.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    }
    for (const probe of [apiReady, workerReady]) {
      expect(probe.value).toMatchObject({ status: 503, body: { checks: { postgres: 'unavailable', redis: 'ok' } } });
      expect(probe.ms).toBeLessThan(PROBE_BOUND_MS);
    }
    expect(signIn.value.status).toBe(503);
    expect(signIn.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    // Outcomes are only enqueued: accepted while Postgres hangs.
    const during = await outcomes(issued);
    // Context calls go on answering from the cache, each within the deadline.
    for (let i = 0; i < 3; i++) {
      const again = await timed(() => c.context(users[i]!));
      expect(again.value.status).toBe(200);
      expect(again.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    }
    thaw(postgres);
    const accepted = [...warm, ...during];
    await eventually(async () => (await outcomeLedger(db, accepted)).applied === accepted.length, 60_000, 200);
    expect(await outcomeLedger(db, accepted)).toEqual({ applied: accepted.length, missing: [], appliedTwice: [] });
    expect(await queue.count('failed')).toBe(0);
  } finally {
    thaw(postgres);
  }
  await eventually(async () => (await readyz(api.url)).status === 200, 20_000, 200);
  expect(count(worker.output(), 'job failed')).toBe(0);
}, 120_000);

it('answers 503 within the deadline while Redis is frozen, and serves again once it thaws', async () => {
  const c = client(api.url, key);
  const [requestId] = await contexts();
  freeze(redisServer);
  try {
    const [context, outcome, apiReady] = await Promise.all([
      timed(() => c.context(users[0]!)),
      timed(() => c.outcome({ requestId, started: true })),
      timed(() => readyz(api.url)),
    ]);
    for (const answer of [context, outcome]) {
      expect(answer.value.status).toBe(503);
      expect(answer.value.headers.get('retry-after')).toBe('1');
      expect(answer.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    }
    expect(apiReady.value).toMatchObject({ status: 503, body: { checks: { redis: 'unavailable' } } });
    expect(apiReady.ms).toBeLessThan(PROBE_BOUND_MS);
  } finally {
    thaw(redisServer);
  }
  await eventually(async () => (await c.context(users[0]!)).status === 200, 20_000, 200);
}, 60_000);

it('answers 503 at once while Redis is down, and serves again once it is back', async () => {
  const c = client(api.url, key);
  await redisServer.stop('kill');
  try {
    const answer = await timed(() => c.context(users[0]!));
    expect(answer.value.status).toBe(503);
    expect(answer.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
  } finally {
    await redisServer.start();
  }
  await eventually(async () => (await c.context(users[0]!)).status === 200, 30_000, 200);
  await eventually(async () => (await readyz(workerOps)).status === 200, 30_000, 200);
}, 60_000);

it('reports a Postgres that refuses writes, and the worker holds its jobs until it takes them again', async () => {
  const issued = await contexts();
  await eventually(() => eventsIdle(queue), 30_000);
  const before = worker.output();
  await sql`alter system set default_transaction_read_only = on`.execute(db);
  await sql`select pg_reload_conf()`.execute(db);
  try {
    for (const url of [api.url, workerOps]) {
      // pg_reload_conf returns once the postmaster is signalled; each pooled connection takes the setting a moment later.
      await eventually(async () => (await readyz(url)).body.checks.postgres === 'read-only', 5_000, 50);
      const probe = await timed(() => readyz(url));
      expect(probe.value).toMatchObject({ status: 503, body: { checks: { postgres: 'read-only', redis: 'ok' } } });
      expect(probe.ms).toBeLessThan(PROBE_BOUND_MS);
    }
    const accepted = await outcomes(issued);
    await eventually(async () => worker.output().slice(before.length).includes('postgres refuses writes'), 20_000, 200);
    expect((await outcomeLedger(db, accepted)).applied).toBe(0);
    await sql`alter system reset default_transaction_read_only`.execute(db);
    await sql`select pg_reload_conf()`.execute(db);
    await eventually(async () => (await outcomeLedger(db, accepted)).applied === accepted.length, 30_000, 200);
    expect(await outcomeLedger(db, accepted)).toEqual({ applied: accepted.length, missing: [], appliedTwice: [] });
  } finally {
    await sql`alter system reset default_transaction_read_only`.execute(db);
    await sql`select pg_reload_conf()`.execute(db);
  }
  const during = worker.output().slice(before.length);
  expect(count(during, 'postgres refuses writes')).toBe(1);
  expect(count(during, 'postgres available again')).toBe(1);
  expect(count(during, 'job failed')).toBe(0);
  expect(await queue.count('failed')).toBe(0);
}, 90_000);
