import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Risk } from '../permissions/schema.js';
import type { CallProgress } from './progress.js';

/** The risk of one call's arguments, with why in words for the approval prompt ("classified medium: writes files …"). */
export interface RiskAssessment {
  readonly risk: Risk;
  readonly reason?: string;
}

/** Per-call risk, for tools whose risk depends on their arguments; a bare tier when there is nothing to explain. */
export type RiskAssessor = (args: Record<string, unknown>) => Risk | RiskAssessment | Promise<Risk | RiskAssessment>;

/** What the permission gate needs to know about the tool being called. */
export interface CallTarget {
  readonly risk: Risk;
  /** The argument a bare permission matcher such as `fs:read_file(src/**)` compares against. */
  readonly subjectArg?: string;
  /** The risk of this call's arguments, when the tool's risk depends on them. */
  readonly assessRisk?: RiskAssessor;
  /** What the call will do, in text for the approval prompt (a diff); asked only when a human is asked. */
  readonly preview?: (args: Record<string, unknown>) => Promise<string>;
}

/** The tools a human allowed for the rest of one MCP session, for one bearer token. */
export class SessionApprovals {
  private readonly granted = new Set<string>();

  grant(qualifiedName: string): void {
    this.granted.add(qualifiedName);
  }

  has(qualifiedName: string): boolean {
    return this.granted.has(qualifiedName);
  }
}

/**
 * One connection's session approvals (one connected client; over HTTP one mcp-session-id), kept
 * apart per bearer token, so an allow given in one session never reaches another session or token.
 */
export class ConnectionApprovals {
  private readonly byToken = new Map<string, SessionApprovals>();

  /** `token` is the label the transport authenticated (AuthInfo.token); undefined over stdio. */
  for(token: string | undefined): SessionApprovals {
    const key = token ?? '';
    let approvals = this.byToken.get(key);
    if (!approvals) this.byToken.set(key, (approvals = new SessionApprovals()));
    return approvals;
  }
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
  /** The call's progress notifications; absent when the request carried no progress token. */
  readonly progress?: CallProgress;
  /** What the human allowed for this session; absent where there is no session to remember it in (a direct HTTP call). */
  readonly sessionApprovals?: SessionApprovals;
  /** Why nobody can confirm this call when that is not the client's doing (it did not come over MCP). */
  readonly unconfirmable?: string;
  decision: string;
  /** The pending approval that decided this call, or that it waits for, for the audit line. */
  approval?: { readonly id: string; readonly by?: string };
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
