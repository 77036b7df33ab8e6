import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Risk } from '../permissions/schema.js';

/** What the permission gate needs to know about the tool being called. */
export interface CallTarget {
  readonly risk: Risk;
  /** The argument a bare permission matcher such as `fs:read_file(src/**)` compares against. */
  readonly subjectArg?: string;
  /** The risk of this call's arguments, when the tool's risk depends on them. */
  readonly assessRisk?: (args: Record<string, unknown>) => Risk | Promise<Risk>;
}

/** Everything one tools/call carries through the middleware chain. */
export interface CallState {
  readonly target: CallTarget;
  readonly qualifiedName: string;
  /** The arguments as the client sent them, or as a pre_tool hook replaced them: what the audit records. */
  rawArgs: unknown;
  /** Validated arguments; set by the validation step. */
  args: Record<string, unknown>;
  readonly extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
  readonly signal: AbortSignal;
  readonly caller: string;
  /** Who the transport authenticated for this call (a bearer token's owner); absent over stdio. */
  readonly principal?: string | undefined;
  /** The parameters of the HTTP route a direct call came through; absent over MCP. */
  readonly routeParams?: Readonly<Record<string, string>>;
  readonly clientCanElicit: () => boolean;
  /** Why nobody can confirm this call when that is not the client's doing (it did not come over MCP). */
  readonly unconfirmable?: string;
  decision: string;
  result?: CallToolResult;
  /** The code of the ToolError that ended the call, for transports that map it (an HTTP status). */
  errorCode?: string;
  /** Set when the call was handed to another audited call (a gateway's call_tool): one line, not two. */
  delegated?: boolean;
}

export function callerOf(client: { name: string; version: string } | undefined, sessionId: string | undefined): string {
  if (!client) return 'unknown';
  return `${client.name}/${client.version}${sessionId ? `#${sessionId.slice(0, 8)}` : ''}`;
}
