import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isToolEnabled, type ServerPolicyBase } from '../config/policy.js';
import type { AuditPolicy } from '../config/audit-policy.js';
import { qualify } from '../names.js';
import type { OutputLimits } from '../limits/index.js';
import { CallAuditor, errorMiddleware, limitMiddleware, validateMiddleware } from './chain.js';
import { callerOf, ConnectionApprovals, type CallState, type RiskAssessor } from './call-state.js';
import { compose } from './compose.js';
import { baseContext } from './context.js';
import { InFlightCalls } from './in-flight.js';
import { startProgress } from './progress.js';
import type { AnyToolDefinition } from './define-tool.js';
import { gateMiddleware, type GateMode } from './gate.js';
import { errorResult } from './results.js';
import { parseArguments } from './validate.js';
import { parentPrincipalOf, PrincipalRefused, principalOf } from './principal.js';
import { ToolError } from '../errors.js';
import { ApprovalDesk } from '../approvals/desk.js';
import type { HttpExtensions } from '../transport/http-extensions.js';

export interface ToolServerSpec<Caps> {
  /** The namespace, used in qualified names and audit lines (`fs`). */
  readonly namespace: string;
  readonly version: string;
  readonly instructions?: string;
  readonly tools: readonly AnyToolDefinition<Caps>[];
  readonly policy: ServerPolicyBase;
  readonly capabilities: Caps;
  readonly controlDir: string;
  readonly gate: GateMode;
  readonly audit: AuditPolicy;
  readonly limits: OutputLimits;
  /** Largest request the transports take (a server that accepts big content raises it). */
  readonly maxRequestBytes?: number;
  /** Runs when the server closes, after in-flight calls were aborted. */
  readonly onClose?: () => Promise<void>;
  /**
   * Per-call risk for tools whose risk depends on their arguments (a shell command): the gate uses
   * it instead of the declared tier, which stays the tier listed for a gateway in front. It must not
   * throw; when unsure it answers the declared tier or higher.
   */
  readonly assessRisk?: Readonly<Record<string, RiskAssessor>>;
  /**
   * Routes and bearer-token verification the server adds when it is served over HTTP, given the
   * way to run a call through this server's chain.
   */
  readonly http?: (call: DirectCall) => HttpExtensions;
}


/** 16 MiB: more than the SDK's 10 MiB, so a 10 MiB file in JSON still fits. */
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/** Who made a call that did not come over MCP (an HTTP API of the server's own). */
export interface DirectCallOrigin {
  /** Recorded in the audit log as the caller. */
  readonly caller: string;
  /** Who the caller authenticated as; tools see it as `ctx.principal`. */
  readonly principal?: string | undefined;
  readonly signal?: AbortSignal;
  /** The parameters of the route that carried the call (the ladder's `repo` from the URL); tools see them as `ctx.routeParams`. */
  readonly routeParams?: Readonly<Record<string, string>>;
}

export interface DirectCallOutcome {
  readonly result: CallToolResult;
  /** The ToolError code that ended the call (`denied`, `invalid_arguments`, `not_found`, …); absent on success. */
  readonly errorCode?: string;
}

/**
 * Runs one call through the same audit, validation, permission gate, error mapping and output
 * limits as tools/call. Nobody can be asked to confirm, so a call the gate would ask about is
 * refused.
 */
export type DirectCall = (name: string, args: unknown, origin: DirectCallOrigin) => Promise<DirectCallOutcome>;

export interface ToolServer {
  readonly namespace: string;
  /** Largest request the transports take; a larger one gets an error and the connection goes on. */
  readonly maxRequestBytes: number;
  /** The registered tools: a disabled tool is simply absent. */
  readonly toolNames: readonly string[];
  /** Sends an MCP log notification to every connected client (news that belongs to no call, such as a background task ending). */
  sendLog(level: LoggingLevel, data: unknown): Promise<void>;
  /**
   * Builds one SDK server for one client connection (HTTP has one per session). `opener` is the
   * bearer token's AuthInfo the connection was opened with: an HTTP session cannot change hands,
   * so every request on it carries the same one.
   */
  connect(transport: Transport, opener?: AuthInfo, shape?: ConnectionShape): Promise<Server>;
  /** What the server adds to its HTTP endpoint beside `/mcp`. */
  readonly http?: HttpExtensions;
  close(): Promise<void>;
}

/** What a transport tells a server about the connection it opens. */
export interface ConnectionShape {
  /**
   * The connection carries one client message and closes with its answer (stateless HTTP). The
   * server can then ask the client nothing (its reply would come on another request, perhaps to
   * another server), so an ask-tier call takes the path of a client without elicitation, and there
   * is no session whose approvals could be remembered.
   */
  readonly oneRequest?: boolean;
}

/** Where a Bulkhead server states a tool's risk tier and permission subject for a gateway in front. */
export const RISK_META = 'bulkhead/risk';
export const SUBJECT_META = 'bulkhead/subject';
/**
 * Set on a tool with a preview: a gateway in front gets it by calling the tool with `dry_run: true`
 * (which such a tool must accept and honour). Only a built-in server is believed.
 */
export const PREVIEW_META = 'bulkhead/preview';
export const PREVIEW_BY_DRY_RUN = 'dry_run';

/** Sends one MCP log notification to every connected client; one that went away mid-send does not fail the others. */
export async function broadcastLog(connections: Iterable<Server>, logger: string, level: LoggingLevel, data: unknown): Promise<void> {
  await Promise.allSettled([...connections].map((server) => server.sendLoggingMessage({ level, logger, data })));
}

/** A zod object as the JSON Schema MCP lists, without the dialect line. */
export function toJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...rest, type: 'object' } as Tool['inputSchema'];
}

/** The MCP side of a call that has no MCP client behind it: notifications go nowhere, requests fail. */
function detachedExtra(signal: AbortSignal): RequestHandlerExtra<ServerRequest, ServerNotification> {
  return {
    signal,
    requestId: 0,
    sendNotification: async () => undefined,
    sendRequest: async () => {
      throw new ToolError('this call did not come over MCP, so there is no client to ask', 'denied');
    },
  };
}

function describeTool(tool: AnyToolDefinition<unknown>): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input, 'input'),
    ...(tool.output ? { outputSchema: toJsonSchema(tool.output, 'output') as Tool['outputSchema'] } : {}),
    annotations: { title: tool.title, ...tool.annotations },
    _meta: { [RISK_META]: tool.risk, ...(tool.subjectArg ? { [SUBJECT_META]: tool.subjectArg } : {}), ...(tool.preview ? { [PREVIEW_META]: PREVIEW_BY_DRY_RUN } : {}) },
  };
}

/**
 * Builds a server from tool definitions: only enabled tools are registered, and every call runs
 * through audit → validation and permission gate → error mapping → output limit → tool.
 */
export function createToolServer<Caps>(spec: ToolServerSpec<Caps>): ToolServer {
  const tools = spec.tools.filter((tool) => isToolEnabled(spec.policy, tool.name));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listing = tools.map((tool) => describeTool(tool as AnyToolDefinition<unknown>));
  const auditor = new CallAuditor(spec.controlDir, spec.namespace, spec.audit);
  const inFlight = new InFlightCalls();
  const connections = new Set<Server>();
  // A server served alone holds the calls its clients cannot confirm; behind a gateway, the gateway does.
  const desk = spec.gate.kind === 'self' ? new ApprovalDesk(spec.controlDir, spec.namespace) : undefined;

  // Decided by the command line once: a `_meta` principal is anyone's word but the parent gateway's.
  const parentNamesCaller = spec.gate.kind === 'gateway' && spec.gate.parentNamesCaller === true;
  const contextOf = (state: CallState) => ({ ...spec.capabilities, ...baseContext(state, spec.namespace) });
  const chainFor = (tool: AnyToolDefinition<Caps>) =>
    compose<CallState>([
      auditor.middleware(),
      validateMiddleware((state) => parseArguments(tool.input, state.rawArgs, state.qualifiedName, { maxBytes: spec.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES })),
      gateMiddleware(spec.gate, { redactKeys: spec.audit.redact_keys, ...(desk ? { desk } : {}) }),
      errorMiddleware,
      limitMiddleware(spec.limits),
      async (state) => {
        const reply = await tool.run(state.args, contextOf(state));
        state.result = {
          content: reply.content,
          ...(reply.structuredContent !== undefined ? { structuredContent: reply.structuredContent as Record<string, unknown> } : {}),
        };
      },
    ]);
  const chains = new Map(tools.map((tool) => [tool.name, chainFor(tool)]));

  /** One call through its chain, whatever carried it; an unknown name is audited and reported, never run. */
  async function runCall(
    name: string,
    rawArgs: unknown,
    from: Pick<CallState, 'extra' | 'caller' | 'principal' | 'routeParams' | 'clientCanElicit' | 'unconfirmable' | 'sessionApprovals'>,
  ): Promise<DirectCallOutcome & { readonly unknownTool?: string }> {
    const tool = byName.get(name);
    if (!tool) {
      const message = `Unknown tool ${name}. Available tools: ${[...byName.keys()].join(', ') || 'none (this server is disabled by its policy)'}.`;
      auditor.recordRejected(qualify(spec.namespace, name), from.caller, rawArgs, message);
      return { result: errorResult(message), errorCode: 'not_found', unknownTool: message };
    }
    return inFlight.run(from.extra.signal, async (signal) => {
      // Started before the gate, so a call held for approval is kept alive as much as one running.
      const progress = startProgress(from.extra, tool.name, signal);
      const state: CallState = {
        ...from,
        ...(progress ? { progress } : {}),
        target: {
          risk: tool.risk,
          ...(tool.subjectArg ? { subjectArg: tool.subjectArg } : {}),
          ...(spec.assessRisk?.[tool.name] ? { assessRisk: spec.assessRisk[tool.name] } : {}),
          ...(tool.preview ? { preview: (args: Record<string, unknown>) => tool.preview!(args, contextOf(state)) } : {}),
        },
        qualifiedName: qualify(spec.namespace, tool.name),
        rawArgs,
        args: {},
        signal,
        decision: 'none',
      };
      try {
        await chains.get(tool.name)!(state);
      } finally {
        progress?.stop();
      }
      const result = state.result ?? errorResult(`${state.qualifiedName} returned nothing`);
      const errorCode = state.errorCode ?? (result.isError ? 'tool_error' : undefined);
      return { result, ...(errorCode !== undefined ? { errorCode } : {}) };
    });
  }

  const call: DirectCall = async (name, args, origin) => {
    const { unknownTool: _reported, ...outcome } = await runCall(name, args, {
      extra: detachedExtra(origin.signal ?? new AbortController().signal),
      caller: origin.caller,
      principal: origin.principal,
      ...(origin.routeParams ? { routeParams: origin.routeParams } : {}),
      clientCanElicit: () => false,
      unconfirmable: 'This call did not come over MCP, so nobody can be asked to confirm it',
    });
    return outcome;
  };

  async function connect(transport: Transport, _opener?: AuthInfo, shape: ConnectionShape = {}): Promise<Server> {
    const server = new Server(
      { name: `bulkhead-${spec.namespace}`, version: spec.version },
      { capabilities: { tools: { listChanged: false }, logging: {} }, ...(spec.instructions ? { instructions: spec.instructions } : {}) },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
    const approvals = new ConnectionApprovals();
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const client = callerOf(server.getClientVersion(), extra.sessionId);
      const named = parentNamesCaller && extra.authInfo === undefined ? parentPrincipalOf(request.params._meta) : {};
      if ('problem' in named) {
        auditor.recordRejected(qualify(spec.namespace, request.params.name), client, request.params.arguments ?? {}, named.problem);
        throw new PrincipalRefused(named.problem);
      }
      const principal = principalOf(extra.authInfo) ?? named.principal;
      const caller = extra.authInfo ? `${client}@${extra.authInfo.clientId}` : named.principal !== undefined ? `${client}@${named.principal}` : client;
      const outcome = await runCall(request.params.name, request.params.arguments ?? {}, {
        extra,
        caller,
        principal,
        clientCanElicit: () => !shape.oneRequest && Boolean(server.getClientCapabilities()?.elicitation),
        ...(shape.oneRequest ? {} : { sessionApprovals: approvals.for(extra.authInfo?.token) }),
      });
      if (outcome.unknownTool) throw new McpError(ErrorCode.InvalidParams, outcome.unknownTool);
      return outcome.result;
    });
    connections.add(server);
    server.onclose = () => connections.delete(server);
    await server.connect(transport);
    return server;
  }

  async function close(): Promise<void> {
    inFlight.abortAll(new Error('server is shutting down'));
    await Promise.allSettled([...connections].map((server) => server.close()));
    await spec.onClose?.();
  }

  const sendLog = (level: LoggingLevel, data: unknown) => broadcastLog(connections, `bulkhead-${spec.namespace}`, level, data);

  return { namespace: spec.namespace, maxRequestBytes: spec.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES, toolNames: tools.map((t) => t.name), sendLog, connect, ...(spec.http ? { http: spec.http(call) } : {}), close };
}
