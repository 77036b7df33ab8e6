import { describe, expect, it } from 'vitest';
import { classifyAddress, formatAddress, NetworkGuard, NetworkRefusal, parseAddress, parseCidr, cidrContains } from '@bulkhead/core';

function classOf(text: string): string {
  const address = parseAddress(text);
  if (address === undefined) throw new Error(`${text} did not parse`);
  return classifyAddress(address);
}

function refusal(guard: NetworkGuard, url: string): string {
  try {
    guard.checkUrl(url);
  } catch (error) {
    expect(error).toBeInstanceOf(NetworkRefusal);
    return (error as NetworkRefusal).message;
  }
  throw new Error(`${url} was allowed`);
}

const LOOPBACK = 'it is a loopback address (allow_private in web_policy.yaml lists CIDRs that may be reached)';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['0.1.2.3', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::23', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['169.254.170.23', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['::2', 'translated'],
    ['::ffff', 'translated'],
    ['2001::1', 'reserved'], // Teredo: the inverted client 0.0.0.1 is 255.255.255.254
    ['3fff::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['2001:1::1', 'public'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700::1111', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classOf(address)).toBe(kind);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b:1::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:c0a8:101::', 'private'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private'], // Teredo whose (inverted) client is 10.0.0.1
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // client 127.0.0.1
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'], // client 169.254.169.254… inverted: 0x5601 5601
  ])('the IPv6 form %s carries a %s IPv4 address', (address, kind) => {
    expect(classOf(address)).toBe(kind);
  });

  it.each([['64:ff9b::8.8.8.8'], ['64:ff9b:1::808:808'], ['2002:808:808::1'], ['2001:0:4136:e378:8000:63bf:f7f7:f7f7'], ['::8.8.8.8'], ['::ffff:0:8.8.8.8']])(
    'the IPv4-embedding form %s is refused whole even when it carries a public address',
    (address) => {
      expect(classOf(address)).toBe('translated');
      expect(() => new NetworkGuard().checkAddress(address)).toThrow("is refused: it is a translated IPv4 (NAT64, 6to4, Teredo or IPv4-compatible: the IPv4 host behind it is a translator's choice) address");
      expect(() => new NetworkGuard({ allowPrivate: ['64:ff9b::/96', '2002::/16', '2001::/32', '::/96', '::ffff:0:0:0/96', '64:ff9b:1::/48'] }).checkAddress(address)).not.toThrow();
    },
  );

  it('an embedded metadata address stays refused when allow_private opens the translation prefix', () => {
    const guard = new NetworkGuard({ allowPrivate: ['64:ff9b::/96', '2002::/16', '2001::/32'] });
    for (const address of ['64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:5601:5601']) {
      expect(() => guard.checkAddress(address)).toThrow('cloud metadata addresses are never fetched');
    }
  });

  it('formats IPv4 (also mapped) as a dotted quad and IPv6 compressed', () => {
    expect(formatAddress(parseAddress('::ffff:7f00:1')!)).toBe('127.0.0.1');
    expect(formatAddress(parseAddress('2001:0db8:0000:0000:0000:0000:0000:0001')!)).toBe('2001:db8::1');
  });

  it('parses CIDRs of both families and refuses malformed ones', () => {
    expect(cidrContains(parseCidr('10.0.0.0/8'), parseAddress('10.200.0.1')!)).toBe(true);
    expect(cidrContains(parseCidr('10.0.0.0/8'), parseAddress('11.0.0.1')!)).toBe(false);
    expect(cidrContains(parseCidr('fd00::/8'), parseAddress('fd01::1')!)).toBe(true);
    expect(cidrContains(parseCidr('127.0.0.1'), parseAddress('127.0.0.1')!)).toBe(true);
    expect(() => parseCidr('10.0.0.0/33')).toThrow('"10.0.0.0/33" has a prefix outside 0–32');
    expect(() => parseCidr('example.com/8')).toThrow('"example.com/8" is not a CIDR');
  });
});

describe('what new URL() makes of IPv4 encodings (the guard relies on it)', () => {
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://2852039166/', '169.254.169.254'],
    ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
  ])('%s has the host %s', (url, host) => {
    expect(new URL(url).hostname).toBe(host);
  });
});

describe('NetworkGuard.checkUrl with the default policy', () => {
  const guard = new NetworkGuard();

  it.each([
    ['http://127.0.0.1:8080/', `127.0.0.1 is refused: ${LOOPBACK}`],
    ['http://2130706433/', `127.0.0.1 is refused: ${LOOPBACK}`],
    ['http://0177.0.0.1/', `127.0.0.1 is refused: ${LOOPBACK}`],
    ['http://0x7f.1/', `127.0.0.1 is refused: ${LOOPBACK}`],
    ['http://127.1/', `127.0.0.1 is refused: ${LOOPBACK}`],
    ['http://[::ffff:127.0.0.1]/', `127.0.0.1 is refused: ${LOOPBACK}`],
    ['http://[::1]/', `::1 is refused: ${LOOPBACK}`],
    ['http://[64:ff9b::7f00:1]/', `64:ff9b::7f00:1 is refused: ${LOOPBACK}`],
    ['http://[2002:7f00:1::]/', `2002:7f00:1:: is refused: ${LOOPBACK}`],
    ['http://0/', '0.0.0.0 is refused: unspecified addresses are never fetched'],
    ['http://[::]/', ':: is refused: unspecified addresses are never fetched'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is refused: cloud metadata addresses are never fetched'],
    ['http://2852039166/', '169.254.169.254 is refused: cloud metadata addresses are never fetched'],
    ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254 is refused: cloud metadata addresses are never fetched'],
    ['http://[::ffff:169.254.169.254]/', '169.254.169.254 is refused: cloud metadata addresses are never fetched'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254 is refused: cloud metadata addresses are never fetched'],
    ['http://10.0.0.1/', '10.0.0.1 is refused: it is a private address (allow_private in web_policy.yaml lists CIDRs that may be reached)'],
    ['http://100.100.100.201/', '100.100.100.201 is refused: it is a carrier-grade NAT (100.64.0.0/10) address (allow_private in web_policy.yaml lists CIDRs that may be reached)'],
    ['http://100.100.100.200/', '100.100.100.200 is refused: cloud metadata addresses are never fetched'],
    ['http://localhost/', 'localhost is refused: it names the local host or a cloud metadata service'],
    ['http://LOCALHOST./', 'localhost. is refused: it names the local host or a cloud metadata service'],
    ['http://app.localhost/', 'app.localhost is refused: it names the local host or a cloud metadata service'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is refused: it names the local host or a cloud metadata service'],
    ['file:///etc/passwd', 'file: URLs are refused: only http and https are fetched'],
    ['gopher://example.com/', 'gopher: URLs are refused: only http and https are fetched'],
    ['http://user:secret@example.com/', 'URLs with a user name or password are refused'],
    ['http://example.com:8080/', 'port 8080 is refused: allowed ports are 80, 443 (ports in web_policy.yaml adds more)'],
    ['not a url', '"not a url" is not a valid absolute URL'],
  ])('%s is refused', (url, message) => {
    expect(refusal(guard, url)).toBe(message);
  });

  it('lets public hosts through on 80 and 443, IDN names in their punycode form', () => {
    expect(guard.checkUrl('http://example.com/a?b').href).toBe('http://example.com/a?b');
    expect(guard.checkUrl('https://8.8.8.8:443/').hostname).toBe('8.8.8.8');
    expect(guard.checkUrl('https://bücher.example/').hostname).toBe('xn--bcher-kva.example');
  });
});

describe('NetworkGuard with a policy', () => {
  it('allow_private unlocks exactly its CIDRs, also in their IPv6 forms', () => {
    const guard = new NetworkGuard({ allowPrivate: ['127.0.0.1/32', '10.1.0.0/16'], extraPorts: [8080] });
    expect(() => guard.checkUrl('http://127.0.0.1:8080/')).not.toThrow();
    expect(() => guard.checkUrl('http://[::ffff:127.0.0.1]:8080/')).not.toThrow();
    expect(() => guard.checkAddress('10.1.200.3')).not.toThrow();
    expect(refusal(guard, 'http://127.0.0.2/')).toBe(`127.0.0.2 is refused: ${LOOPBACK}`);
    expect(() => guard.checkAddress('10.2.0.1')).toThrow('10.2.0.1 is refused: it is a private address');
  });

  it('never unlocks metadata or unspecified addresses, whatever allow_private says', () => {
    const guard = new NetworkGuard({ allowPrivate: ['0.0.0.0/0', '::/0'] });
    expect(() => guard.checkAddress('169.254.169.254')).toThrow('169.254.169.254 is refused: cloud metadata addresses are never fetched');
    expect(() => guard.checkAddress('0.0.0.0')).toThrow('0.0.0.0 is refused: unspecified addresses are never fetched');
    expect(() => guard.checkAddress('192.168.0.1')).not.toThrow();
    // Metadata services that sit inside ranges an intranet policy opens (CGNAT, link-local).
    const intranet = new NetworkGuard({ allowPrivate: ['100.64.0.0/10', '169.254.0.0/16'] });
    expect(() => intranet.checkAddress('100.100.100.200')).toThrow('100.100.100.200 is refused: cloud metadata addresses are never fetched');
    expect(() => intranet.checkAddress('169.254.170.2')).toThrow('169.254.170.2 is refused: cloud metadata addresses are never fetched');
    expect(() => intranet.checkAddress('100.100.100.201')).not.toThrow();
  });

  it('deny_hosts refuses matching names; a non-empty allow_hosts admits only its globs', () => {
    const guard = new NetworkGuard({ allowHosts: ['*.example.com', 'example.org'], denyHosts: ['secret.example.com'] });
    expect(() => guard.checkUrl('https://docs.example.com/')).not.toThrow();
    expect(() => guard.checkUrl('https://EXAMPLE.org/')).not.toThrow();
    expect(refusal(guard, 'https://secret.example.com/')).toBe('secret.example.com is refused by deny_hosts in web_policy.yaml');
    expect(refusal(guard, 'https://SECRET.example.com./')).toBe('secret.example.com. is refused by deny_hosts in web_policy.yaml');
    expect(() => guard.checkUrl('https://docs.example.com./')).not.toThrow();
    expect(refusal(guard, 'https://example.net/')).toBe('example.net is not in allow_hosts in web_policy.yaml');
    expect(refusal(guard, 'https://example.com/')).toBe('example.com is not in allow_hosts in web_policy.yaml');
  });

  it('checkAddress refuses what is not an address', () => {
    expect(() => new NetworkGuard().checkAddress('example.com')).toThrow('"example.com" is not an IP address');
  });
});
