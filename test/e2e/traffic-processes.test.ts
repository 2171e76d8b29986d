import { KeyService } from '../../shared/credentials/key.service';
import { flushTraffic } from '../../shared/traffic/traffic-flush';
import { trafficSeries } from '../../shared/traffic/traffic-queries';
import { eventually } from '../support/harness';
import { spawnApi, statusOnNewConnection, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/** With API_PROCESSES=2 each process records the traffic it serves; together they count every request. */
let env: TestEnv;
let api: Spawned & { url: string };

beforeAll(async () => {
  env = await createTestEnv();
  api = await spawnApi({ ...env.processEnv(), API_PROCESSES: '2' });
});
afterAll(async () => {
  await stop(api, 'SIGKILL');
  await env.close();
});

it('counts every request served by either process', async () => {
  const issued = await new KeyService(env.db, TEST_SECRET).create({ account: 'traffic-cluster', environment: 'test' });
  const { account_id: accountId } = await env.db
    .selectFrom('api_keys')
    .select('account_id')
    .where('id', '=', issued.id)
    .executeTakeFirstOrThrow();
  const statuses = new Set<number>();
  for (let i = 0; i < 40; i++)
    statuses.add(await statusOnNewConnection(`${api.url}/v1/profile/nobody`, { Authorization: `Bearer ${issued.key}` }));
  // Any other answer fails with what the processes logged, so a miss explains itself.
  if (statuses.size !== 1 || !statuses.has(404)) throw new Error(`statuses ${[...statuses].join(', ')}; api output:\n${api.output()}`);
  expect([...statuses]).toEqual([404]);
  const scope = { accountId, environment: 'test' as const, keyId: issued.id };
  await eventually(async () => {
    await flushTraffic(env);
    const points = (await trafficSeries(env.db, scope, '1h', Date.now())).points;
    return points.reduce((sum, point) => sum + point.requests, 0) === 40;
  });
});
