import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { errorMessage, NetworkRefusal, type NetworkGuard } from '@bulkhead/core';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Every address a name resolves to; tests inject one that answers what a hostile DNS server would. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface GuardedAgentOptions {
  readonly guard: NetworkGuard;
  readonly connectTimeoutMs: number;
  readonly resolve?: Resolver;
}

/**
 * An undici Agent whose every connection is opened by this connector: the name is resolved here,
 * every address it resolves to is checked, and the socket is opened to the checked address itself
 * (TLS still verifies the certificate for the name). A DNS answer that changes between a check and
 * the connect (rebinding) therefore never reaches an address that was not checked.
 */
export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const resolve = options.resolve ?? systemResolver;
  const connectTo = buildConnector({ timeout: options.connectTimeoutMs });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    // undici hands IPv6 literals over without their brackets, as net.connect wants them.
    const { hostname } = connectOptions;
    checkedAddress(hostname, options.guard, resolve).then(
      (address) => connectTo({ ...connectOptions, hostname: address, servername: isIP(hostname) === 0 ? hostname : undefined }, callback),
      (error: unknown) => callback(error instanceof Error ? error : new Error(errorMessage(error)), null),
    );
  };
  return new Agent({ connect });
}

/** The address to connect to for a host, after checking every address the host resolves to. */
async function checkedAddress(hostname: string, guard: NetworkGuard, resolve: Resolver): Promise<string> {
  if (isIP(hostname) !== 0) {
    guard.checkAddress(hostname);
    return hostname;
  }
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await resolve(hostname);
  } catch (error) {
    throw new NetworkRefusal(`${hostname} could not be resolved: ${errorMessage(error)}`);
  }
  if (addresses.length === 0) throw new NetworkRefusal(`${hostname} resolved to no address`);
  // One refused address refuses the name: which of them a retry would reach is not ours to choose.
  for (const { address } of addresses) {
    try {
      guard.checkAddress(address);
    } catch (error) {
      throw new NetworkRefusal(`${hostname} resolves to ${errorMessage(error)}`);
    }
  }
  return addresses[0]!.address;
}
