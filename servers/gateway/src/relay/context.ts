import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerCapabilities, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AuditPolicy, CallAuditor, OutputLimits } from '@bulkhead/core';
import type { Catalog } from '../catalog.js';
import type { GatewayConfig } from '../config/schema.js';
import type { Downstream } from '../downstream/downstream.js';
import type { Access } from '../gateway.js';
import type { PinStore } from '../pins.js';
import type { InFlightCalls } from './in-flight.js';

/** What the SDK hands a request handler of the gateway's own server (one client connection). */
export type UpstreamExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every relay of a part of MCP besides tools works with; built once per gateway. */
export interface RelayContext {
  readonly controlDir: string;
  /** The gateway's --root folders, absolute. */
  readonly roots: readonly string[];
  readonly config: GatewayConfig;
  readonly audit: AuditPolicy;
  /** The caps of what the gateway passes on to a client in one reply. */
  readonly limits: OutputLimits;
  readonly downstreams: ReadonlyMap<string, Downstream>;
  /** Namespaces of the compartments Bulkhead ships. */
  readonly builtins: ReadonlySet<string>;
  readonly catalog: Catalog;
  readonly pins: PinStore;
  /** The gateway's own audit log (namespace `gateway`). */
  readonly auditor: CallAuditor;
  /** Every client connection that is open. */
  readonly sessions: ReadonlySet<Server>;
  /** The tool calls under way, by downstream, so that a server's request reaches the client whose call it serves. */
  readonly calls: InFlightCalls;
  /** The access (profile and permission gate) of the client that sent a request. */
  readonly accessOf: (extra: UpstreamExtra) => Access;
  /** The access of a connection, from the token it was opened with (news that belongs to no request goes by it). */
  readonly accessOfConnection: (server: Server) => Access;
  /** The audit log's caller of a request: client name and version, session, token label. */
  readonly callerOf: (server: Server, extra: UpstreamExtra) => string;
  /** News for the user (the CLI writes it to stderr). */
  readonly report: (line: string) => void;
}

/** One part of MCP relayed between the gateway's clients and its servers. */
export interface Relay {
  /** What the gateway advertises for it in initialize. */
  readonly capabilities: ServerCapabilities;
  /** Once per client connection: registers its request and notification handlers. */
  install(server: Server): void;
  /** When that client connection closed: what it held (subscriptions) is let go. */
  closed?(server: Server): void;
}

export type RelayFactory = (context: RelayContext) => Relay;
