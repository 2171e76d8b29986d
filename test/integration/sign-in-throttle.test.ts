import { SIGN_IN_FAILURE_LIMIT, SIGN_IN_WINDOW_MS, SignInThrottle, type ReserveResult } from '../../dashboard/auth/sign-in-throttle';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

/** The throttle on real Redis with a clock of the test's own. */
function throttleAt(start: number) {
  let now = start;
  const throttle = new SignInThrottle({ redis: env.redis, keys: env.keys, secret: TEST_SECRET, clock: () => now });
  return { throttle, advance: (ms: number) => (now += ms) };
}

const reserved = (results: ReserveResult[]) => results.filter((r) => 'reserved' in r).length;

describe('sign-in throttle', () => {
  it('allows 5 attempts per email in 15 minutes, then waits until the oldest leaves the window', async () => {
    const { throttle, advance } = throttleAt(1_000_000);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMIT; i++) {
      expect(await throttle.reserve({ email: 'a@x.test', client: `203.0.113.${i}` })).toHaveProperty('reserved');
      advance(60_000);
    }
    // Five failures at minutes 0–4; now is minute 5: the first leaves the window at minute 15.
    expect(await throttle.reserve({ email: 'a@x.test', client: '203.0.113.99' })).toEqual({ retryAfterSeconds: 10 * 60 });
    advance(10 * 60_000 - 1000);
    expect(await throttle.reserve({ email: 'a@x.test', client: '203.0.113.99' })).toEqual({ retryAfterSeconds: 1 });
    advance(1000);
    expect(await throttle.reserve({ email: 'a@x.test', client: '203.0.113.99' })).toHaveProperty('reserved');
    expect(await throttle.reserve({ email: 'other@x.test', client: '203.0.113.98' })).toHaveProperty('reserved');
  });

  it('reserves at most 5 of 20 simultaneous attempts for one email, and of 20 from one address', async () => {
    const { throttle } = throttleAt(2_000_000);
    const oneEmail = await Promise.all(
      Array.from({ length: 20 }, (_, i) => throttle.reserve({ email: 'burst@x.test', client: `192.0.2.${i}` })),
    );
    expect(reserved(oneEmail)).toBe(SIGN_IN_FAILURE_LIMIT);
    const oneClient = await Promise.all(
      Array.from({ length: 20 }, (_, i) => throttle.reserve({ email: `u${i}@x.test`, client: '192.0.2.250' })),
    );
    expect(reserved(oneClient)).toBe(SIGN_IN_FAILURE_LIMIT);
    // A refused attempt reserved nothing: the emails of the refused ones are still free.
    const refusedEmails = oneClient.flatMap((r, i) => ('retryAfterSeconds' in r ? [`u${i}@x.test`] : []));
    expect(refusedEmails).toHaveLength(15);
    expect(await throttle.reserve({ email: refusedEmails[0]!, client: '192.0.2.251' })).toHaveProperty('reserved');
  });

  it('gives a released attempt back, and keeps a device apart from its email and address', async () => {
    const { throttle } = throttleAt(3_000_000);
    const attempts = [];
    for (let i = 0; i < SIGN_IN_FAILURE_LIMIT; i++) attempts.push(await throttle.reserve({ email: 'c@x.test', client: '198.51.100.9' }));
    expect(await throttle.reserve({ email: 'c@x.test', client: '198.51.100.10' })).toHaveProperty('retryAfterSeconds');
    // The email and the address are full; a device that signed in as that email before is not.
    expect(await throttle.reserve({ device: 'device-1' })).toHaveProperty('reserved');
    const first = attempts[0]!;
    if (!('reserved' in first)) throw new Error('the first attempt was not reserved');
    await throttle.release(first.reserved);
    expect(await throttle.reserve({ email: 'c@x.test', client: '198.51.100.10' })).toHaveProperty('reserved');
    // A device has its own 5.
    for (let i = 1; i < SIGN_IN_FAILURE_LIMIT; i++) expect(await throttle.reserve({ device: 'device-1' })).toHaveProperty('reserved');
    expect(await throttle.reserve({ device: 'device-1' })).toHaveProperty('retryAfterSeconds');
    expect(await throttle.reserve({ device: 'device-2' })).toHaveProperty('reserved');
  });

  it('keeps neither the email, the address nor the device in Redis, only keyed hashes that expire with the window', async () => {
    const { throttle } = throttleAt(9_000_000);
    const before = new Set(await env.keysMatching(`${env.prefix}:*signin*`));
    await throttle.reserve({ email: 'secret-person@x.test', client: '203.0.113.77' });
    await throttle.reserve({ device: 'secret-device-nonce' });
    const keys = (await env.keysMatching(`${env.prefix}:*signin*`)).filter((key) => !before.has(key));
    expect(keys).toHaveLength(3);
    expect(keys.join(' ')).not.toMatch(/secret-person|203\.0\.113\.77|secret-device-nonce/);
    for (const key of keys) {
      const ttl = await env.redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(SIGN_IN_WINDOW_MS);
    }
  });
});
