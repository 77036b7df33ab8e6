import type { IncomingMessage, ServerResponse } from 'node:http';

/** More than MCP on a server's HTTP port: an API of its own beside `/mcp` (the ladder's tool endpoint). */
export interface HttpRoute {
  /** The route answers every request whose path starts with this (`/api/`); `/mcp` and `/healthz` cannot be taken. */
  readonly pathPrefix: string;
  /** One line for the startup banner, given the server's base URL: what the route serves and how to call it. */
  readonly describe: (baseUrl: string) => string;
  /** Answers one request, after the Host and Origin checks; the route authenticates its callers itself. */
  readonly handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>;
}

/**
 * Turns a bearer token into the principal it was issued to, or undefined for an unknown or revoked
 * token. Asked on every request, so a revocation takes effect at once.
 */
export type TokenVerifier = (token: string) => Promise<string | undefined>;

export interface HttpExtensions {
  readonly routes?: readonly HttpRoute[];
  /** With one, every `/mcp` request must carry a token it (or `--token-file`) accepts. */
  readonly verifyToken?: TokenVerifier;
}
