import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { UpstreamExtra } from './context.js';

/** A client's tool call that a downstream is running. */
export interface InFlightCall {
  /** The gateway's connection to the client that made it. */
  readonly server: Server;
  /** The call's request context: `extra.sendRequest` sends on the call's own stream (Streamable HTTP). */
  readonly extra: UpstreamExtra;
  /** The audit log's caller of the call. */
  readonly caller: string;
  /** The tool, qualified (everything:trigger-elicitation-request). */
  readonly qualifiedName: string;
}

/**
 * The tool calls under way, by downstream namespace. A downstream is shared by every client of the
 * gateway and its requests to its client (elicitation, sampling) carry nothing that names the call
 * they serve, so the relay answers them for the client whose call is under way on that server,
 * and refuses when calls from more than one client are (it cannot tell whose it is).
 */
export class InFlightCalls {
  private readonly byNamespace = new Map<string, Set<InFlightCall>>();

  async track<T>(namespace: string, call: InFlightCall, run: () => Promise<T>): Promise<T> {
    let calls = this.byNamespace.get(namespace);
    if (!calls) this.byNamespace.set(namespace, (calls = new Set()));
    calls.add(call);
    try {
      return await run();
    } finally {
      calls.delete(call);
      if (calls.size === 0) this.byNamespace.delete(namespace);
    }
  }

  /** The calls under way on this downstream, oldest first. */
  of(namespace: string): readonly InFlightCall[] {
    return [...(this.byNamespace.get(namespace) ?? [])];
  }
}
