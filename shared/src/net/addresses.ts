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
  | 'translated'
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
 * translate: IPv4-compatible, IPv4-translated, NAT64 (well-known and local-use prefixes), 6to4 and
 * Teredo (the client's address, stored inverted in the low 32 bits).
 */
export function embeddedIpv4(address: bigint): bigint | undefined {
  const low32 = address & 0xffffffffn;
  if (address >> 32n === 0xffffn) return undefined; // already the IPv4 form itself
  if (address >> 32n === 0n && address > 0xffffn) return MAPPED_PREFIX | low32; // ::a.b.c.d (deprecated, still routed by some stacks)
  if (address >> 32n === 0xffff0000n) return MAPPED_PREFIX | low32; // ::ffff:0:a.b.c.d (IPv4-translated)
  if (address >> 32n === 0x0064ff9b0000000000000000n) return MAPPED_PREFIX | low32; // 64:ff9b::/96
  if (address >> 80n === 0x0064ff9b0001n) return MAPPED_PREFIX | low32; // 64:ff9b:1::/48
  if (address >> 112n === 0x2002n) return MAPPED_PREFIX | ((address >> 80n) & 0xffffffffn); // 2002:aabb:ccdd::/48
  if (address >> 96n === 0x20010000n) return MAPPED_PREFIX | (low32 ^ 0xffffffffn); // Teredo 2001::/32
  return undefined;
}

/** One entry of an IANA special-purpose address registry, or a block this guard adds to them. */
export interface SpecialBlock {
  readonly block: string;
  readonly name: string;
  /** The registry's "Globally Reachable" column; `'n/a'` where it says N/A; `undefined` for a block the guard adds. */
  readonly globallyReachable: boolean | 'n/a' | undefined;
  /** The class the guard gives its addresses: `public` only for the registry's `True`. */
  readonly kind: AddressClass;
}

const entry = (block: string, name: string, globallyReachable: boolean | 'n/a' | undefined, kind: AddressClass): SpecialBlock => ({ block, name, globallyReachable, kind });

/**
 * The IANA IPv4 Special-Purpose Address Registry (https://www.iana.org/assignments/iana-ipv4-special-registry/),
 * the version last updated 2020-09-04 (the newest copy found; no entry was added since as far as
 * we know), every record. Every block not marked "Globally Reachable: True" is refused; the
 * records marked True are the exceptions inside refused blocks (192.0.0.9, 192.0.0.10).
 */
export const IPV4_SPECIAL_REGISTRY: readonly SpecialBlock[] = [
  entry('0.0.0.0/8', '"This network"', false, 'reserved'),
  entry('0.0.0.0/32', '"This host on this network"', false, 'unspecified'),
  entry('10.0.0.0/8', 'Private-Use', false, 'private'),
  entry('100.64.0.0/10', 'Shared Address Space', false, 'cgnat'),
  entry('127.0.0.0/8', 'Loopback', false, 'loopback'),
  entry('169.254.0.0/16', 'Link Local', false, 'link_local'),
  entry('172.16.0.0/12', 'Private-Use', false, 'private'),
  entry('192.0.0.0/24', 'IETF Protocol Assignments', false, 'reserved'),
  entry('192.0.0.0/29', 'IPv4 Service Continuity Prefix', false, 'reserved'),
  entry('192.0.0.8/32', 'IPv4 dummy address', false, 'reserved'),
  entry('192.0.0.9/32', 'Port Control Protocol Anycast', true, 'public'),
  entry('192.0.0.10/32', 'Traversal Using Relays around NAT Anycast', true, 'public'),
  entry('192.0.0.170/32', 'NAT64/DNS64 Discovery', false, 'reserved'),
  entry('192.0.0.171/32', 'NAT64/DNS64 Discovery', false, 'reserved'),
  entry('192.0.2.0/24', 'Documentation (TEST-NET-1)', false, 'reserved'),
  entry('192.31.196.0/24', 'AS112-v4', true, 'public'),
  entry('192.52.193.0/24', 'AMT', true, 'public'),
  entry('192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', 'n/a', 'reserved'),
  entry('192.88.99.2/32', '6a44-relay anycast address', false, 'reserved'),
  entry('192.168.0.0/16', 'Private-Use', false, 'private'),
  entry('192.175.48.0/24', 'Direct Delegation AS112 Service', true, 'public'),
  entry('198.18.0.0/15', 'Benchmarking', false, 'reserved'),
  entry('198.51.100.0/24', 'Documentation (TEST-NET-2)', false, 'reserved'),
  entry('203.0.113.0/24', 'Documentation (TEST-NET-3)', false, 'reserved'),
  entry('240.0.0.0/4', 'Reserved', false, 'reserved'),
  entry('255.255.255.255/32', 'Limited Broadcast', false, 'reserved'),
];

/**
 * The IANA IPv6 Special-Purpose Address Registry (https://www.iana.org/assignments/iana-ipv6-special-registry/),
 * every record as of its 2025 version (the last additions: 3fff::/20 by RFC 9637, 2024-07;
 * 5f00::/16 by RFC 9602, 2024-10; 2001:1::3/128 by RFC 9665; 100:0:0:1::/64 by RFC 9780, 2025-04),
 * cross-checked against the 2013-05-01 copy at iana.org and the 2024 listing quoted in
 * python/cpython#151049. Except:
 * - `::ffff:0:0/96` (IPv4-mapped) is not listed: here it IS the IPv4 space (an IPv4 address is held
 *   in that form, and a dual-stack socket sends a mapped address as IPv4), so its addresses take
 *   the IPv4 registry's classes.
 * - The IPv4-embedding blocks are refused whole, including 64:ff9b::/96, which the registry marks
 *   globally reachable: which IPv4 host a NAT64 translator, a 6to4 relay or a Teredo relay reaches
 *   is decided by a box outside this guard's view (64:ff9b:1::/48 is a local translator's choice
 *   by definition), so an embedded public address proves nothing. A policy on an IPv6-only network
 *   with DNS64 opens them with allow_private: ["64:ff9b::/96"]; an embedded cloud-metadata address
 *   stays refused even then.
 */
export const IPV6_SPECIAL_REGISTRY: readonly SpecialBlock[] = [
  entry('::1/128', 'Loopback Address', false, 'loopback'),
  entry('::/128', 'Unspecified Address', false, 'unspecified'),
  entry('64:ff9b::/96', 'IPv4-IPv6 Translat.', true, 'translated'),
  entry('64:ff9b:1::/48', 'IPv4-IPv6 Translat.', false, 'translated'),
  entry('100::/64', 'Discard-Only Address Block', false, 'reserved'),
  entry('100:0:0:1::/64', 'Dummy IPv6 Prefix', false, 'reserved'),
  entry('2001::/23', 'IETF Protocol Assignments', false, 'reserved'),
  entry('2001::/32', 'TEREDO', 'n/a', 'translated'),
  entry('2001:1::1/128', 'Port Control Protocol Anycast', true, 'public'),
  entry('2001:1::2/128', 'Traversal Using Relays around NAT Anycast', true, 'public'),
  entry('2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast', true, 'public'),
  entry('2001:2::/48', 'Benchmarking', false, 'reserved'),
  entry('2001:3::/32', 'AMT', true, 'public'),
  entry('2001:4:112::/48', 'AS112-v6', true, 'public'),
  entry('2001:10::/28', 'Deprecated (previously ORCHID)', false, 'reserved'),
  entry('2001:20::/28', 'ORCHIDv2', true, 'public'),
  entry('2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', true, 'public'),
  entry('2001:db8::/32', 'Documentation', false, 'reserved'),
  entry('2002::/16', '6to4', 'n/a', 'translated'),
  entry('2620:4f:8000::/48', 'Direct Delegation AS112 Service', true, 'public'),
  entry('3fff::/20', 'Documentation', false, 'reserved'),
  entry('5f00::/16', 'Segment Routing (SRv6) SIDs', false, 'reserved'),
  entry('fc00::/7', 'Unique-Local', false, 'private'),
  entry('fe80::/10', 'Link-Local Unicast', false, 'link_local'),
];

/** Blocks outside the special-purpose registries that are refused all the same. */
export const EXTRA_BLOCKS: readonly SpecialBlock[] = [
  entry('169.254.169.254/32', 'cloud metadata: AWS, GCP, Azure, OpenStack…', undefined, 'metadata'),
  entry('fd00:ec2::254/128', 'cloud metadata: AWS over IPv6', undefined, 'metadata'),
  entry('fd00:ec2::23/128', 'cloud metadata: AWS EKS Pod Identity over IPv6', undefined, 'metadata'),
  entry('169.254.170.2/32', 'cloud metadata: AWS ECS task credentials', undefined, 'metadata'),
  entry('169.254.170.23/32', 'cloud metadata: AWS EKS Pod Identity', undefined, 'metadata'),
  entry('100.100.100.200/32', 'cloud metadata: Alibaba Cloud, inside CGNAT space an allow_private may open', undefined, 'metadata'),
  entry('168.63.129.16/32', 'cloud metadata: Azure WireServer, a public address that answers only inside Azure', undefined, 'metadata'),
  entry('224.0.0.0/4', 'IPv4 multicast (IANA IPv4 Multicast Address Space Registry)', undefined, 'multicast'),
  entry('ff00::/8', 'IPv6 multicast (IANA IPv6 Address Space)', undefined, 'multicast'),
  entry('fec0::/10', 'site-local, deprecated (RFC 3879) but still routed by some stacks', undefined, 'private'),
  entry('::/96', 'IPv4-compatible, deprecated (RFC 4291): ::2–::ffff carry no address, the rest an IPv4 one', undefined, 'translated'),
  entry('::ffff:0:0:0/96', 'IPv4-translated (RFC 2765)', undefined, 'translated'),
];

/** IANA IPv6 Address Space: only 2000::/3 is Global Unicast; outside it, what no block above names is reserved. */
const GLOBAL_UNICAST = parseCidr('2000::/3');

const TABLE: readonly (readonly [AddressClass, Cidr])[] = [...IPV4_SPECIAL_REGISTRY, ...IPV6_SPECIAL_REGISTRY, ...EXTRA_BLOCKS]
  .map(({ kind, block }) => [kind, parseCidr(block)] as const)
  // Longest prefix first: the first match is the most specific block (an exception inside a refused block, metadata inside link-local).
  .sort((a, b) => b[1].prefix - a[1].prefix);

/**
 * The class of an address number, by the most specific block that holds it. An IPv4-embedding
 * form (NAT64, 6to4, Teredo, IPv4-compatible) takes the class of the IPv4 address it carries when
 * that one is not public, and is `translated` (refused whole) otherwise.
 */
export function classifyAddress(address: bigint): AddressClass {
  const own = TABLE.find(([, cidr]) => cidrContains(cidr, address))?.[0];
  if (own === 'translated') {
    const inner = embeddedIpv4(address);
    const innerKind = inner === undefined ? 'public' : classifyAddress(inner);
    return innerKind === 'public' ? 'translated' : innerKind;
  }
  if (own !== undefined) return own;
  if (address >> 32n === 0xffffn) return 'public'; // an IPv4 address in no registry block
  return cidrContains(GLOBAL_UNICAST, address) ? 'public' : 'reserved';
}
