import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { untrustedErrorMessage } from '@bulkhead/core';

/**
 * A JSON-RPC error whose message reaches the client as written. The SDK sends a thrown error's
 * `message` and `code`, and an McpError's message already starts with `MCP error <code>: `, which
 * the client's McpError adds again; this one carries the bare message.
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A server's McpError as the bare message it sent (the client's own prefix taken off). */
export function bareMessage(error: McpError): string {
  const own = `MCP error ${error.code}: `;
  return error.message.startsWith(own) ? error.message.slice(own.length) : error.message;
}

/** A server's McpError passed on as it sent it, code, message and data. */
export function passedOn(error: unknown): unknown {
  return error instanceof McpError ? new ProtocolError(error.code, bareMessage(error), error.data) : error;
}

/**
 * A server's JSON-RPC error on its way to the client: as it sent it when its results are trusted,
 * else its message wrapped as untrusted data (a third-party server's error text reaches the model
 * as much as its results do), after `what` failed … in the gateway's own words.
 */
export function relayedServerError(error: unknown, options: { readonly trusted: boolean; readonly namespace: string; readonly what: string; readonly signal: AbortSignal }): unknown {
  if (!(error instanceof McpError) || options.signal.aborted) return error;
  if (options.trusted) return passedOn(error);
  return new ProtocolError(error.code, `${options.what} failed with JSON-RPC error ${error.code}:\n${untrustedErrorMessage(`${options.namespace} (third-party MCP server)`, bareMessage(error))}`);
}
