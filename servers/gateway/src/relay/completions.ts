import { CompleteRequestSchema, CompleteResultSchema, ErrorCode, type CompleteRequest, type CompleteResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayContext, RelayFactory, UpstreamExtra } from './context.js';
import { promptCatalogOf } from './prompt-catalog.js';
import { passedOn, ProtocolError } from './protocol-error.js';
import { awaitPromptOwner, promptDenial, promptFor } from './prompts.js';
import { gatewayUri, resolveResource } from './resource-names.js';

/** What the specification allows in one completion answer. */
export const MAX_COMPLETION_VALUES = 100;

/** A server's answer read with any number of values, so that one over the limit is cut to it rather than refused. */
const ServerCompleteResultSchema = CompleteResultSchema.extend({ completion: CompleteResultSchema.shape.completion.extend({ values: z.array(z.string()) }) });

/** Where a completion goes: the owning server and the ref in its own names. */
interface CompletionTarget {
  readonly downstream: Downstream;
  readonly ref: CompleteRequest['params']['ref'];
}

/** The permission gate's outright refusal of reading this resource, if it refuses it: a completion of a ref that cannot be read is refused too. */
function resourceDenial(context: RelayContext, extra: UpstreamExtra, namespace: string, uri: string): string | undefined {
  const gate = context.accessOf(extra).gate;
  if (gate.kind !== 'self') return undefined;
  const decided = gate.permissions.decide({ qualifiedName: `${namespace}:resources/read`, risk: 'low', args: { uri }, subjectArg: 'uri' });
  return decided.verdict === 'deny' ? `Permission denied: ${decided.reason}.${decided.remedy ? ` To allow it: ${decided.remedy}.` : ''}` : undefined;
}

/**
 * completion/complete routed to the server that owns the ref: `ref/prompt` by the prompt's exposed
 * name (`<ns>__<name>`), `ref/resource` by the URI or template as the gateway lists it. Each ref
 * is first checked as its prompts/get or resources/read would be (visible to the caller's profile,
 * not quarantined, not denied), but not audited: clients complete on every keystroke.
 */
export const completionsRelay: RelayFactory = (context) => {
  const prompts = promptCatalogOf(context);

  const targetOf = async (extra: UpstreamExtra, ref: CompleteRequest['params']['ref']): Promise<CompletionTarget> => {
    if (ref.type === 'ref/prompt') {
      await awaitPromptOwner(context, ref.name);
      const found = promptFor(context, prompts, extra, ref.name);
      if (found instanceof ProtocolError) throw found;
      const denied = promptDenial(context, extra, found);
      if (denied !== undefined) throw new ProtocolError(ErrorCode.InvalidRequest, denied);
      return { downstream: context.downstreams.get(found.namespace)!, ref: { type: 'ref/prompt', name: found.name } };
    }
    const access = context.accessOf(extra);
    // Only the servers the caller's profile sees: a URI another one offers too is not ambiguous to this caller.
    const visible = new Map([...context.downstreams].filter(([namespace]) => !access.namespaceVisible || access.namespaceVisible(namespace)));
    const owner = resolveResource(visible, ref.uri);
    if (owner.kind === 'ambiguous') {
      throw new ProtocolError(ErrorCode.InvalidParams, `${ref.uri} is offered by ${owner.namespaces.join(' and ')}; name one as ${gatewayUri(owner.namespaces[0]!, ref.uri)}, as resources/templates/list does`);
    }
    if (owner.kind !== 'found') {
      throw new ProtocolError(ErrorCode.InvalidParams, `Unknown resource or resource template ${ref.uri}; resources/list and resources/templates/list list the ones there are`);
    }
    const denied = resourceDenial(context, extra, owner.namespace, owner.uri);
    if (denied !== undefined) throw new ProtocolError(ErrorCode.InvalidRequest, denied);
    return { downstream: context.downstreams.get(owner.namespace)!, ref: { type: 'ref/resource', uri: owner.uri } };
  };

  const complete = async (request: CompleteRequest, extra: UpstreamExtra): Promise<CompleteResult> => {
    const { downstream, ref } = await targetOf(extra, request.params.ref);
    if (downstream.state === 'ready' && !downstream.capabilities?.completions) {
      throw new ProtocolError(ErrorCode.MethodNotFound, `${downstream.namespace} does not offer completions (its server declares no completions capability)`);
    }
    const result = await downstream
      .request({ method: 'completion/complete', params: { ...request.params, ref } }, ServerCompleteResultSchema, { signal: extra.signal, timeoutMs: context.config.call_timeout_ms }, 'completion/complete')
      .catch((error: unknown) => {
        throw passedOn(error);
      });
    const values = result.completion.values;
    if (values.length <= MAX_COMPLETION_VALUES) return result as CompleteResult;
    return { ...result, completion: { ...result.completion, values: values.slice(0, MAX_COMPLETION_VALUES), hasMore: true } } as CompleteResult;
  };

  return {
    capabilities: { completions: {} },
    install(server) {
      server.setRequestHandler(CompleteRequestSchema, (request, extra) => complete(request, extra));
    },
  };
};
