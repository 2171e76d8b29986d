import { AddressGuard, AddressRefusedError, type ResolvedAddress, type Resolver } from '../../shared/webhooks/address-guard';

/** The SSRF guard, on an injected resolver: no name is looked up and no socket opened. */
const resolving =
  (answers: Record<string, ResolvedAddress[]>, calls: string[] = []): Resolver =>
  async (hostname) => {
    calls.push(hostname);
    const found = answers[hostname];
    if (!found) throw new Error(`ENOTFOUND ${hostname}`);
    return found;
  };
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

const REFUSED = [
  v4('0.0.0.0'),
  v4('0.1.2.3'),
  v4('10.0.0.1'),
  v4('10.255.255.255'),
  v4('100.64.0.1'),
  v4('100.127.255.254'),
  v4('127.0.0.1'),
  v4('127.8.9.10'),
  v4('169.254.169.254'),
  v4('172.16.0.1'),
  v4('172.31.255.255'),
  v4('192.168.1.1'),
  v6('::1'),
  v6('::'),
  v6('fc00::1'),
  v6('fd12:3456::1'),
  v6('fd00:ec2::254'),
  v6('fe80::1'),
  v6('febf::1'),
  v6('::ffff:10.0.0.1'),
  v6('::ffff:127.0.0.1'),
  v6('::ffff:a9fe:a9fe'),
  v6('0:0:0:0:0:ffff:c0a8:0101'),
];
const PUBLIC = [
  v4('93.184.216.34'),
  v4('100.63.255.255'),
  v4('100.128.0.1'),
  v4('172.15.0.1'),
  v4('172.32.0.1'),
  v4('192.169.0.1'),
  v6('2606:4700::1111'),
  v6('::ffff:8.8.8.8'),
];

describe('AddressGuard', () => {
  it.each(REFUSED)('refuses a host resolving to $address', async (address) => {
    const guard = new AddressGuard([], resolving({ 'hooks.example.com': [address] }));
    await expect(guard.check(new URL('https://hooks.example.com/in'))).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it.each(PUBLIC)('lets a host resolving to $address through, to that address', async (address) => {
    const guard = new AddressGuard([], resolving({ 'hooks.example.com': [address] }));
    await expect(guard.check(new URL('https://hooks.example.com/in'))).resolves.toEqual(address);
  });

  it('refuses a host when any one of its addresses is refused (the connection could go to it)', async () => {
    const guard = new AddressGuard([], resolving({ 'mixed.example.com': [v4('93.184.216.34'), v4('10.0.0.7')] }));
    await expect(guard.check(new URL('https://mixed.example.com/'))).rejects.toThrow(/10\.0\.0\.7/);
  });

  it('checks address literals without resolving them, IPv6 in brackets and IPv4 in its other spellings too', async () => {
    const calls: string[] = [];
    const guard = new AddressGuard([], resolving({}, calls));
    for (const url of [
      'http://10.1.2.3/',
      'http://[::1]:8080/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://[fe80::1]/',
    ]) {
      await expect(guard.check(new URL(url))).rejects.toBeInstanceOf(AddressRefusedError);
    }
    expect(calls).toEqual([]);
  });

  it('resolves once per check: the address returned is the one checked, whatever the resolver says next', async () => {
    const calls: string[] = [];
    let answer = v4('93.184.216.34');
    const guard = new AddressGuard([], async (hostname) => {
      calls.push(hostname);
      const now = answer;
      answer = v4('127.0.0.1'); // a rebinding resolver: the next answer points inside
      return [now];
    });
    await expect(guard.check(new URL('https://rebind.example.com/'))).resolves.toEqual(v4('93.184.216.34'));
    expect(calls).toEqual(['rebind.example.com']);
  });

  it('lets an operator allow addresses and ranges (WEBHOOK_ALLOWED_ADDRESSES), and only those', async () => {
    const guard = new AddressGuard(['127.0.0.1/32', '10.1.0.0/16', 'fd00::5'], resolving({}));
    await expect(guard.check(new URL('http://127.0.0.1:9000/'))).resolves.toEqual(v4('127.0.0.1'));
    await expect(guard.check(new URL('http://10.1.200.3/'))).resolves.toEqual(v4('10.1.200.3'));
    await expect(guard.check(new URL('http://[fd00::5]/'))).resolves.toEqual(v6('fd00::5'));
    await expect(guard.check(new URL('http://127.0.0.2/'))).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(guard.check(new URL('http://10.2.0.1/'))).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it('refuses a host that does not resolve, saying so', async () => {
    const guard = new AddressGuard([], resolving({}));
    await expect(guard.check(new URL('https://nowhere.example.com/'))).rejects.toThrow(/could not resolve nowhere\.example\.com/);
  });
});
