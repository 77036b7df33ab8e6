import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type Risk } from '@bulkhead/core';
import type { RelayContext, UpstreamExtra } from './context.js';
import { ProtocolError } from './protocol-error.js';

/**
 * One MCP operation besides a tool call, as the permission policy and the audit log see it. Its
 * qualified name is `<namespace>:<method>` (everything:resources/read): the `/` cannot occur in a
 * tool's name, so no tool can be mistaken for it, and `everything:*` (every tool of a server) does
 * not reach it; a glob over the method, such as `everything:resources/*`, does. The
 * subject argument is what a bare `(glob)` in a rule matches (`everything:resources/read(test://static/**)`).
 */
export interface GatedOperation {
  readonly namespace: string;
  readonly method: 'resources/read' | 'resources/subscribe' | 'prompts/get' | 'elicitation/create' | 'sampling/createMessage';
  readonly risk: Risk;
  /** What the audit log records and the policy's argument matchers see. */
  readonly args: Record<string, unknown>;
  readonly subjectArg?: string;
  /**
   * Only an `allow:` entry lets it run, whatever the autonomy (sampling: a server spends the
   * user's model and puts words in its context).
   */
  readonly needsAllowEntry?: boolean;
}

export function operationName(operation: Pick<GatedOperation, 'namespace' | 'method'>): string {
  return `${operation.namespace}:${operation.method}`;
}

/** Who made the request: the connection and its request context, or, for a server's own request, the client call it serves. */
export interface Requester {
  readonly server: Server;
  readonly extra: UpstreamExtra;
  /** The audit log's caller; defaults to the request's own. */
  readonly caller?: string;
}

/**
 * Decides `operation` under the requester's permission gate, runs it when allowed, and writes one
 * audit line either way in the gateway's log. A refusal is a JSON-RPC error (these methods have no
 * isError result) that names the file and line that decided and what would allow it. `ask` is
 * refused: these operations have no confirmation prompt; the remedy says which entry to add.
 */
export async function gated<T>(context: RelayContext, requester: Requester, operation: GatedOperation, run: () => Promise<T>): Promise<T> {
  const qualifiedName = operationName(operation);
  const caller = requester.caller ?? context.callerOf(requester.server, requester.extra);
  const started = performance.now();
  const audit = (decision: string, outcome: 'ok' | 'error' | 'denied' | 'cancelled', error?: string) =>
    context.auditor.record({ tool: qualifiedName, caller, args: operation.args, decision, outcome, ...(error !== undefined ? { error } : {}), durationMs: performance.now() - started });
  const gate = context.accessOf(requester.extra).gate;
  if (gate.kind === 'self') {
    const decided = gate.permissions.decide({ qualifiedName, risk: operation.risk, args: operation.args, ...(operation.subjectArg ? { subjectArg: operation.subjectArg } : {}) });
    const refused =
      decided.verdict === 'deny'
        ? `Permission denied: ${decided.reason}.${decided.remedy ? ` To allow it: ${decided.remedy}.` : ''}`
        : decided.verdict === 'ask'
          ? `Permission denied: ${decided.reason}, and ${operation.method} has no confirmation prompt. To allow it: ${decided.remedy ?? `add \`${qualifiedName}\` under allow: in ${gate.permissions.file}`}.`
          : operation.needsAllowEntry && decided.from !== 'allow'
            ? `Permission denied: ${qualifiedName} runs only when an allow: entry names it (${decided.reason}). To allow it: add \`${qualifiedName}\` under allow: in ${gate.permissions.file}.`
            : undefined;
    if (refused !== undefined) {
      audit('deny', 'denied', refused);
      throw new ProtocolError(ErrorCode.InvalidRequest, refused);
    }
  }
  try {
    const result = await run();
    audit('allow', 'ok');
    return result;
  } catch (error) {
    audit('allow', requester.extra.signal.aborted ? 'cancelled' : 'error', errorMessage(error));
    throw error;
  }
}
