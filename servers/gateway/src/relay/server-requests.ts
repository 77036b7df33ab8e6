import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '@bulkhead/core';
import type { Downstream, ServerRequestHandlers } from '../downstream/downstream.js';
import type { RelayContext, RelayFactory, UpstreamExtra } from './context.js';
import { relayElicitation } from './elicitation.js';
import { answerRoots, installRoots } from './roots.js';
import { relaySampling } from './sampling.js';
import { ProtocolError } from './protocol-error.js';

/** The client connection a server's request goes to, with the request context to send it with. */
export interface Route {
  readonly server: Server;
  readonly extra: UpstreamExtra;
  /** The audit log's caller. */
  readonly caller: string;
}

/**
 * A request context for a connection outside any of its requests: what it sends goes on the
 * connection's own channel (stdio, or the standalone stream of a Streamable HTTP session).
 */
export function connectionExtra(server: Server, signal: AbortSignal): UpstreamExtra {
  return {
    signal,
    requestId: 0,
    ...(server.transport?.sessionId !== undefined ? { sessionId: server.transport.sessionId } : {}),
    sendNotification: (notification) => server.notification(notification),
    sendRequest: (request, schema, options) => server.request(request, schema, options),
  };
}

/**
 * Whose client a server's request is for. It carries nothing that names the call it serves, so it
 * goes to the connection whose tool call is under way on that server; calls of several
 * connections cannot be told apart, so that is refused. With no call under way, only a single open
 * stdio connection is the obvious one: Streamable HTTP sessions come and go, each under its own
 * token, and the one open at the moment is not thereby the client the request is for. Returns undefined when no connection
 * is the one (the caller then answers for the gateway or refuses); throws when it cannot tell.
 */
export function routeOf(context: RelayContext, downstream: Downstream, method: string, signal: AbortSignal): Route | undefined {
  const calls = context.calls.of(downstream.namespace);
  const connections = new Set(calls.map((call) => call.server));
  if (connections.size > 1)
    throw new ProtocolError(
      ErrorCode.InvalidRequest,
      `${method} from ${downstream.namespace} was refused: tool calls of ${connections.size} client connections are under way on ${downstream.namespace}, and the request does not say which one it serves. Try again when only one client is calling ${downstream.namespace}.`,
    );
  const call = calls[0];
  if (call) return { server: call.server, extra: call.extra, caller: call.caller };
  if (context.sessions.size !== 1) return undefined;
  const [server] = [...context.sessions] as [Server];
  if (server.transport?.sessionId !== undefined) return undefined;
  const extra = connectionExtra(server, signal);
  return { server, extra, caller: context.callerOf(server, extra) };
}

/**
 * The route of a request the permission gate decides (elicitation, sampling), or the refusal when
 * there is none, audited as `<ns>:<method>` like the gate's own refusals (no client was chosen,
 * so the caller is `none`).
 */
export function gatedRouteOf(context: RelayContext, downstream: Downstream, method: 'elicitation/create' | 'sampling/createMessage', signal: AbortSignal, args: Record<string, unknown>, noRoute: string): Route {
  try {
    const route = routeOf(context, downstream, method, signal);
    if (!route) throw new ProtocolError(ErrorCode.InvalidRequest, noRoute);
    return route;
  } catch (error) {
    context.auditor.recordRejected(`${downstream.namespace}:${method}`, 'none', args, errorMessage(error));
    throw error;
  }
}

/** The name a client gave in initialize, for messages about it. */
export function clientName(server: Server): string {
  const version = server.getClientVersion();
  return version ? `the client (${version.name})` : 'the client';
}

/** How the gateway answers its servers' requests to their client: roots, elicitation and sampling, each routed here. */
export const serverRequestsRelay: RelayFactory = (context) => {
  const handlers: ServerRequestHandlers = {
    roots: (downstream) => answerRoots(context, downstream),
    elicit: (downstream, request, signal) => relayElicitation(context, downstream, request, signal),
    sample: (downstream, request, signal) => relaySampling(context, downstream, request, signal),
  };
  for (const downstream of context.downstreams.values()) downstream.requestHandlers = handlers;
  return { capabilities: {}, install: (server) => installRoots(context, server) };
};
