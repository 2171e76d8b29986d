import { SIGN_IN_FAILURE_LIMIT, SIGN_IN_WINDOW_MS, SignInThrottle } from '../../dashboard/auth/sign-in-throttle';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

/** The throttle on real Redis with a clock of the test's own. */
function throttleAt(start: number) {
  let now = start;
  const throttle = new SignInThrottle(env.redis, env.keys, TEST_SECRET, () => now);
  return { throttle, advance: (ms: number) => (now += ms) };
}

describe('sign-in throttle', () => {
  it('allows 5 failures per email in 15 minutes, then waits until the oldest leaves the window', async () => {
    const { throttle, advance } = throttleAt(1_000_000);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMIT; i++) {
      expect(await throttle.retryAfterSeconds('a@x.test', `203.0.113.${i}`)).toBe(0);
      await throttle.recordFailure('a@x.test', `203.0.113.${i}`);
      advance(60_000);
    }
    // Five failures at minutes 0–4; now is minute 5: the first leaves the window at minute 15.
    expect(await throttle.retryAfterSeconds('a@x.test', '203.0.113.99')).toBe(10 * 60);
    advance(10 * 60_000 - 1);
    expect(await throttle.retryAfterSeconds('a@x.test', '203.0.113.99')).toBe(1);
    advance(1);
    expect(await throttle.retryAfterSeconds('a@x.test', '203.0.113.99')).toBe(0);
    expect(await throttle.retryAfterSeconds('other@x.test', '203.0.113.98')).toBe(0);
  });

  it('counts a client address across emails, and forgets an email (not the client) at a successful sign-in', async () => {
    const { throttle } = throttleAt(5_000_000);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMIT; i++) await throttle.recordFailure(`user${i}@x.test`, '198.51.100.9');
    expect(await throttle.retryAfterSeconds('fresh@x.test', '198.51.100.9')).toBe(SIGN_IN_WINDOW_MS / 1000);
    expect(await throttle.retryAfterSeconds('fresh@x.test', '198.51.100.10')).toBe(0);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMIT; i++) await throttle.recordFailure('b@x.test', `192.0.2.${i}`);
    expect(await throttle.retryAfterSeconds('b@x.test', '192.0.2.200')).toBeGreaterThan(0);
    await throttle.clearEmail('b@x.test');
    expect(await throttle.retryAfterSeconds('b@x.test', '192.0.2.200')).toBe(0);
  });

  it('keeps neither the email nor the address in Redis, only keyed hashes', async () => {
    const { throttle } = throttleAt(9_000_000);
    await throttle.recordFailure('secret-person@x.test', '203.0.113.77');
    const keys = await env.redis.keys(`${env.prefix}:*`);
    expect(keys.join(' ')).not.toMatch(/secret-person|203\.0\.113\.77/);
  });
});
