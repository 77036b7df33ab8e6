import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  EmptyResultSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '@bulkhead/core';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayFactory, UpstreamExtra } from './context.js';
import { firstStarts } from './first-starts.js';
import { gated } from './gated.js';
import { pageOf } from './list-pages.js';
import { boundResourceContents } from './resource-contents.js';
import { exposedResourceUri, gatewayUri, resolveResource, type ResolvedResource } from './resource-names.js';
import { ResourceSubscriptions } from './resource-subscriptions.js';
import { ProtocolError, relayedServerError } from './protocol-error.js';


/**
 * A server's JSON-RPC error passed on with its own code and words (the SDK would put its prefix in
 * front again); a third-party server's words come as untrusted data, like its tool results.
 */
/**
 * resources/list, resources/templates/list, resources/read, resources/subscribe and unsubscribe
 * across every server that is up and that the caller's profile sees, named by the rule of
 * resource-names.ts. A read or a subscribe goes to its one server with the server's own URI,
 * through the permission gate (`<ns>:resources/read`, `<ns>:resources/subscribe`, subject `uri`)
 * and into the gateway's audit log; a read's reply is held to the gateway's output limits.
 */
export const resourcesRelay: RelayFactory = (context) => {
  /** The servers a caller may read from, up or not (naming counts only those that are up). */
  const ownersFor = (extra: UpstreamExtra): Map<string, Downstream> => {
    const access = context.accessOf(extra);
    return new Map([...context.downstreams].filter(([namespace]) => access.namespaceVisible?.(namespace) ?? true));
  };

  /**
   * Discovery never grants permission, as with tools: what the caller's gate denies reading
   * outright is not listed (a template when a deny rule's glob matches its template string).
   */
  const readDenied = (extra: UpstreamExtra, namespace: string, uri: string): boolean => {
    const gate = context.accessOf(extra).gate;
    return gate.kind === 'self' && gate.permissions.decide({ qualifiedName: `${namespace}:resources/read`, risk: 'low', args: { uri }, subjectArg: 'uri' }).verdict === 'deny';
  };

  /**
   * The server and its URI that `uri` names for this caller, or the JSON-RPC error that says what
   * to write instead; a request that names no server is audited under the gateway's own name.
   */
  const route = (server: Server, extra: UpstreamExtra, owners: ReadonlyMap<string, Downstream>, uri: string, method: 'resources/read' | 'resources/subscribe'): ResolvedResource => {
    const verb = method === 'resources/read' ? 'read' : 'subscribe to';
    const resolved = resolveResource(owners, uri);
    if (resolved.kind === 'found') return resolved;
    const refusal = (() => {
      switch (resolved.kind) {
        case 'ambiguous':
          return `Resource ${uri} is offered by more than one server (${resolved.namespaces.join(', ')}); ${verb} it as ${resolved.namespaces.map((namespace) => gatewayUri(namespace, uri)).join(' or ')}`;
        case 'no_uri':
          return `${uri} names no resource: write ${gatewayUri(resolved.namespace, `<the resource's URI on ${resolved.namespace}>`)}`;
        case 'unknown_namespace':
          return `Unknown resource ${uri}: this gateway has no server called ${resolved.namespace} (its servers: ${[...owners.keys()].join(', ') || 'none'})`;
        case 'none': {
          const starting = [...owners.values()].flatMap((downstream) => (downstream.unavailableReason ? [downstream.unavailableReason] : []));
          return `Unknown resource ${uri}: no server of this gateway lists it or has a template it matches${starting.length ? ` (${starting.join('; ')})` : ''}; resources/list and resources/templates/list show what there is`;
        }
      }
    })();
    context.auditor.recordRejected(`gateway:${method}`, context.callerOf(server, extra), { uri }, refusal);
    throw new ProtocolError(ErrorCode.InvalidParams, refusal);
  };

  const request = async <T>(downstream: Downstream, what: string, signal: AbortSignal, send: (options: { signal: AbortSignal; timeoutMs: number }) => Promise<T>): Promise<T> => {
    try {
      return await send({ signal, timeoutMs: context.config.call_timeout_ms });
    } catch (error) {
      throw relayedServerError(error, { trusted: downstream.spec.trust.has('results'), namespace: downstream.namespace, what, signal });
    }
  };

  const subscribeDownstream = async (resource: ResolvedResource, signal: AbortSignal): Promise<void> => {
    const downstream = context.downstreams.get(resource.namespace)!;
    await request(downstream, `resources/subscribe of ${resource.uri} on ${resource.namespace}`, signal, (options) =>
      downstream.request({ method: 'resources/subscribe', params: { uri: resource.uri } }, EmptyResultSchema, options),
    );
  };
  const subscriptions = new ResourceSubscriptions({
    subscribe: subscribeDownstream,
    unsubscribe: async (resource) => {
      const downstream = context.downstreams.get(resource.namespace)!;
      // A server that is not up holds no subscription: its next process starts with none.
      if (downstream.state !== 'ready') return;
      await downstream
        .request({ method: 'resources/unsubscribe', params: { uri: resource.uri } }, EmptyResultSchema, { signal: new AbortController().signal, timeoutMs: context.config.call_timeout_ms })
        .catch((error: unknown) => {
          // The gateway closing lets go of every subscription as it stops its servers: nothing to report then.
          if (downstream.state !== 'stopped') context.report(`${resource.namespace}: its resources/unsubscribe of ${resource.uri} failed (${errorMessage(error)})`);
        });
    },
  });

  // Coalesced: a server's resources list_changed re-reads two lists, and a client needs one notice;
  // a client whose profile sees none of the servers that changed is told nothing.
  const changedServers = new Set<string>();
  const announceListChanged = (namespace: string) => {
    if (changedServers.size === 0) {
      setImmediate(() => {
        const changed = [...changedServers];
        changedServers.clear();
        for (const server of context.sessions) {
          const access = context.accessOfConnection(server);
          if (changed.some((name) => access.namespaceVisible?.(name) ?? true)) server.sendResourceListChanged().catch(() => undefined);
        }
      });
    }
    changedServers.add(namespace);
  };
  const offersResources = (downstream: Downstream) => downstream.lists.resources.length + downstream.lists.resourceTemplates.length > 0;

  for (const downstream of context.downstreams.values()) {
    downstream.listeners.list.add((list) => {
      // While it starts, `ready` below announces it once it is listed.
      if (list !== 'prompts' && downstream.state === 'ready') announceListChanged(downstream.namespace);
    });
    downstream.listeners.ready.add(() => {
      if (offersResources(downstream)) announceListChanged(downstream.namespace);
      for (const resource of subscriptions.of(downstream.namespace)) {
        subscribeDownstream(resource, new AbortController().signal).catch((error: unknown) => context.report(`${downstream.namespace}: its resources/subscribe of ${resource.uri} after it came back failed (${errorMessage(error)}); that subscription gets no updates`));
      }
    });
    downstream.listeners.down.add(() => {
      if (offersResources(downstream)) announceListChanged(downstream.namespace);
    });
    downstream.listeners.notice.add((notice) => {
      if (notice.kind !== 'resource_updated') return;
      for (const [server, uris] of subscriptions.subscribersOf({ namespace: downstream.namespace, uri: notice.uri })) {
        for (const uri of uris) server.sendResourceUpdated({ uri }).catch(() => undefined);
      }
    });
  }

  const read = async (server: Server, extra: UpstreamExtra, uri: string): Promise<ReadResourceResult> => {
    await firstStarts(context);
    const owners = ownersFor(extra);
    const target = route(server, extra, owners, uri, 'resources/read');
    const downstream = context.downstreams.get(target.namespace)!;
    return gated(context, { server, extra }, { namespace: target.namespace, method: 'resources/read', risk: 'low', args: { uri: target.uri }, subjectArg: 'uri' }, async () => {
      const result = await request(downstream, `resources/read of ${target.uri} on ${target.namespace}`, extra.signal, (options) =>
        downstream.request({ method: 'resources/read', params: { uri: target.uri } }, ReadResourceResultSchema, options),
      );
      const bounded = boundResourceContents(result, context.limits, `Resource ${uri}`);
      return { ...bounded, contents: bounded.contents.map((content) => ({ ...content, uri: exposedResourceUri(owners, target.namespace, content.uri) })) };
    });
  };

  const subscribe = async (server: Server, extra: UpstreamExtra, uri: string): Promise<void> => {
    await firstStarts(context);
    const target = route(server, extra, ownersFor(extra), uri, 'resources/subscribe');
    const downstream = context.downstreams.get(target.namespace)!;
    await gated(context, { server, extra }, { namespace: target.namespace, method: 'resources/subscribe', risk: 'low', args: { uri: target.uri }, subjectArg: 'uri' }, async () => {
      if (downstream.state === 'ready' && !downstream.capabilities?.resources?.subscribe) {
        throw new ProtocolError(ErrorCode.InvalidRequest, `${target.namespace} does not offer resource subscriptions (it did not declare resources.subscribe), so ${uri} cannot be subscribed to`);
      }
      await subscriptions.subscribe(server, target, uri, extra.signal);
      // It may have closed while the server's subscribe was under way.
      if (!context.sessions.has(server)) subscriptions.closed(server);
    });
  };

  return {
    capabilities: { resources: { subscribe: true, listChanged: true } },
    install(server) {
      server.setRequestHandler(ListResourcesRequestSchema, async (listRequest, extra) => {
        await firstStarts(context);
        const owners = ownersFor(extra);
        const resources = [...owners].flatMap(([namespace, downstream]) =>
          downstream.state === 'ready'
            ? downstream.lists.resources.filter((resource) => !readDenied(extra, namespace, resource.uri)).map((resource) => ({ ...resource, uri: exposedResourceUri(owners, namespace, resource.uri) }))
            : [],
        );
        const page = pageOf('resources/list', resources, listRequest.params?.cursor);
        return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      });
      server.setRequestHandler(ListResourceTemplatesRequestSchema, async (listRequest, extra) => {
        await firstStarts(context);
        const owners = ownersFor(extra);
        const templates = [...owners].flatMap(([namespace, downstream]) =>
          downstream.state === 'ready'
            ? downstream.lists.resourceTemplates
                .filter((template) => !readDenied(extra, namespace, template.uriTemplate))
                .map((template) => ({ ...template, uriTemplate: exposedResourceUri(owners, namespace, template.uriTemplate) }))
            : [],
        );
        const page = pageOf('resources/templates/list', templates, listRequest.params?.cursor);
        return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      });
      server.setRequestHandler(ReadResourceRequestSchema, (readRequest, extra) => read(server, extra, readRequest.params.uri));
      server.setRequestHandler(SubscribeRequestSchema, async (subscribeRequest, extra) => {
        await subscribe(server, extra, subscribeRequest.params.uri);
        return {};
      });
      server.setRequestHandler(UnsubscribeRequestSchema, async (unsubscribeRequest, extra) => {
        const uri = unsubscribeRequest.params.uri;
        const resolved = resolveResource(ownersFor(extra), uri);
        subscriptions.unsubscribe(server, uri, resolved.kind === 'found' ? resolved : undefined);
        return {};
      });
    },
    closed(server) {
      subscriptions.closed(server);
    },
  };
};
