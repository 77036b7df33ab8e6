import { isIP } from 'node:net';

/**
 * IP addresses as 128-bit numbers: an IPv4 address is held in its IPv4-mapped form
 * (::ffff:a.b.c.d), so one CIDR table and one comparison serve both families.
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'reserved'
  | 'metadata';

export interface Cidr {
  readonly source: string;
  readonly base: bigint;
  /** Prefix length over the 128-bit form (an IPv4 /8 is /104 here). */
  readonly prefix: number;
}

const MAPPED_PREFIX = 0xffffn << 32n;
const FULL = (1n << 128n) - 1n;

/** The 128-bit number of an address literal (IPv4 dotted quad or IPv6), or undefined if it is not one. */
export function parseAddress(text: string): bigint | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const family = isIP(bare);
  if (family === 4) return MAPPED_PREFIX | parseIpv4(bare);
  if (family === 6) return parseIpv6(bare);
  return undefined;
}

function parseIpv4(text: string): bigint {
  return text.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

function parseIpv6(text: string): bigint {
  // A zone (fe80::1%eth0) names an interface, not part of the address.
  let rest = text.split('%')[0]!.toLowerCase();
  const lastColon = rest.lastIndexOf(':');
  const last = rest.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIpv4(last);
    rest = `${rest.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const words = (part: string): bigint[] => (part === '' ? [] : part.split(':').map((word) => BigInt(`0x${word}`)));
  const gap = rest.indexOf('::');
  const head = words(gap === -1 ? rest : rest.slice(0, gap));
  const tail = gap === -1 ? [] : words(rest.slice(gap + 2));
  const all = [...head, ...Array<bigint>(8 - head.length - tail.length).fill(0n), ...tail];
  return all.reduce((value, word) => (value << 16n) | word, 0n);
}

/** The text form of an address number: dotted quad for IPv4 (mapped) addresses, compressed IPv6 otherwise. */
export function formatAddress(address: bigint): string {
  if (address >> 32n === 0xffffn) return [24n, 16n, 8n, 0n].map((shift) => String((address >> shift) & 0xffn)).join('.');
  const words = Array.from({ length: 8 }, (_, i) => ((address >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return new URL(`http://[${words.join(':')}]/`).hostname.slice(1, -1);
}

/** A CIDR such as `10.0.0.0/8` or `fd00::/8`; a bare address is a single-address CIDR. */
export function parseCidr(source: string): Cidr {
  const [addressText, prefixText] = source.split('/');
  const address = parseAddress(addressText ?? '');
  if (address === undefined) throw new Error(`"${source}" is not a CIDR (an IPv4 or IPv6 address, optionally followed by /prefix)`);
  const isV4 = isIP(addressText ?? '') === 4;
  const max = isV4 ? 32 : 128;
  const given = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(max)) || given > max) throw new Error(`"${source}" has a prefix outside 0–${max}`);
  const prefix = isV4 ? given + 96 : given;
  return { source, base: address & mask(prefix), prefix };
}

function mask(prefix: number): bigint {
  return prefix === 0 ? 0n : (FULL << BigInt(128 - prefix)) & FULL;
}

export function cidrContains(cidr: Cidr, address: bigint): boolean {
  return (address & mask(cidr.prefix)) === cidr.base;
}

/**
 * The IPv4 address an IPv6 address carries and routes to, for the forms a host or gateway will
 * translate: IPv4-mapped, IPv4-compatible, NAT64 (well-known and local-use prefixes) and 6to4.
 */
export function embeddedIpv4(address: bigint): bigint | undefined {
  const low32 = address & 0xffffffffn;
  if (address >> 32n === 0xffffn) return undefined; // already the IPv4 form itself
  if (address >> 32n === 0n && address > 0xffffn) return MAPPED_PREFIX | low32; // ::a.b.c.d (deprecated, still routed by some stacks)
  if (address >> 32n === 0xffff0000n) return MAPPED_PREFIX | low32; // ::ffff:0:a.b.c.d (IPv4-translated)
  if (address >> 32n === 0x0064ff9b0000000000000000n) return MAPPED_PREFIX | low32; // 64:ff9b::/96
  if (address >> 80n === 0x0064ff9b0001n) return MAPPED_PREFIX | low32; // 64:ff9b:1::/48
  if (address >> 112n === 0x2002n) return MAPPED_PREFIX | ((address >> 80n) & 0xffffffffn); // 2002:aabb:ccdd::/48
  return undefined;
}

const TABLE: readonly (readonly [AddressClass, Cidr])[] = (
  [
    ['metadata', '169.254.169.254'], // AWS, GCP, Azure, OpenStack…
    ['metadata', 'fd00:ec2::254'], // AWS over IPv6
    ['metadata', 'fd00:ec2::23'], // AWS EKS Pod Identity over IPv6
    ['metadata', '169.254.170.2'], // AWS ECS task credentials
    ['metadata', '169.254.170.23'], // AWS EKS Pod Identity
    ['metadata', '100.100.100.200'], // Alibaba Cloud, inside CGNAT space an allow_private may open
    ['metadata', '168.63.129.16'], // Azure WireServer: a public address that answers only inside Azure
    ['unspecified', '0.0.0.0/32'],
    ['unspecified', '::/128'],
    ['reserved', '0.0.0.0/8'], // "this network": Linux connects 0.x to the local host
    ['loopback', '127.0.0.0/8'],
    ['loopback', '::1/128'],
    ['reserved', '::/112'], // ::2–::ffff: the rest of the IPv4-compatible block carries no routable address
    ['private', '10.0.0.0/8'],
    ['private', '172.16.0.0/12'],
    ['private', '192.168.0.0/16'],
    ['private', 'fc00::/7'], // unique local
    ['private', 'fec0::/10'], // site-local, deprecated but still routed by some stacks
    ['link_local', '169.254.0.0/16'],
    ['link_local', 'fe80::/10'],
    ['cgnat', '100.64.0.0/10'],
    ['multicast', '224.0.0.0/4'],
    ['multicast', 'ff00::/8'],
    ['reserved', '240.0.0.0/4'], // includes 255.255.255.255
    ['reserved', '192.0.0.0/24'],
    ['reserved', '192.0.2.0/24'],
    ['reserved', '198.18.0.0/15'],
    ['reserved', '198.51.100.0/24'],
    ['reserved', '203.0.113.0/24'],
    ['reserved', '192.88.99.0/24'],
    ['reserved', '100::/64'],
    ['reserved', '2001:db8::/32'],
  ] as const
).map(([kind, source]) => [kind, parseCidr(source)] as const);

/** The class of an address number; an IPv6 form that carries an IPv4 address takes that address's class. */
export function classifyAddress(address: bigint): AddressClass {
  const own = TABLE.find(([, cidr]) => cidrContains(cidr, address))?.[0];
  if (own !== undefined) return own;
  const inner = embeddedIpv4(address);
  return inner === undefined ? 'public' : classifyAddress(inner);
}
