import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startPostgres, type ServiceProcess } from '../../scripts/local-services';
import { redisKeys } from '../../shared/redis/key-names';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { KeyService } from '../../shared/credentials/key.service';
import { eventually } from '../support/harness';
import { eventsIdle, eventsQueues, outcomeLedger, type EventsQueues } from '../support/ledger';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { TEST_SECRET } from '../support/test-env';

/**
 * A real Postgres outage under the built api and two workers: a Postgres of this test's own
 * (the suite's is shared) is stopped and started again, while outcomes are posted before and
 * during the outage. The workers wait it out instead of failing jobs: each logs the outage once
 * when it begins and once when it ends, and no attempt is spent. Afterwards every accepted
 * outcome is applied exactly once, nothing is parked, and no process died. (The 10-minute
 * outage is `npm run soak -- --scenario postgres-outage`.)
 */
const OUTAGE_MS = 20_000;
const prefix = `pgout${process.pid}`;
let dir: string;
let postgres: ServiceProcess & { dataDir: string };
let db: Db;
let redis: Redis;
let queue: EventsQueues;
let api: Spawned & { url: string };
const workers: Spawned[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cos-pg-outage-'));
  chmodSync(dir, 0o755); // the postgres user must reach its data folder
  postgres = await startPostgres(path.join(dir, 'pg'), { durable: false });
  db = createDb(postgres.url, { ...DB_ROLES.tool, poolSize: 2 });
  const { error } = await migrateToLatest(db);
  if (error) throw error;
  redis = new Redis(process.env.COS_TEST_REDIS_URL!, { maxRetriesPerRequest: null });
  queue = eventsQueues(redis, redisKeys(prefix));
}, 60_000);
afterAll(async () => {
  await Promise.all([...workers, ...(api ? [api] : [])].map((p) => stop(p, 'SIGKILL')));
  await queue.close();
  redis.disconnect();
  await db.destroy();
  await postgres.stop();
  // Its data may live outside `dir` when the postgres user cannot reach it (postgres-dirs.ts).
  for (const folder of [postgres.dataDir, dir]) rmSync(folder, { recursive: true, force: true });
});

it('applies every outcome accepted before and during a Postgres outage exactly once, with nothing parked and two log lines per worker', async () => {
  const key = (await new KeyService(db, TEST_SECRET).create({ account: 'pg-outage', environment: 'test' })).key;
  const processEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: postgres.url,
    REDIS_URL: process.env.COS_TEST_REDIS_URL!,
    COS_SECRET: TEST_SECRET,
    COS_REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0', // two workers on one host
  };
  api = await spawnApi(processEnv);
  for (let i = 0; i < 2; i++) workers.push(spawnBuilt('worker/main.js', { ...processEnv, WORKER_CONCURRENCY: '64' }));
  const c = client(api.url, key);
  const users = Array.from({ length: 10 }, (_, i) => `pg-outage-${i}`);
  const issue = async () =>
    Promise.all(
      users.map(async (userId) => {
        const res = await c.context(userId);
        expect(res.status).toBe(200);
        return res.body.requestId as string;
      }),
    );
  const post = async (requestIds: string[], started: boolean) => {
    const results = await Promise.all(requestIds.map((requestId) => c.outcome({ requestId, started })));
    expect(results.map((r) => r.status)).toEqual(requestIds.map(() => 202));
    return requestIds;
  };
  const first = await issue();
  const second = await issue();
  // Decisions stored (the API logs them behind its answers), profiles cached.
  const issued = [...first, ...second];
  await eventually(
    async () =>
      (await db.selectFrom('decisions').select('request_id').where('request_id', 'in', issued).execute()).length === issued.length,
    30_000,
  );
  await eventually(() => eventsIdle(queue), 30_000);

  const before = await post(first, true);
  await postgres.stop();
  const outageStarted = Date.now();
  expect((await fetch(`${api.url}/readyz`)).status).toBe(503);
  const during = await post(second, false);
  const duringNew = await post(await issue(), true); // context calls answered from the cache
  // The workers meet the outage: they see Postgres gone and stop taking jobs.
  await eventually(async () => workers.every((w) => w.output().includes('postgres unavailable')), 30_000, 200);
  await new Promise((resolve) => setTimeout(resolve, outageStarted + OUTAGE_MS - Date.now()));
  await postgres.start();
  await eventually(async () => workers.every((w) => w.output().includes('postgres available again')), 30_000, 200);

  const accepted = [...before, ...during, ...duringNew];
  await eventually(async () => (await outcomeLedger(db, accepted)).applied === accepted.length, 60_000, 500);
  await eventually(() => eventsIdle(queue), 30_000);
  expect(await outcomeLedger(db, accepted)).toEqual({ applied: accepted.length, missing: [], appliedTwice: [] });
  expect(await queue.count('failed')).toBe(0);
  for (const p of [api, ...workers]) expect(p.child.exitCode ?? p.child.signalCode).toBeNull();
  // Two lines per worker for the outage, none per job.
  for (const worker of workers) {
    const lines = worker.output();
    expect(lines.split('postgres unavailable').length - 1).toBe(1);
    expect(lines.split('postgres available again').length - 1).toBe(1);
    expect(lines).not.toContain('job failed');
    expect(lines).not.toContain('Missing lock');
  }
  expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
}, 240_000);
