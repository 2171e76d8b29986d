import { KeyService } from '../../shared/credentials/key.service';
import { eventually } from '../support/harness';
import { client, spawnApi, statusOnNewConnection, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { alive, childrenOf } from '../../scripts/process-tree';

/** API_PROCESSES=N: N API processes share the port; a dead one is replaced; SIGTERM stops them all. */
let env: TestEnv;
let api: Spawned & { url: string };

beforeAll(async () => {
  env = await createTestEnv();
  api = await spawnApi({ ...env.processEnv(), API_PROCESSES: '2', LOG_LEVEL: 'info' });
});
afterAll(async () => {
  await stop(api, 'SIGKILL');
  await env.close();
});

it('runs two API processes on one port, replaces one that dies, and stops them all on SIGTERM', async () => {
  const { key } = await new KeyService(env.db, TEST_SECRET).create({ account: 'cluster', environment: 'test' });
  const http = client(api.url, key);
  const primary = api.child.pid!;
  const first = await eventually(async () => {
    const children = childrenOf(primary);
    return children.length === 2 ? children : null;
  });
  for (let i = 0; i < 20; i++) expect((await http.context(`cluster-${i}`)).status).toBe(200);

  process.kill(first[0]!, 'SIGKILL');
  const replaced = await eventually(async () => {
    const children = childrenOf(primary);
    return children.length === 2 && !children.includes(first[0]!) ? children : null;
  });
  expect(replaced).toContain(first[1]);
  await eventually(async () => (await http.context('cluster-after')).status === 200);
  expect(api.output()).toContain('api process died; starting another');

  // A replacement takes connections only once its Redis and Postgres connections are ready: new
  // connections arriving throughout its start are all answered. Profile reads of unknown users
  // read Redis and Postgres and answer 404, which every process logs with its pid.
  const listening = () => api.output().split('api listening').length - 1;
  // A replacement may wait up to 10 s for its connections before it listens, and it starts
  // while the rest of the suite keeps both cores busy: its line gets twice the usual wait.
  const replacementStart = 40_000;
  // Two processes at the start and the replacement above: the victim has a listening peer.
  await eventually(async () => listening() === 3, replacementStart);
  const statuses: number[] = [];
  const [victim, peer] = replaced as [number, number];
  process.kill(victim, 'SIGKILL');
  await eventually(async () => !childrenOf(primary).includes(victim));
  let streaming = true;
  const stream = async (n: number) => {
    for (let i = 0; streaming; i++)
      statuses.push(await statusOnNewConnection(`${api.url}/v1/profile/start-${n}-${i}`, { Authorization: `Bearer ${key}` }));
  };
  const streams = [0, 1, 2, 3].map(stream);
  await eventually(async () => listening() === 4, replacementStart);
  const restarted = childrenOf(primary);
  const replacement = restarted.find((pid) => pid !== peer)!;
  expect(restarted).toHaveLength(2);
  // Until the replacement has answered a share of the connections.
  await eventually(async () => (api.output().match(new RegExp(`"pid":${replacement},[^\n]*"status":404`, 'g')) ?? []).length >= 20);
  streaming = false;
  await Promise.all(streams);
  const others = statuses.filter((status) => status !== 404);
  if (others.length > 0)
    throw new Error(`${others.length} of ${statuses.length} answers not 404 (${others.join(', ')}); api output:\n${api.output()}`);
  expect(statuses.length).toBeGreaterThan(40);

  expect(await stop(api, 'SIGTERM')).toBe(0);
  for (const pid of restarted) expect(alive(pid)).toBe(false);
}, 150_000);
