import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startRedisCluster, type LocalRedisCluster } from '../../scripts/redis-cluster';
import { KeyService } from '../../shared/keys/key.service';
import { eventually } from '../support/harness';
import { outcomeLedger } from '../support/ledger';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * A Redis Cluster master killed (SIGKILL) under traffic, its replica promoted: with
 * REDIS_WAIT_REPLICAS=1 every batch a 202 or 200 answered for was on the replica first, so no
 * outcome answered 202 is lost (docs/SCALING.md#redis). Requests that reach the dead master's
 * slots while the replica takes over are answered 503 and not counted as accepted.
 */
let dir: string;
let cluster: LocalRedisCluster;
let env: TestEnv;
let api: Spawned & { url: string };
const workers: Spawned[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cos-failover-'));
  cluster = await startRedisCluster(dir, { durable: false, masters: 3, replicasPerMaster: 1 });
  env = await createTestEnv({ clusterNodes: cluster.nodes });
  api = await spawnApi(env.processEnv({ REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT: '1s' }));
  for (let i = 0; i < 2; i++)
    workers.push(spawnBuilt('worker/main.js', env.processEnv({ WORKER_CONCURRENCY: '64', WORKER_BATCH_SIZE: '50' })));
}, 60_000);
afterAll(async () => {
  await Promise.all([...workers, api].filter(Boolean).map((p) => stop(p)));
  await env?.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The role a node reports, or null when it is down. */
async function role(url: string): Promise<string | null> {
  const node = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
  try {
    await node.connect();
    return /role:(\w+)/.exec(await node.info('replication'))?.[1] ?? null;
  } catch {
    return null;
  } finally {
    node.disconnect();
  }
}

it('loses no outcome answered 202 when a master dies and its replica takes over', async () => {
  const { key } = await new KeyService(env.db, TEST_SECRET).create({ account: 'failover', environment: 'test' });
  const http = client(api.url, key);
  const accepted: string[] = [];
  const refused = new Map<number, number>();
  let acceptedAfterPromotion = 0;
  let promoted = false;
  let running = true;

  // Clients that each ask for a context and report its outcome, over and over.
  const traffic = async (clientNo: number) => {
    for (let round = 0; running; round++) {
      const user = `failover-${clientNo}-${round % 5}`;
      const context = await http.context(user).catch(() => null);
      if (context?.status !== 200) {
        refused.set(context?.status ?? 0, (refused.get(context?.status ?? 0) ?? 0) + 1);
        continue;
      }
      const outcome = await http.outcome({ requestId: context.body.requestId, started: true, satisfaction: 0.5 }).catch(() => null);
      if (outcome?.status === 202) {
        accepted.push(context.body.requestId);
        if (promoted) acceptedAfterPromotion++;
      } else refused.set(outcome?.status ?? 0, (refused.get(outcome?.status ?? 0) ?? 0) + 1);
    }
  };
  const clients = Promise.all(Array.from({ length: 16 }, (_, i) => traffic(i)));

  await eventually(async () => accepted.length >= 100, 30_000);
  const roles = await Promise.all(cluster.servers.map((server) => role(server.url)));
  const victim = cluster.servers[roles.indexOf('master')]!;
  const replicas = cluster.servers.filter((_, i) => roles[i] === 'slave');
  const before = (await Promise.all(replicas.map((server) => role(server.url)))).filter((r) => r === 'master').length;
  const acceptedBeforeKill = accepted.length;
  await victim.stop('kill');
  // A replica reports itself master once it has taken over the dead master's slots.
  await eventually(
    async () => (await Promise.all(replicas.map((server) => role(server.url)))).filter((r) => r === 'master').length > before,
    30_000,
  );
  promoted = true;
  await eventually(async () => acceptedAfterPromotion >= 100, 60_000);
  running = false;
  await clients;

  const ledger = await eventually(async () => {
    const state = await outcomeLedger(env.db, accepted);
    return state.missing.length === 0 ? state : null;
  }, 90_000).catch(() => outcomeLedger(env.db, accepted));
  process.stdout.write(
    `failover: ${accepted.length} outcomes answered 202 (${acceptedBeforeKill} before the kill, ${acceptedAfterPromotion} after the promotion); ` +
      `refused by status ${JSON.stringify(Object.fromEntries(refused))}; lost ${ledger.missing.length}\n`,
  );
  expect(ledger).toEqual({ applied: accepted.length, missing: [], appliedTwice: [] });
  // The kill hit live traffic: requests for the dead master's slots were refused while its
  // replica took over — as unavailable (503), to be retried, and nothing else.
  expect(refused.get(503) ?? 0).toBeGreaterThan(0);
  expect([...refused.keys()].filter((status) => status !== 503)).toEqual([]);
}, 240_000);
