import { describe, expect, it } from 'vitest';
import { classifyAddress, cidrContains, EXTRA_BLOCKS, formatAddress, IPV4_SPECIAL_REGISTRY, IPV6_SPECIAL_REGISTRY, NetworkGuard, parseCidr, type SpecialBlock } from '@bulkhead/core';

/**
 * Every entry of the IANA special-purpose registries (and the blocks the guard adds): an address
 * at the start, in the middle and at the end of each block is classified as the entry says (refused
 * unless the registry marks it globally reachable), and the first address past the block's end is
 * allowed when no other block holds it.
 */
const ALL: readonly SpecialBlock[] = [...IPV4_SPECIAL_REGISTRY, ...IPV6_SPECIAL_REGISTRY, ...EXTRA_BLOCKS];
const MAPPED = 0xffffn << 32n;
const guard = new NetworkGuard();

function range(block: string): { first: bigint; last: bigint; isV4: boolean } {
  const cidr = parseCidr(block);
  const size = 1n << BigInt(128 - cidr.prefix);
  return { first: cidr.base, last: cidr.base + size - 1n, isV4: block.includes('.') };
}

/** The most specific listed block holding an address (the test's own scan, not the classifier's table). */
function holder(address: bigint): SpecialBlock | undefined {
  let best: SpecialBlock | undefined;
  let bestPrefix = -1;
  for (const candidate of ALL) {
    const cidr = parseCidr(candidate.block);
    if (cidrContains(cidr, address) && cidr.prefix > bestPrefix) [best, bestPrefix] = [candidate, cidr.prefix];
  }
  return best;
}

function refused(address: bigint): boolean {
  try {
    guard.checkAddress(formatAddress(address));
    return false;
  } catch {
    return true;
  }
}

describe('the IANA special-purpose registries, entry by entry', () => {
  it('lists the blocks the last attack run connected to', () => {
    const blocks = ALL.map((entry) => entry.block);
    expect(blocks).toEqual(expect.arrayContaining(['2001::/32', '3fff::/20', '5f00::/16', '2001::/23', '2002::/16', '64:ff9b:1::/48', '100::/64']));
    // Every registry record not marked globally reachable is refused.
    for (const entry of [...IPV4_SPECIAL_REGISTRY, ...IPV6_SPECIAL_REGISTRY]) if (entry.globallyReachable !== true) expect(entry.kind, entry.block).not.toBe('public');
  });

  it.each(ALL.map((entry) => [entry.block, entry] as const))('%s: addresses inside take its class', (_block, entry) => {
    const { first, last } = range(entry.block);
    for (const address of [first, first + (last - first) / 2n, last]) {
      const shown = formatAddress(address);
      const owner = holder(address)!;
      const kind = classifyAddress(address);
      if (owner.kind === 'public') {
        expect(kind, shown).toBe('public');
        expect(refused(address), shown).toBe(false);
      } else {
        expect(kind, `${shown} (${owner.block} ${owner.name})`).not.toBe('public');
        expect(refused(address), shown).toBe(true);
      }
    }
  });

  it.each(ALL.map((entry) => [entry.block, entry] as const))('%s: the first address past its end is public unless another block holds it', (_block, entry) => {
    const { last, isV4 } = range(entry.block);
    const next = last + 1n;
    if (isV4 ? next > (MAPPED | 0xffffffffn) : next >= 1n << 128n) return;
    const owner = holder(next);
    const globalUnicast = isV4 || cidrContains(parseCidr('2000::/3'), next);
    const expectedPublic = owner === undefined ? globalUnicast : owner.kind === 'public';
    expect(classifyAddress(next) === 'public', formatAddress(next)).toBe(expectedPublic);
    expect(refused(next), formatAddress(next)).toBe(!expectedPublic);
  });

  it.each([
    '1.0.0.0', '11.0.0.0', '100.128.0.0', '128.0.0.0', '169.255.0.0', '172.32.0.0', '192.0.1.0', '192.0.3.0', '192.31.197.0', '192.52.194.0',
    '192.88.100.0', '192.169.0.0', '192.175.49.0', '198.20.0.0', '198.51.101.0', '203.0.114.0', '2001:200::', '2001:db9::', '2003::', '3fff:1000::',
    '2620:4f:8001::', '2001:1::1', '2001:1::3', '2001:3::1', '2001:4:112::1', '192.0.0.9', '192.0.0.10',
  ])('%s (just past a block, or globally reachable inside one) is public', (text) => {
    expect(() => guard.checkAddress(text)).not.toThrow();
  });

  it.each(['2001::1', '2001:0:ffff::1', '3fff::1', '3fff:fff:ffff::1', '5f00::1', '5f00:ffff::1', '5f01::1', '4000::1', '100:0:0:1::1', '2001:2::1', '2001:10::1', '192.0.0.8', '192.0.0.170', '192.88.99.2', '2001:1::4'])(
    '%s is refused',
    (text) => {
      expect(() => guard.checkAddress(text)).toThrow('is refused');
    },
  );
});
