import picomatch from 'picomatch';
import { ToolError } from '../errors.js';
import { classifyAddress, cidrContains, embeddedIpv4, formatAddress, parseAddress, parseCidr, type AddressClass, type Cidr } from './addresses.js';

/** What a network policy may widen or narrow; the rest of the guard holds whatever it says. */
export interface NetworkGuardOptions {
  /** CIDRs whose private, loopback, link-local, CGNAT or reserved addresses may be reached (intranet use). */
  readonly allowPrivate?: readonly string[];
  /** When non-empty, only host names matching one of these globs may be fetched. */
  readonly allowHosts?: readonly string[];
  /** Host names matching one of these globs are refused. */
  readonly denyHosts?: readonly string[];
  /** Ports allowed besides 80 and 443. */
  readonly extraPorts?: readonly number[];
}

export const DEFAULT_ALLOWED_PORTS: readonly number[] = [80, 443];

/**
 * Names that reach the local host or a cloud metadata service without any DNS answer an outsider
 * controls: refused by name, before resolution.
 */
const REFUSED_NAMES = ['localhost', '*.localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal'];

/** Classes that no allow_private entry unlocks: there is no intranet page at these. */
const NEVER_ALLOWED: ReadonlySet<AddressClass> = new Set(['metadata', 'unspecified']);

export class NetworkRefusal extends ToolError {
  constructor(message: string) {
    super(message, 'network_refused');
  }
}

const globOptions = { nocase: true, dot: true, nonegate: true } as const;

/**
 * The SSRF guard: decides whether a URL may be fetched and whether an address a name resolved to
 * may be connected to. A fetcher calls `checkUrl` on every hop and `checkAddress` on every address
 * it is about to connect to, so a name that resolves differently at connect time is still checked.
 */
export class NetworkGuard {
  private readonly allowPrivate: readonly Cidr[];
  private readonly allowHost: ((host: string) => boolean) | undefined;
  private readonly denyHost: (host: string) => boolean;
  private readonly refusedName = picomatch(REFUSED_NAMES, globOptions);
  readonly ports: ReadonlySet<number>;

  constructor(options: NetworkGuardOptions = {}) {
    this.allowPrivate = (options.allowPrivate ?? []).map(parseCidr);
    const allowHosts = options.allowHosts ?? [];
    this.allowHost = allowHosts.length > 0 ? picomatch([...allowHosts], globOptions) : undefined;
    const denyHosts = options.denyHosts ?? [];
    this.denyHost = denyHosts.length > 0 ? picomatch([...denyHosts], globOptions) : () => false;
    this.ports = new Set([...DEFAULT_ALLOWED_PORTS, ...(options.extraPorts ?? [])]);
  }

  /**
   * Parses and checks a URL: scheme, credentials, port, host globs, refused names and, for an
   * address literal in any encoding, the address itself. Returns the parsed URL.
   */
  checkUrl(text: string): URL {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new NetworkRefusal(`"${text}" is not a valid absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new NetworkRefusal(`${url.protocol} URLs are refused: only http and https are fetched`);
    if (url.username !== '' || url.password !== '') throw new NetworkRefusal('URLs with a user name or password are refused');
    const host = hostOf(url);
    // `example.com.` is the same host as `example.com`: globs see the name without the root dot, or a dot would slip past deny_hosts.
    const name = host.replace(/\.$/, '');
    // WHATWG parsing has already turned every IPv4 encoding (2130706433, 0177.0.0.1, 0x7f.1, 127.1) into a dotted quad.
    if (parseAddress(host) !== undefined) this.checkAddress(host);
    else if (this.refusedName(name)) throw new NetworkRefusal(`${host} is refused: it names the local host or a cloud metadata service`);
    if (this.denyHost(name)) throw new NetworkRefusal(`${host} is refused by deny_hosts in web_policy.yaml`);
    if (this.allowHost !== undefined && !this.allowHost(name)) throw new NetworkRefusal(`${host} is not in allow_hosts in web_policy.yaml`);
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    if (!this.ports.has(port)) throw new NetworkRefusal(`port ${port} is refused: allowed ports are ${[...this.ports].join(', ')} (ports in web_policy.yaml adds more)`);
    return url;
  }

  /** Throws unless the address may be connected to under this policy. */
  checkAddress(text: string): void {
    const address = parseAddress(text);
    if (address === undefined) throw new NetworkRefusal(`"${text}" is not an IP address`);
    const kind = classifyAddress(address);
    if (kind === 'public') return;
    const shown = formatAddress(address);
    if (NEVER_ALLOWED.has(kind)) throw new NetworkRefusal(`${shown} is refused: ${describeClass(kind)} addresses are never fetched`);
    const inner = embeddedIpv4(address);
    const allowed = this.allowPrivate.some((cidr) => cidrContains(cidr, address) || (inner !== undefined && cidrContains(cidr, inner)));
    if (!allowed) throw new NetworkRefusal(`${shown} is refused: it is a ${describeClass(kind)} address (allow_private in web_policy.yaml lists CIDRs that may be reached)`);
  }
}

/** The host of a URL without IPv6 brackets, lower-case (WHATWG parsing already lower-cases and punycodes names). */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function describeClass(kind: AddressClass): string {
  const names: Record<AddressClass, string> = {
    public: 'public',
    unspecified: 'unspecified',
    loopback: 'loopback',
    private: 'private',
    link_local: 'link-local',
    cgnat: 'carrier-grade NAT (100.64.0.0/10)',
    multicast: 'multicast',
    reserved: 'reserved (not globally reachable in the IANA special-purpose registries)',
    translated: 'translated IPv4 (NAT64, 6to4, Teredo or IPv4-compatible: the IPv4 host behind it is a translator\'s choice)',
    metadata: 'cloud metadata',
  };
  return names[kind];
}
