import request from 'supertest';
import { createApp } from '../../api/app';
import { buildApiDependencies } from '../../api/dependencies';
import { loadApiConfig } from '../../shared/config/config';
import { KeyService } from '../../shared/credentials/key.service';
import { createLogger } from '../../shared/logger/logger';
import { bearer, eventuallyEqual } from '../support/harness';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * A live request whose limiter call times out while Redis hangs is answered 503; the call was
 * sent, so Redis runs it once it answers again, admitting the request and metering it 2xx after
 * its client was told 503. It must end up metered as what it got: 5xx (counted, not billed).
 */
let env: TestEnv;
let redisProxy: RedisProxy;
let deps: ReturnType<typeof buildApiDependencies>;
let http: () => ReturnType<typeof request>;

beforeAll(async () => {
  env = await createTestEnv();
  redisProxy = await startRedisProxy(env);
  deps = buildApiDependencies(loadApiConfig(env.processEnv({ ...redisProxy.env })), createLogger('silent', 'test'));
  const server = createApp(deps).createServer();
  http = () => request(server);
  // A cluster client learns the slot map first.
  await eventuallyEqual(async () => (await deps.readiness()).checks.redis, 'ok', 10_000);
});
afterAll(async () => {
  await deps.close();
  await redisProxy.close();
  await env.close();
});

const day = () => new Date().toISOString().slice(0, 10);

const field = (keyId: string, endpoint: string, cls: string) => `${keyId}|${endpoint}|${cls}`;

it.each([
  ['a limit checked alone (profile GET)', 'profile.get', (key: string) => http().get('/v1/profile/nobody').set(bearer(key))],
  [
    'a limit checked with the profile read (context)',
    'context',
    (key: string) => http().post('/v1/context').set(bearer(key)).send({ userId: 'late-user', task: 'Plan', complexity: 'low' }),
  ],
])(
  'meters %s that timed out while Redis hung as 5xx once Redis runs it, admitted or refused',
  async (_, endpoint, send) => {
    // One request a second: of the three held, Redis admits the first and refuses the others.
    const issued = await new KeyService(env.db, TEST_SECRET).create({ account: `late-${endpoint}`, environment: 'live', rateLimitRps: 1 });
    const first = await send(issued.key);
    expect([200, 404]).toContain(first.status);
    const firstClass = first.status === 200 ? '2xx' : '4xx';
    // The first request's slot is free again before the held ones run.
    await new Promise((r) => setTimeout(r, 1000));
    redisProxy.hold();
    let held;
    try {
      held = await Promise.all([send(issued.key), send(issued.key), send(issued.key)]);
    } finally {
      redisProxy.release();
    }
    expect(held.map((res) => [res.status, res.body.error.code])).toEqual(Array(3).fill([503, 'SERVICE_UNAVAILABLE']));
    // The held scripts have run now (one admitted, two refused): the day's usage counts the three
    // requests as what they got, 5xx.
    const expected: Record<string, string> = {
      [field(issued.id, endpoint, '2xx')]: firstClass === '2xx' ? '1' : '0',
      [field(issued.id, endpoint, '429')]: '0',
      [field(issued.id, endpoint, '5xx')]: '3',
    };
    if (firstClass === '4xx') expected[field(issued.id, endpoint, '4xx')] = '1';
    await eventuallyEqual(() => env.usage(day(), issued.id), expected, 5000);
    // And stays so: nothing else arrives later.
    await new Promise((r) => setTimeout(r, 300));
    expect(await env.usage(day(), issued.id)).toEqual(expected);
  },
  20_000,
);
