import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** One resolved address of a host. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has; injected in tests, the system's resolver otherwise. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/**
 * Where a delivery may never go unless an operator allows it (WEBHOOK_ALLOWED_ADDRESSES): this
 * host, private networks, link-local (the cloud metadata services among them), CGNAT and
 * unique-local addresses. IPv4-mapped IPv6 forms of the IPv4 ranges are matched too.
 */
export const REFUSED_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
];

export class AddressRefusedError extends Error {}

function blockList(ranges: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList();
  for (const [address, prefix] of ranges) list.addSubnet(address, prefix, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return list;
}

/** `a.b.c.d/n` or an address alone (a single host). */
const toRange = (cidr: string): readonly [string, number] => {
  const [address, prefix] = cidr.split('/') as [string, string | undefined];
  return [address, prefix === undefined ? (isIP(address) === 6 ? 128 : 32) : Number(prefix)];
};

/**
 * Checks where a delivery would connect before it does: the host is resolved once, refused when
 * ANY of its addresses is in a refused range and not allowed, and the connection then goes to
 * the address checked here (webhook-sender.ts passes it as the socket's lookup), so a DNS
 * answer that changes between the check and the connection cannot re-point it.
 */
export class AddressGuard {
  private readonly refused = blockList(REFUSED_RANGES);
  private readonly allowed: BlockList;

  constructor(
    allowedCidrs: readonly string[],
    private readonly resolver: Resolver = systemResolver,
  ) {
    this.allowed = blockList(allowedCidrs.map(toRange));
  }

  /** The address to connect to for `url`; AddressRefusedError when it must not be reached. */
  async check(url: URL): Promise<ResolvedAddress> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = isIP(host);
    const addresses: ResolvedAddress[] = literal
      ? [{ address: host, family: literal === 6 ? 6 : 4 }]
      : await this.resolver(host).catch((error: unknown) => {
          throw new AddressRefusedError(`could not resolve ${host}: ${error instanceof Error ? error.message : String(error)}`);
        });
    if (addresses.length === 0) throw new AddressRefusedError(`${host} has no address`);
    for (const { address, family } of addresses) {
      if (this.isRefused(address, family)) {
        throw new AddressRefusedError(
          `${host} resolves to ${address}, a private, loopback or link-local address, which deliveries may not reach`,
        );
      }
    }
    return addresses[0]!;
  }

  isRefused(address: string, family: 4 | 6): boolean {
    const type = family === 6 ? 'ipv6' : 'ipv4';
    return this.refused.check(address, type) && !this.allowed.check(address, type);
  }
}
