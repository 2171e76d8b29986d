import { KeyService } from '../../shared/keys/key.service';
import { spawnApi, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/** The per-second limit is exact across API processes sharing Redis. */
let env: TestEnv;
let apis: Array<Spawned & { url: string }>;

beforeAll(async () => {
  env = await createTestEnv();
  apis = [await spawnApi(env.processEnv()), await spawnApi(env.processEnv())];
});
afterAll(async () => {
  await Promise.all(apis.map((api) => stop(api, 'SIGKILL')));
  await env.close();
});

it('never lets more than the limit through in any one-second window with two API processes hammering one key', async () => {
  const limit = 25;
  const { key } = await new KeyService(env.db, TEST_SECRET).create({ account: 'two-apis', environment: 'live', rateLimitRps: limit });
  const deadline = Date.now() + 2500;
  const allowedPerWindow = new Map<string, number>();
  let refused = 0;
  let total = 0;
  // A connection refused or reset while connecting never reached the API (nothing was counted),
  // so it is retried: on a loaded machine the listen queue can overflow under this hammering.
  // Any other failure fails the test, saying whether an API process died and what it printed.
  const request = async (url: string): Promise<Response> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetch(`${url}/v1/profile/nobody`, { headers: { Authorization: `Bearer ${key}` } });
      } catch (error) {
        const cause = (error as { cause?: { syscall?: string } }).cause;
        if (cause?.syscall === 'connect' && attempt < 5) continue;
        const state = apis.map(
          (api) => `exit=${api.child.exitCode ?? api.child.signalCode ?? 'running'} output=${api.output().slice(-2000)}`,
        );
        throw new Error(`request to ${url} failed: ${String(cause ?? error)}; ${state.join(' | ')}`);
      }
    }
  };
  const hammer = async (url: string) => {
    while (Date.now() < deadline && total < 5000) {
      total++;
      const res = await request(url);
      await res.arrayBuffer();
      if (res.status === 429) refused++;
      else {
        expect(res.status).toBe(404);
        const window = res.headers.get('x-ratelimit-reset')!;
        allowedPerWindow.set(window, (allowedPerWindow.get(window) ?? 0) + 1);
      }
    }
  };
  await Promise.all(apis.flatMap((api) => Array.from({ length: 8 }, () => hammer(api.url))));
  expect(refused).toBeGreaterThan(0);
  expect(allowedPerWindow.size).toBeGreaterThanOrEqual(2);
  for (const allowed of allowedPerWindow.values()) expect(allowed).toBeLessThanOrEqual(limit);
  // Every full window in the middle of the run was used up to the limit exactly.
  const counts = [...allowedPerWindow.entries()].sort(([a], [b]) => Number(a) - Number(b)).map(([, n]) => n);
  expect(counts.slice(1, -1).every((n) => n === limit)).toBe(true);
}, 30_000);
