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

it.each([
  ['a limit checked alone (profile GET)', 'profile.get', (key: string) => http().get('/v1/profile/nobody').set(bearer(key))],
  [
    'a limit checked with the profile read (context)',
    'context',
    (key: string) => http().post('/v1/context').set(bearer(key)).send({ userId: 'late-user', task: 'Plan', complexity: 'low' }),
  ],
])(
  'meters %s that timed out while Redis hung as 5xx once Redis runs it, not 2xx',
  async (_, endpoint, send) => {
    const issued = await new KeyService(env.db, TEST_SECRET).create({ account: `late-${endpoint}`, environment: 'live' });
    const first = await send(issued.key);
    expect([200, 404]).toContain(first.status);
    const firstClass = first.status === 200 ? '2xx' : '4xx';
    redisProxy.hold();
    let late;
    try {
      late = await send(issued.key);
    } finally {
      redisProxy.release();
    }
    expect(late.status).toBe(503);
    expect(late.body.error.code).toBe('SERVICE_UNAVAILABLE');
    // The held script has run now: the day's usage counts the request as 5xx.
    const field = (cls: string) => `${issued.id}|${endpoint}|${cls}`;
    const expected: Record<string, string> = { [field('2xx')]: firstClass === '2xx' ? '1' : '0', [field('5xx')]: '1' };
    if (firstClass === '4xx') expected[field('4xx')] = '1';
    await eventuallyEqual(() => env.usage(day(), issued.id), expected, 5000);
    // And stays so: nothing else arrives later.
    await new Promise((r) => setTimeout(r, 300));
    expect(await env.usage(day(), issued.id)).toEqual(expected);
  },
  20_000,
);
