import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';

/** Who sent a request to a route, as the server's own token checks found. */
export interface RouteCaller {
  /** The accepted token's AuthInfo (its principal through `principalOf`); absent when none was accepted. */
  readonly auth?: AuthInfo;
  /** Whether the request carried an Authorization header at all: a wrong token is never anonymous. */
  readonly presentedCredentials: boolean;
}

/** More than MCP on a server's HTTP port: an API of its own beside `/mcp` (the ladder's tool endpoint). */
export interface HttpRoute {
  /** The route answers every request whose path starts with this (`/api/`); `/mcp` and `/healthz` cannot be taken. */
  readonly pathPrefix: string;
  /** One line for the startup banner, given the server's base URL: what the route serves and how to call it. */
  readonly describe: (baseUrl: string) => string;
  /**
   * Answers one request, after the Host and Origin checks, told who sent it by the same token
   * checks as `/mcp`; the route decides what each caller may do and words its own refusals.
   */
  readonly handle: (request: IncomingMessage, response: ServerResponse, caller: RouteCaller) => Promise<void>;
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
