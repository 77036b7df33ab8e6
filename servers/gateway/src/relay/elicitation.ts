import { ElicitResultSchema, ErrorCode, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { neutralizeInvisible } from '@bulkhead/core';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayContext } from './context.js';
import { gated } from './gated.js';
import { clientName, gatedRouteOf } from './server-requests.js';
import { ProtocolError } from './protocol-error.js';

type ElicitationMode = 'form' | 'url';

/** Whether a client's declared elicitation covers `mode`; a bare `elicitation: {}` means forms (the spec's default). */
function supports(declared: { form?: object; url?: object } | undefined, mode: ElicitationMode): boolean {
  if (!declared) return false;
  if (mode === 'url') return declared.url !== undefined;
  return declared.form !== undefined || declared.url === undefined;
}

/** What the human is shown: the server that asks, then its message with invisible characters written out. */
export function labelledMessage(namespace: string, message: string): string {
  return `[${namespace}] ${neutralizeInvisible(message)}`;
}

/**
 * A server's elicitation/create, put to the human through the client whose call it serves, only
 * when that client declared elicitation in this mode. Gated and audited as
 * `<ns>:elicitation/create` with the message and mode (the answer is the human's, never logged).
 */
export async function relayElicitation(context: RelayContext, downstream: Downstream, request: ElicitRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
  const namespace = downstream.namespace;
  const mode: ElicitationMode = request.params.mode ?? 'form';
  const { message } = request.params;
  const args = { message, mode };
  const route = gatedRouteOf(
    context,
    downstream,
    'elicitation/create',
    signal,
    args,
    `elicitation/create from ${namespace} was refused: none of its tool calls is under way, so the gateway cannot tell which client's user it is for. Ask within the tool call that needs the answer.`,
  );
  return gated(context, route, { namespace, method: 'elicitation/create', risk: 'low', args }, async () => {
    const declared = route.server.getClientCapabilities()?.elicitation;
    if (!supports(declared, mode)) {
      const what = mode === 'url' ? 'cannot open URLs for its user: it did not declare elicitation in url mode' : 'cannot show forms: it did not declare elicitation';
      throw new ProtocolError(ErrorCode.InvalidRequest, `${clientName(route.server)} ${what}, so ${namespace}'s question was not put to anyone. Use a client that supports MCP elicitation${mode === 'url' ? ' (url mode)' : ''} for this tool.`);
    }
    const params = { ...request.params, message: labelledMessage(namespace, message) };
    return route.extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, { signal, timeout: context.config.call_timeout_ms });
  });
}
