import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { Relay, RelayContext, RelayFactory } from './context.js';
import { loggingRelay } from './logging.js';
import { serverRequestsRelay } from './server-requests.js';
import { completionsRelay } from './completions.js';
import { promptsRelay } from './prompts.js';
import { resourcesRelay } from './resources.js';

/** Every part of MCP besides tools that the gateway relays, one module each. */
const RELAYS: readonly RelayFactory[] = [resourcesRelay, promptsRelay, completionsRelay, serverRequestsRelay, loggingRelay];

export function createRelays(context: RelayContext): readonly Relay[] {
  return RELAYS.map((factory) => factory(context));
}

/** The capabilities of all relays, merged into one initialize answer. */
export function relayCapabilities(relays: readonly Relay[]): ServerCapabilities {
  return Object.assign({}, ...relays.map((relay) => relay.capabilities)) as ServerCapabilities;
}
