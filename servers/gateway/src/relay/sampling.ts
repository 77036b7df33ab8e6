import { CreateMessageResultSchema, CreateMessageResultWithToolsSchema, ErrorCode, type CreateMessageRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayContext } from './context.js';
import { gated } from './gated.js';
import { clientName, gatedRouteOf } from './server-requests.js';
import { ProtocolError } from './protocol-error.js';

/**
 * A server's sampling/createMessage, sent to the model of the client whose call it serves, only
 * when that client declared sampling (and sampling with tools, when the request offers tools).
 * It spends the user's model and puts a server's words into its context, so it is high risk and a
 * server that is not a built-in needs an allow: entry naming `<ns>:sampling/createMessage`. The
 * audit line has the request's shape, not its text.
 */
export async function relaySampling(context: RelayContext, downstream: Downstream, request: CreateMessageRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
  const namespace = downstream.namespace;
  const { params } = request;
  // `outputLimit`, not `maxTokens`: the audit log redacts every key that says token.
  const args = { outputLimit: params.maxTokens, messages: params.messages.length, systemPromptLength: params.systemPrompt?.length ?? 0 };
  const route = gatedRouteOf(
    context,
    downstream,
    'sampling/createMessage',
    signal,
    args,
    `sampling/createMessage from ${namespace} was refused: none of its tool calls is under way, so the gateway cannot tell which client's model it is for. Ask within the tool call that needs it.`,
  );
  const operation = { namespace, method: 'sampling/createMessage', risk: 'high', args, needsAllowEntry: !context.builtins.has(namespace) } as const;
  return gated(context, route, operation, async () => {
    const declared = route.server.getClientCapabilities()?.sampling;
    if (!declared) throw new ProtocolError(ErrorCode.InvalidRequest, `${clientName(route.server)} cannot sample: it did not declare sampling, so ${namespace}'s request for a model's answer was not sent. Use a client that supports MCP sampling for this tool.`);
    const withTools = params.tools !== undefined || params.toolChoice !== undefined;
    if (withTools && !declared.tools) throw new ProtocolError(ErrorCode.InvalidRequest, `${clientName(route.server)} cannot sample with tools: it declared sampling without tools, so ${namespace}'s request was not sent.`);
    const options = { signal, timeout: context.config.call_timeout_ms };
    return withTools ? route.extra.sendRequest(request, CreateMessageResultWithToolsSchema, options) : route.extra.sendRequest(request, CreateMessageResultSchema, options);
  });
}
