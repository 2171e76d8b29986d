import { ProfileCache } from '../../shared/profile/profile-cache.repository';
import { newProfile } from '../../shared/profile/profile';
import { createEngine, emptyPrior } from '../../shared/domain/engine/engine';
import { createTestEnv, type TestEnv } from '../support/test-env';

let env: TestEnv;
let cache: ProfileCache;
const tenant = { accountId: 'acct_cache', environment: 'test' as const };
beforeAll(async () => {
  env = await createTestEnv();
  cache = new ProfileCache(env.redis, env.keys);
});
afterAll(() => env.close());

const profileAt = (userId: string, version: number, generation = 'g1') => ({
  ...newProfile({ userId, generation }, createEngine().initialState(emptyPrior()), new Date()),
  version,
  interactionCount: version,
});

describe('profile cache versioning', () => {
  it('never moves a cached profile to an older version', async () => {
    expect(await cache.writeIfNewer(tenant, profileAt('u1', 5))).toBe(true);
    expect(await cache.writeIfNewer(tenant, profileAt('u1', 3))).toBe(false);
    expect(await cache.writeIfNewer(tenant, profileAt('u1', 5))).toBe(false);
    expect((await cache.read(tenant, 'u1'))!.version).toBe(5);
    expect(await cache.writeIfNewer(tenant, profileAt('u1', 6))).toBe(true);
    expect((await cache.read(tenant, 'u1'))!.version).toBe(6);
  });

  it('applies a batch of writes keeping the newest of each', async () => {
    await cache.writeManyIfNewer([
      { tenant, profile: profileAt('u2', 2) },
      { tenant, profile: profileAt('u2', 1) },
      { tenant, profile: profileAt('u3', 1) },
    ]);
    expect((await cache.read(tenant, 'u2'))!.version).toBe(2);
    expect((await cache.read(tenant, 'u3'))!.version).toBe(1);
  });

  it('refuses late writes of an erased generation but accepts a new generation', async () => {
    await cache.writeIfNewer(tenant, profileAt('u4', 4, 'old-gen'));
    await cache.erase(tenant, 'u4', ['old-gen']);
    expect(await cache.read(tenant, 'u4')).toBeNull();
    expect(await cache.writeIfNewer(tenant, profileAt('u4', 9, 'old-gen'))).toBe(false);
    expect(await cache.read(tenant, 'u4')).toBeNull();
    expect(await cache.writeIfNewer(tenant, profileAt('u4', 0, 'new-gen'))).toBe(true);
    expect((await cache.read(tenant, 'u4'))!.generation).toBe('new-gen');
  });

  it('puts a new profile only when none is cached, returning the cached one', async () => {
    const first = await cache.putIfAbsent(tenant, profileAt('u5', 0, 'a'));
    const second = await cache.putIfAbsent(tenant, profileAt('u5', 0, 'b'));
    expect(first.generation).toBe('a');
    expect(second.generation).toBe('a');
  });

  it('keeps tenants apart', async () => {
    await cache.writeIfNewer(tenant, profileAt('same', 1));
    expect(await cache.read({ ...tenant, environment: 'live' }, 'same')).toBeNull();
    expect(await cache.read({ ...tenant, accountId: 'acct_other' }, 'same')).toBeNull();
  });
});
