import { redisKeys } from '../../shared/redis/key-names';
import { tenantKey } from '../../shared/domain/environment';

/**
 * A tenant's Redis keys are spelled `<accountId>:<environment>:…` by one helper; the spelling
 * must not change under running processes (an API and a worker of another build share them).
 */
describe('tenant keys', () => {
  const tenant = { accountId: 'acct_0123456789abcdef', environment: 'live' as const };
  const keys = redisKeys('cos');

  it('spells a tenant, then its further parts, separated by colons', () => {
    expect(tenantKey(tenant)).toBe('acct_0123456789abcdef:live');
    expect(tenantKey(tenant, 'user-hash')).toBe('acct_0123456789abcdef:live:user-hash');
  });

  it("builds the profile, population and pending-outcome keys and the profiles' scan pattern from it", () => {
    expect(keys.profile(tenant, 'user:1')).toBe(`cos:v2:profile:acct_0123456789abcdef:live:${Buffer.from('user:1').toString('base64url')}`);
    expect(keys.population(tenant)).toBe('cos:v2:population:acct_0123456789abcdef:live');
    expect(keys.pendingOutcomes(tenant, 'h')).toBe('cos:v2:pending:acct_0123456789abcdef:live:h');
    expect(keys.profilePattern('*', 'test')).toBe('cos:v2:profile:*:test:*');
  });
});

describe('traffic keys', () => {
  const keys = redisKeys('cos');
  const slotTag = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];

  it('share one hash tag, so the recorder pipeline and the flush script stay in one cluster slot', () => {
    const all = [
      keys.traffic('2026-06-10T12:30'),
      keys.trafficMinutes,
      keys.trafficSnapshot('2026-06-10T12:30:abc'),
      keys.trafficSnapshots,
    ];
    expect(all.map(slotTag)).toEqual(['traffic', 'traffic', 'traffic', 'traffic']);
  });
});
