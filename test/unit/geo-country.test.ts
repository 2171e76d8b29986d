import { countryResolver } from '../../shared/geo/country';

describe('countryResolver', () => {
  const resolver = countryResolver();

  it.each([
    ['8.8.8.8', 'US'],
    ['81.2.69.160', 'GB'],
    ['193.0.6.139', 'NL'],
    ['133.242.0.3', 'JP'],
    ['200.160.2.3', 'BR'],
    ['2a00:1450:4001::1', 'IE'],
  ])('resolves %s to %s', (address, country) => {
    expect(resolver.countryOf(address)).toBe(country);
  });

  it('unwraps IPv4-mapped IPv6 addresses, as Node reports IPv4 clients on dual-stack sockets', () => {
    expect(resolver.countryOf('::ffff:8.8.8.8')).toBe('US');
  });

  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '192.168.1.20',
    '172.20.0.5',
    '100.64.1.1',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    'not-an-address',
    '',
    undefined,
    null,
  ])('has no country for %p', (address) => {
    expect(resolver.countryOf(address)).toBeNull();
  });

  it('is one resolver per process', () => {
    expect(countryResolver()).toBe(resolver);
  });
});
