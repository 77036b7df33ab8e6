import { McpError } from '@modelcontextprotocol/sdk/types.js';

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
