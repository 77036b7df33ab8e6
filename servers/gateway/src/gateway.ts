import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  ApprovalDesk,
  broadcastLog,
  CallAuditor,
  callerOf,
  compose,
  ConnectionApprovals,
  errorMiddleware,
  errorResult,
  gateMiddleware,
  limitMiddleware,
  parseArguments,
  checkArgumentBounds,
  parseToolPattern,
  PREVIEW_BY_DRY_RUN,
  PREVIEW_META,
  toJsonSchema,
  validateMiddleware,
  type AuditPolicy,
  type CallState,
  type GateMode,
  type Middleware,
  type OutputLimits,
  type RiskAssessor,
  type ToolServer,
} from '@bulkhead/core';
import { relayedProgress } from './progress-relay.js';
import { protectedArgumentRefusal, RELAY_PROGRESS_EVERY_MS, startProgress, ToolError, untrustedErrorMessage, untrustedResult } from '@bulkhead/core';
import { Catalog, type CatalogEntry } from './catalog.js';
import type { HooksConfig } from './config/hooks.js';
import { Hooks } from './hooks.js';
import { GATEWAY_CONFIG_FILE, type GatewayConfig, type ToolPolicy } from './config/schema.js';
import { MAX_CHILD_MESSAGE_BYTES } from './downstream/child-transport.js';
import { DEFAULT_REPLY_LIMITS, DEFAULT_START_LIMITS, Downstream, type DownstreamSpec, type RestartPolicy } from './downstream/downstream.js';
import { callTool } from './meta/call_tool.js';
import { listTools } from './meta/list_tools.js';
import { loadTools } from './meta/load_tools.js';
import type { MetaContext, MetaTool } from './meta/meta-tool.js';
import { toolSearch } from './meta/tool_search.js';
import { unloadTools } from './meta/unload_tools.js';
import { PinStore } from './pins.js';
import { bareMessage } from './relay/protocol-error.js';
import type { UpstreamExtra } from './relay/context.js';
import { InFlightCalls } from './relay/in-flight.js';
import { createRelays, relayCapabilities } from './relay/index.js';
import { taskOnlyRefusal } from './relay/tasks.js';
import { resourceLinksMiddleware } from './relay/resource-links.js';
import { relayedCallMeta } from './relay/identity.js';
import { reviewQuarantined } from './review.js';
import { describeQuarantine, treatmentOf } from './treatment.js';
import { LoadedTools } from './session.js';
import { ArgumentValidator } from './validator.js';

export const GATEWAY_NAMESPACE = 'gateway';

/** bulkhead.yaml's `restart` in the supervisor's terms. */
function restartPolicyOf(config: GatewayConfig): RestartPolicy {
  const { budget, initial_delay_ms, max_delay_ms, stable_ms } = config.restart;
  return { budget, initialDelayMs: initial_delay_ms, maxDelayMs: max_delay_ms, stableMs: stable_ms };
}
export const metaTools: readonly MetaTool[] = [toolSearch, callTool, listTools, loadTools, unloadTools];

export interface GatewayOptions {
  readonly controlDir: string;
  /** The --root folders, absolute: what the gateway answers its servers' roots/list with. */
  readonly roots?: readonly string[];
  readonly downstreams: readonly DownstreamSpec[];
  readonly builtins: ReadonlySet<string>;
  readonly config: GatewayConfig;
  readonly toolPolicy: ToolPolicy;
  /** What a caller without a token profile (stdio, or the default token) may use. */
  readonly access: Access;
  /** Over HTTP: the access of each bearer token's profile, by the token's label. */
  readonly accessByToken?: ReadonlyMap<string, Access>;
  /** Over HTTP: who presents each bearer token that names a principal (bulkhead.yaml `tokens[i].principal`), by the token's label. */
  readonly principalByToken?: ReadonlyMap<string, string>;
  readonly audit: AuditPolicy;
  readonly limits: OutputLimits;
  readonly restartPolicy?: RestartPolicy;
  readonly hooks?: HooksConfig;
  /** Where hook commands run (the first root). */
  readonly hookCwd?: string;
  /** Per-call risk of built-in tools whose risk depends on their arguments, by qualified name (shell:run_shell). */
  readonly riskAssessors?: ReadonlyMap<string, RiskAssessor>;
  /** Told of every downstream that comes up, fails or is given up on, in words (the CLI writes it to stderr). */
  readonly report?: (line: string) => void;
}

/** What one caller may see and do: a profile's view and the permission gate narrowed for it. */
export interface Access {
  readonly gate: GateMode;
  /** Narrows what is exposed (a profile); never widens the permission policy. */
  readonly visibleTo?: (entry: CatalogEntry) => boolean;
  /** Whether the profile sees a server at all: its resources, prompts and completions (a profile's `tools` narrows tools only). */
  readonly namespaceVisible?: (namespace: string) => boolean;
}

export interface Gateway extends ToolServer {
  readonly catalog: Catalog;
  /** Whether a tool is exposed to a caller with the default access (stdio, or the --token-file token). */
  readonly visible: (entry: CatalogEntry) => boolean;
  /** The meta tools listed in this mode. */
  readonly metaToolNames: readonly string[];
  readonly downstreams: ReadonlyMap<string, Downstream>;
  /** Starts every downstream in the background: nothing waits for a slow one. */
  start(): void;
  /** Settles when every downstream's first attempt to start has succeeded or failed. */
  settled(): Promise<void>;
  /** Why some tools are missing or incomplete, one line per downstream: still starting, did not start, capped. */
  downstreamNotes(): string[];
  /** Tools left out of the catalog (invalid or colliding names) or quarantined (changed, suspicious or new definitions), one line each. */
  catalogNotes(): string[];
}

/** A meta call carries the context its tool runs with, so each meta tool's chain is composed once. */
interface MetaCallState extends CallState {
  readonly ctx: MetaContext;
}

function metaDescription(tool: MetaTool): Tool {
  return { name: tool.name, title: tool.title, description: tool.description, inputSchema: toJsonSchema(tool.input, 'input'), annotations: { title: tool.title, ...tool.annotations } };
}

/**
 * The gateway: one MCP server over many downstream servers. Core tools and meta tools are always
 * listed; every other tool is found with tool_search and used through call_tool or load_tools.
 * Every downstream call is validated, put through the permission gate and audited here.
 */
export function createGateway(options: GatewayOptions): Gateway {
  const pins = new PinStore(options.controlDir);
  const catalog = new Catalog(pins, options.downstreams, {
    quarantineSuspicious: options.config.quarantine_suspicious,
    approveNewTools: options.config.approve_new_tools,
    gatewayTools: metaTools.map((tool) => tool.name),
  });
  const auditor = new CallAuditor(options.controlDir, GATEWAY_NAMESPACE, options.audit);
  const desk = new ApprovalDesk(options.controlDir, GATEWAY_NAMESPACE);
  const validator = new ArgumentValidator();
  const hooks = new Hooks(options.hooks ?? { pre_tool: [], post_tool: [] }, options.hookCwd ?? process.cwd(), auditor);
  const corePatterns = options.toolPolicy.core_tools.map(parseToolPattern);
  const sessions = new Set<Server>();
  const startLimits = { ...DEFAULT_START_LIMITS, timeoutMs: options.config.start_timeout_ms, maxTools: options.config.max_tools_per_server };
  const downstreams = new Map(
    options.downstreams.map((spec) => [
      spec.namespace,
      new Downstream(spec, options.restartPolicy ?? restartPolicyOf(options.config), { ...startLimits, timeoutMs: spec.startTimeoutMs ?? startLimits.timeoutMs }, { ...DEFAULT_REPLY_LIMITS, firstByteMs: options.config.call_timeout_ms }),
    ]),
  );
  let started = false;
  const settled = async () => {
    await Promise.all([...downstreams.values()].map((downstream) => downstream.firstAttempt));
  };
  /**
   * Bounded wait for servers on their first start, so that a client's first look sees them: Claude
   * Desktop never re-lists after list_changed, so a core tool missing from its first tools/list
   * would stay missing. One that is slower than this appears later, with list_changed.
   */
  const firstStarts = async () => {
    const starting = [...downstreams.values()].filter((downstream) => downstream.firstStarting);
    if (!started || starting.length === 0 || options.config.list_wait_ms === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(starting.map((downstream) => downstream.firstAttempt)), new Promise((resolve) => (timer = setTimeout(resolve, options.config.list_wait_ms)))]);
    clearTimeout(timer);
  };
  const downstreamNotes = (): string[] =>
    [...downstreams.values()].flatMap((downstream) => {
      const reason = downstream.unavailableReason;
      if (reason) return [reason];
      return downstream.listWarning ? [`${downstream.namespace}: ${downstream.listWarning}`] : [];
    });
  /** The downstream a tool name belongs to, in either form, if the gateway runs it. */
  const downstreamOf = (name: string): Downstream | undefined => {
    const separator = /__|:/.exec(name);
    return separator ? downstreams.get(name.slice(0, separator.index)) : undefined;
  };

  /** Discovery never grants permission: a tool denied outright is not found, listed or loadable. */
  const isVisible = (access: Access, entry: CatalogEntry): boolean => {
    if (access.visibleTo && !access.visibleTo(entry)) return false;
    if (access.gate.kind !== 'self') return true;
    // A tool whose risk depends on its arguments (run_shell) is found when its least risky call would be allowed.
    const risk = options.riskAssessors?.has(entry.qualified) ? 'low' : entry.risk;
    return access.gate.permissions.decide({ qualifiedName: entry.qualified, risk, args: {} }).verdict !== 'deny';
  };
  // Visibility depends on the access and the entry only (profiles and permissions are loaded once;
  // a catalog rebuild makes new entries), so each answer is kept instead of deciding on every call.
  const visibility = new Map<Access, (entry: CatalogEntry) => boolean>();
  const visibleUnder = (access: Access): ((entry: CatalogEntry) => boolean) => {
    let visible = visibility.get(access);
    if (!visible) {
      const known = new WeakMap<CatalogEntry, boolean>();
      visible = (entry) => {
        let answer = known.get(entry);
        if (answer === undefined) known.set(entry, (answer = isVisible(access, entry)));
        return answer;
      };
      visibility.set(access, visible);
    }
    return visible;
  };
  const accessOf = (label: string | undefined): Access => (label !== undefined ? options.accessByToken?.get(label) : undefined) ?? options.access;
  /** The principal of the token a request came with; none over stdio or for a token that names none. */
  const principalOfRequest = (extra: UpstreamExtra): string | undefined => (extra.authInfo ? options.principalByToken?.get(extra.authInfo.token) : undefined);
  const callerOfRequest = (server: Server, extra: UpstreamExtra): string => {
    const who = principalOfRequest(extra) ?? extra.authInfo?.clientId;
    return `${callerOf(server.getClientVersion(), extra.sessionId)}${who ? `@${who}` : ''}`;
  };
  const calls = new InFlightCalls();
  const connectionAccess = new WeakMap<Server, Access>();
  const relays = createRelays({
    controlDir: options.controlDir,
    roots: options.roots ?? [],
    config: options.config,
    audit: options.audit,
    limits: options.limits,
    downstreams,
    builtins: options.builtins,
    catalog,
    pins,
    auditor,
    sessions,
    calls,
    accessOf: (extra) => accessOf(extra.authInfo?.clientId),
    accessOfConnection: (server) => connectionAccess.get(server) ?? options.access,
    callerOf: callerOfRequest,
    report: (line) => options.report?.(line),
  });
  const isCore = (entry: CatalogEntry) => corePatterns.some((pattern) => !pattern.argument && pattern.matchesName(entry.qualified));
  const stableMode = options.toolPolicy.mode === 'stable';

  const notifyAll = async () => {
    await Promise.allSettled([...sessions].map((server) => server.sendToolListChanged()));
  };

  const awaitTool = async (name: string) => {
    const owner = downstreamOf(name);
    if (started && owner?.firstStarting) await owner.firstAttempt;
  };
  const describeState = (downstream: Downstream): string | undefined => {
    switch (downstream.state) {
      case 'ready':
        return `${downstream.namespace} is up (${downstream.toolSummary})${downstream.timesReady > 1 ? ' again' : ''}${downstream.listWarning ? `; ${downstream.listWarning}` : ''}`;
      case 'restarting':
      case 'failed':
        return downstream.unavailableReason;
      default:
        return undefined;
    }
  };
  const catalogNotes = (): string[] => [
    ...catalog.invalidNames().map((name) => `${name} is left out: tool names may hold only letters, digits, _ and - (at most 64)`),
    ...catalog.collisions(),
    ...catalog.quarantinedTools().map(describeQuarantine),
  ];
  const reportedNotes = new Set<string>();
  for (const downstream of downstreams.values()) {
    downstream.onToolsChanged = () => {
      catalog.update(downstream.namespace, downstream.tools, options.builtins.has(downstream.namespace));
      for (const note of catalogNotes().filter((line) => !reportedNotes.has(line))) {
        reportedNotes.add(note);
        options.report?.(note);
      }
      void notifyAll();
    };
    downstream.onStateChanged = () => {
      const line = describeState(downstream);
      if (line) options.report?.(line);
    };
  }

  /**
   * The default deny of the protected set on a third-party tool's path-like arguments, after the
   * pre_tool hooks (it checks the arguments that will be sent) and before the gate; undefined for
   * a server trusted with paths.
   */
  const protectedPathsMiddleware = (entry: CatalogEntry, gate: GateMode, downstream: Downstream): Middleware<CallState> | undefined => {
    if (downstream.spec.trust.has('paths')) return undefined;
    const check = {
      qualifiedName: entry.qualified,
      inputSchema: entry.tool.inputSchema,
      controlDir: options.controlDir,
      trustFile: join(options.controlDir, GATEWAY_CONFIG_FILE),
      ...(gate.kind === 'self' ? { permissions: gate.permissions } : {}),
      ...(downstream.spec.kind === 'stdio' ? { cwd: downstream.spec.child.cwd } : {}),
    };
    return async (state, next) => {
      const refusal = protectedArgumentRefusal({ ...check, args: state.args });
      if (refusal !== undefined) {
        state.decision = 'deny';
        throw new ToolError(refusal, 'denied');
      }
      return next();
    };
  };
  /**
   * A third-party result as data, unless the server is trusted with results. It sits inside the
   * output limit, so the limit bounds what the client gets, wrapper and all (head and tail keep
   * both tags), and outside the post_tool hooks, so they see what the server returned.
   */
  const untrustedResultsMiddleware = (entry: CatalogEntry, downstream: Downstream): Middleware<CallState> | undefined => {
    if (downstream.spec.trust.has('results')) return undefined;
    const source = `${entry.namespace} (third-party MCP server)`;
    return async (state, next) => {
      try {
        await next();
      } catch (error) {
        // A JSON-RPC error's message is the server's text as much as a result is.
        if (error instanceof McpError && !state.signal.aborted) {
          // The client's own prefix (`MCP error -32603: `) is said outside the wrapper: it is not the server's text.
          throw new ToolError(`${entry.qualified} failed with JSON-RPC error ${error.code}:\n${untrustedErrorMessage(source, bareMessage(error))}`, 'downstream_error');
        }
        throw error;
      }
      if (state.result) state.result = untrustedResult(source, state.result);
    };
  };

  const composeDownstreamChain = (entry: CatalogEntry, gate: GateMode) => {
    const downstream = downstreams.get(entry.namespace)!;
    const validate = (state: CallState) => {
      // Depth and size first: a downstream JSON Schema walk recurses like zod does.
      checkArgumentBounds(state.rawArgs, entry.qualified, { maxBytes: MAX_CHILD_MESSAGE_BYTES });
      return validator.validate(entry.qualified, entry.tool, state.rawArgs);
    };
    const taskOnly = taskOnlyRefusal(entry.tool, entry.qualified);
    const steps: (Middleware<CallState> | undefined)[] = [
      auditor.middleware(),
      validateMiddleware(validate),
      // Before the hooks and the gate: a human is not asked about a call that cannot run here.
      taskOnly !== undefined
        ? async () => {
            throw new ToolError(taskOnly, 'unsupported');
          }
        : undefined,
      hooks.preToolMiddleware(entry.qualified, validate),
      protectedPathsMiddleware(entry, gate, downstream),
      gateMiddleware(gate, { redactKeys: options.audit.redact_keys, desk }),
      errorMiddleware,
      limitMiddleware(options.limits),
      untrustedResultsMiddleware(entry, downstream),
      resourceLinksMiddleware(entry.namespace, downstreams),
      hooks.postToolMiddleware(entry.qualified),
      async (state) => {
        const progress = state.progress;
        const meta = relayedCallMeta(downstream.spec, state.principal);
        state.result = await downstream.callTool(entry.tool.name, state.args, {
          signal: state.signal,
          timeoutMs: options.config.call_timeout_ms,
          ...(meta ? { meta } : {}),
          // Renumbered on the client's request's own counter, which the approval desk's progress already advanced.
          ...(progress ? { onprogress: (update) => progress.report(relayedProgress(entry.qualified, update)) } : {}),
        });
      },
    ];
    return compose(steps.filter((step) => step !== undefined));
  };

  // One chain per tool and gate, composed on first use: composing it for every call was all allocation.
  const downstreamChains = new WeakMap<CatalogEntry, Map<GateMode, (state: CallState) => Promise<void>>>();
  const downstreamChain = (entry: CatalogEntry, gate: GateMode) => {
    let byGate = downstreamChains.get(entry);
    if (!byGate) downstreamChains.set(entry, (byGate = new Map()));
    let chain = byGate.get(gate);
    if (!chain) byGate.set(gate, (chain = composeDownstreamChain(entry, gate)));
    return chain;
  };

  /** A built-in's preview is its dry run; a third-party tool's claim to have one is not believed (its "dry run" might run). */
  const dryRunPreview = (entry: CatalogEntry, signal: AbortSignal, principal: string | undefined) =>
    options.builtins.has(entry.namespace) && entry.tool._meta?.[PREVIEW_META] === PREVIEW_BY_DRY_RUN
      ? async (args: Record<string, unknown>) => {
          const downstream = downstreams.get(entry.namespace)!;
          const meta = relayedCallMeta(downstream.spec, principal);
          const result = await downstream.callTool(entry.tool.name, { ...args, dry_run: true }, { signal, timeoutMs: options.config.call_timeout_ms, ...(meta ? { meta } : {}) });
          const text = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
          if (result.isError) throw new Error(text);
          return text;
        }
      : undefined;

  const callDownstream = async (
    entry: CatalogEntry,
    args: unknown,
    call: Pick<CallState, 'extra' | 'signal' | 'caller' | 'principal' | 'clientCanElicit' | 'sessionApprovals'> & { readonly server: Server },
    gate: GateMode,
  ): Promise<CallToolResult> => {
    const preview = dryRunPreview(entry, call.signal, call.principal);
    // One counter per client request, whoever speaks (the desk while the call waits, then the server); and a heartbeat while both are silent.
    const progress = startProgress(call.extra, entry.qualified, call.signal, RELAY_PROGRESS_EVERY_MS);
    const state: CallState = {
      ...(progress ? { progress } : {}),
      target: {
        risk: entry.risk,
        ...(entry.subjectArg ? { subjectArg: entry.subjectArg } : {}),
        ...(options.riskAssessors?.has(entry.qualified) ? { assessRisk: options.riskAssessors.get(entry.qualified)! } : {}),
        ...(preview ? { preview } : {}),
      },
      qualifiedName: entry.qualified,
      rawArgs: args ?? {},
      args: {},
      extra: call.extra,
      signal: call.signal,
      caller: call.caller,
      // The token's principal, never one a client named: approvals are held for it, built-ins act as it.
      principal: call.principal,
      clientCanElicit: call.clientCanElicit,
      ...(call.sessionApprovals ? { sessionApprovals: call.sessionApprovals } : {}),
      decision: 'none',
    };
    catalog.commitPins();
    try {
      await calls.track(entry.namespace, { server: call.server, extra: call.extra, caller: call.caller, qualifiedName: entry.qualified }, () => downstreamChain(entry, gate)(state));
    } finally {
      progress?.stop();
    }
    return state.result ?? errorResult(`${entry.qualified} returned nothing`);
  };

  const metaChains = new Map(
    metaTools.map((tool) => [
      tool,
      compose<MetaCallState>([
        auditor.middleware(),
        validateMiddleware((state) => parseArguments(tool.input, state.rawArgs, state.qualifiedName, { maxBytes: MAX_CHILD_MESSAGE_BYTES })),
        errorMiddleware,
        async (state) => {
          state.decision = 'meta';
          state.result = await tool.run(state.args, state.ctx);
        },
      ]),
    ]),
  );

  async function connect(transport: Transport, opener?: AuthInfo): Promise<Server> {
    const session = new LoadedTools(options.toolPolicy.max_active);
    const approvals = new ConnectionApprovals();
    const server = new Server(
      { name: 'bulkhead-gateway', version: '0.1.0' },
      {
        capabilities: { tools: { listChanged: true }, logging: {}, ...relayCapabilities(relays) },
        instructions: 'Bulkhead gateway. A few tools are always available; find the others with tool_search and call them with call_tool.',
      },
    );
    const listChanged = async () => {
      if (!stableMode) await server.sendToolListChanged();
    };
    const exposedMeta = metaTools.filter((tool) => !stableMode || tool.stable);
    for (const relay of relays) relay.install(server);

    server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
      await firstStarts();
      const visible = visibleUnder(accessOf(extra.authInfo?.clientId));
      const proxied = catalog.entries().filter((entry) => visible(entry) && (isCore(entry) || (!stableMode && session.has(entry.qualified))));
      return { tools: [...proxied.map((entry) => ({ ...entry.tool, name: entry.wire })), ...exposedMeta.map(metaDescription)] };
    });

    // A call's signal is the SDK's own for the request: closing the session (and so the gateway) aborts it.
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => handleCall(request, extra));

    const handleCall = async (request: CallToolRequest, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> => {
      const access = accessOf(extra.authInfo?.clientId);
      const visible = visibleUnder(access);
      const call = {
        extra,
        signal: extra.signal,
        server,
        caller: callerOfRequest(server, extra),
        principal: principalOfRequest(extra),
        clientCanElicit: () => Boolean(server.getClientCapabilities()?.elicitation),
        // Reaches call_tool's calls too: its context's state is this object.
        sessionApprovals: approvals.for(extra.authInfo?.token),
      };
      const name = request.params.name;
      const meta = exposedMeta.find((tool) => tool.name === name);
      if (meta) {
        const ctx: MetaContext = {
          catalog,
          session,
          mode: options.toolPolicy.mode,
          visible,
          treatment: (entry) => treatmentOf(entry, access.gate),
          callDownstream: (entry, args, state) => {
            metaState.delegated = true;
            // The principal is the connection's, whatever the meta tool hands on.
            return callDownstream(entry, args, { ...state, principal: call.principal, server }, access.gate);
          },
          listChanged,
          firstStarts,
          downstreamNotes,
          awaitTool,
          unavailableFor: (toolName) => downstreamOf(toolName)?.unavailableReason,
          reviewQuarantined: (toolName) => reviewQuarantined({ name: toolName, catalog, pins, auditor, call, visible }),
          state: call,
        };
        const metaState: MetaCallState = { ...call, target: { risk: 'low' }, qualifiedName: `${GATEWAY_NAMESPACE}:${name}`, rawArgs: request.params.arguments ?? {}, args: {}, decision: 'none', ctx };
        await metaChains.get(meta)!(metaState);
        return metaState.result ?? errorResult(`${name} returned nothing`);
      }
      const owner = downstreamOf(name);
      await awaitTool(name);
      const entry = catalog.get(name);
      const bound = entry && visible(entry) && (isCore(entry) || (!stableMode && session.has(entry.qualified)));
      if (!entry || !bound) {
        const unavailable = owner?.unavailableReason;
        const message = entry && visible(entry)
          ? `Tool ${name} is not loaded; call load_tools {"names": ["${name}"]} first, or call_tool {"name": "${name}", ...}`
          : `Unknown tool ${name}; ${unavailable ? `${unavailable}; ` : ''}use tool_search to find tools`;
        auditor.recordRejected(name, call.caller, request.params.arguments ?? {}, message);
        throw new McpError(ErrorCode.InvalidParams, message);
      }
      session.touch(entry.qualified);
      return callDownstream(entry, request.params.arguments ?? {}, call, access.gate);
    };
    sessions.add(server);
    connectionAccess.set(server, accessOf(opener?.clientId));
    server.onclose = () => {
      sessions.delete(server);
      for (const relay of relays) relay.closed?.(server);
    };
    await server.connect(transport);
    return server;
  }

  return {
    namespace: GATEWAY_NAMESPACE,
    // As much as it reads from a child: a large write passes through to fs_write whole.
    maxRequestBytes: MAX_CHILD_MESSAGE_BYTES,
    catalog,
    downstreams,
    visible: visibleUnder(options.access),
    metaToolNames: metaTools.filter((tool) => !stableMode || tool.stable).map((tool) => tool.name),
    sendLog: (level, data) => broadcastLog(sessions, 'bulkhead-gateway', level, data),
    get toolNames() {
      const visible = visibleUnder(options.access);
      return [...catalog.entries().filter((entry) => visible(entry) && isCore(entry)).map((entry) => entry.wire), ...this.metaToolNames];
    },
    start: () => {
      if (started) return;
      started = true;
      for (const downstream of downstreams.values()) void downstream.start();
    },
    settled,
    downstreamNotes,
    catalogNotes,
    connect,
    close: async () => {
      await Promise.allSettled([...sessions].map((server) => server.close()));
      await Promise.allSettled([...downstreams.values()].map((downstream) => downstream.stop()));
    },
  };
}
