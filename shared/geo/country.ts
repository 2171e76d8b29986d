import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { Reader, type CountryResponse } from 'maxmind';
import { BoundedMap } from '../cache/bounded-map';

/**
 * The client's country, resolved in process from an offline database: the CC0
 * geo-whois-asn-country database of @ip-location-db, read with maxmind. Never a network call;
 * callers keep the country code only, never the address.
 */
export type CountryCode = string;

/** Addresses remembered per process: a busy client resolves once. */
const MEMO_CAPACITY = 10_000;

/** The database's record: the ISO code alone, in a field of its own (not GeoIP2's shape). */
type CountryRecord = CountryResponse & {
  country_code?: string;
};

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Special-purpose ranges (RFC 6890) have no country; the database maps a few of them anyway. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

export class CountryResolver {
  private readonly memo = new BoundedMap<string, CountryCode | null>(MEMO_CAPACITY);

  constructor(private readonly reader: Reader<CountryRecord>) {}

  /**
   * ISO 3166-1 alpha-2 code of `address` (IPv4, IPv6 or IPv4-mapped IPv6), or null for private,
   * loopback, reserved, unknown or malformed addresses.
   */
  countryOf(address: string | undefined | null): CountryCode | null {
    if (!address) return null;
    return this.memo.getOrSet(address, () => this.lookup(address));
  }

  private lookup(address: string): CountryCode | null {
    const plain = IPV4_MAPPED.exec(address)?.[1] ?? address;
    const family = isIP(plain);
    if (family === 0 || NOT_PUBLIC.check(plain, family === 4 ? 'ipv4' : 'ipv6')) return null;
    const code = this.reader.get(plain)?.country_code;
    return code && /^[A-Z]{2}$/.test(code) ? code : null;
  }
}

let shared: CountryResolver | undefined;

/** The process's resolver, opened on first use (the database is ~8 MB, read once). */
export function countryResolver(): CountryResolver {
  if (!shared) {
    const file = require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
    shared = new CountryResolver(new Reader<CountryRecord>(readFileSync(file)));
  }
  return shared;
}
