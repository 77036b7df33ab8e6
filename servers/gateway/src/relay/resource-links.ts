import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CallState, Middleware } from '@bulkhead/core';
import { exposedResourceUri, type ResourceOwner } from './resource-names.js';

/**
 * A tool result of server `namespace` with the URIs of its resource links (and embedded
 * resources) as they read back from that server through the gateway: unchanged when they already
 * do, `bulkhead://<ns>/<uri>` when another server offers the same URI or the server has not
 * listed it (a resource a tool made a moment ago).
 */
export function exposeResourceLinks(result: CallToolResult, namespace: string, owners: ReadonlyMap<string, ResourceOwner>): CallToolResult {
  if (!result.content.some((block) => block.type === 'resource_link' || block.type === 'resource')) return result;
  const content = result.content.map((block) => {
    if (block.type === 'resource_link') return { ...block, uri: exposedResourceUri(owners, namespace, block.uri) };
    if (block.type === 'resource') return { ...block, resource: { ...block.resource, uri: exposedResourceUri(owners, namespace, block.resource.uri) } };
    return block;
  });
  return { ...result, content };
}

/**
 * The step of a downstream tool call that rewrites its links. It sits inside the wrapping of
 * untrusted results, so a link is still a link block when it is rewritten, and outside the
 * post_tool hooks, so they see the links as the server sent them.
 */
export function resourceLinksMiddleware(namespace: string, owners: ReadonlyMap<string, ResourceOwner>): Middleware<CallState> {
  return async (state, next) => {
    await next();
    if (state.result) state.result = exposeResourceLinks(state.result, namespace, owners);
  };
}
