import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isToolEnabled, type ServerPolicyBase } from '../config/policy.js';
import { AuditLog } from '../audit/log.js';
import { issueReceipt, loadReceiptKey } from '../audit/receipts.js';
import { redactArguments } from '../audit/redact.js';
import { auditFile, receiptKeyFile } from '../audit/layout.js';
import type { AuditPolicy } from '../config/audit-policy.js';
import { errorMessage, ToolError } from '../errors.js';
import { qualify } from '../names.js';
import { truncateHeadTail } from '../limits/truncate.js';
import type { OutputLimits } from '../limits/index.js';
import type { CallState } from './call-state.js';
import { compose, type Middleware } from './compose.js';
import type { AnyToolDefinition } from './define-tool.js';
import { gateMiddleware, type GateMode } from './gate.js';
import { errorResult, resultBytes } from './results.js';
import { parseArguments } from './validate.js';

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
  /** Runs when the server closes, after in-flight calls were aborted. */
  readonly onClose?: () => Promise<void>;
}

export interface ToolServer {
  readonly namespace: string;
  /** The registered tools: a disabled tool is simply absent. */
  readonly toolNames: readonly string[];
  /** Builds one SDK server for one client connection (HTTP has one per session). */
  connect(transport: Transport): Promise<Server>;
  close(): Promise<void>;
}

function toJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...rest, type: 'object' } as Tool['inputSchema'];
}

function describeTool(tool: AnyToolDefinition<unknown>): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input, 'input'),
    ...(tool.output ? { outputSchema: toJsonSchema(tool.output, 'output') as Tool['outputSchema'] } : {}),
    annotations: { title: tool.title, ...tool.annotations },
  };
}

function limitMiddleware(limits: OutputLimits): Middleware<CallState> {
  return async (state, next) => {
    await next();
    if (!state.result || limits.maxOutputBytes <= 0) return;
    state.result = {
      ...state.result,
      content: state.result.content.map((block) =>
        block.type === 'text' ? { ...block, text: truncateHeadTail(block.text, limits.maxOutputBytes).text } : block,
      ),
    };
  };
}

const errorMiddleware: Middleware<CallState> = async (state, next) => {
  try {
    await next();
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (state.signal.aborted) throw error;
    throw new ToolError(`${state.qualifiedName} failed unexpectedly: ${errorMessage(error)}`, 'internal');
  }
};

/**
 * Builds a server from tool definitions: only enabled tools are registered, and every call runs
 * through audit → validation and permission gate → error mapping → output limit → tool.
 */
export function createToolServer<Caps>(spec: ToolServerSpec<Caps>): ToolServer {
  const tools = spec.tools.filter((tool) => isToolEnabled(spec.policy, tool.name));
  const byName = new Map(tools.map((tool) => [tool.name, tool as AnyToolDefinition<unknown>]));
  const listing = tools.map((tool) => describeTool(tool as AnyToolDefinition<unknown>));
  const auditLog = spec.audit.enabled ? new AuditLog(auditFile(spec.controlDir, spec.namespace)) : undefined;
  const receiptKey = spec.audit.enabled && spec.audit.receipts ? loadReceiptKey(receiptKeyFile(spec.controlDir)) : undefined;
  const shutdown = new AbortController();
  const connections = new Set<Server>();

  const auditMiddleware: Middleware<CallState> = async (state, next) => {
    const started = performance.now();
    let outcome: 'ok' | 'error' | 'denied' | 'cancelled' = 'ok';
    let error: string | undefined;
    try {
      await next();
      if (state.result?.isError) outcome = 'error';
    } catch (thrown) {
      if (state.signal.aborted) {
        outcome = 'cancelled';
        error = 'cancelled';
        state.result = errorResult(`${state.qualifiedName} was cancelled before it finished`);
      } else {
        const message = errorMessage(thrown);
        outcome = thrown instanceof ToolError && thrown.code === 'denied' ? 'denied' : 'error';
        error = message;
        state.result = errorResult(message);
      }
    }
    const result = state.result ?? errorResult(`${state.qualifiedName} returned nothing`);
    if (!auditLog) return;
    const entry = auditLog.append({
      server: spec.namespace,
      tool: state.qualifiedName,
      caller: state.caller,
      args: redactArguments(state.rawArgs, spec.audit.redact_keys),
      decision: state.decision,
      outcome,
      ...(error ? { error: error.slice(0, 500) } : {}),
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      bytes_out: resultBytes(result),
    });
    if (receiptKey && outcome === 'ok') {
      state.result = { ...result, _meta: { ...result._meta, 'bulkhead/receipt': issueReceipt(receiptKey, entry) } };
    }
  };

  const validateMiddleware: Middleware<CallState> = async (state, next) => {
    state.args = parseArguments(state.tool.input, state.rawArgs, state.qualifiedName);
    return next();
  };

  const chain = compose<CallState>([
    auditMiddleware,
    validateMiddleware,
    gateMiddleware(spec.gate),
    errorMiddleware,
    limitMiddleware(spec.limits),
    async (state) => {
      const reply = await state.tool.run(state.args, {
        ...(spec.capabilities as object),
        signal: state.signal,
        progress: async (progress, total, message) => {
          const token = state.extra._meta?.progressToken;
          if (token === undefined) return;
          await state.extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) },
          });
        },
        log: async (level, message) => {
          await state.extra.sendNotification({ method: 'notifications/message', params: { level, logger: spec.namespace, data: message } });
        },
      } as Parameters<AnyToolDefinition<Caps>['run']>[1]);
      state.result = {
        content: reply.content,
        ...(reply.structuredContent !== undefined ? { structuredContent: reply.structuredContent as Record<string, unknown> } : {}),
      };
    },
  ]);

  async function connect(transport: Transport): Promise<Server> {
    const server = new Server(
      { name: `bulkhead-${spec.namespace}`, version: spec.version },
      { capabilities: { tools: { listChanged: false }, logging: {} }, ...(spec.instructions ? { instructions: spec.instructions } : {}) },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const tool = byName.get(request.params.name);
      const client = server.getClientVersion();
      const caller = client ? `${client.name}/${client.version}${extra.sessionId ? `#${extra.sessionId.slice(0, 8)}` : ''}` : 'unknown';
      if (!tool) {
        const message = `Unknown tool ${request.params.name}. Available tools: ${[...byName.keys()].join(', ') || 'none (this server is disabled by its policy)'}.`;
        auditLog?.append({
          server: spec.namespace,
          tool: qualify(spec.namespace, request.params.name),
          caller,
          args: redactArguments(request.params.arguments ?? {}, spec.audit.redact_keys),
          decision: 'none',
          outcome: 'error',
          error: message,
          duration_ms: 0,
          bytes_out: 0,
        });
        throw new McpError(ErrorCode.InvalidParams, message);
      }
      const state: CallState = {
        tool,
        qualifiedName: qualify(spec.namespace, tool.name),
        rawArgs: request.params.arguments ?? {},
        args: {},
        extra,
        signal: AbortSignal.any([extra.signal, shutdown.signal]),
        caller,
        clientCanElicit: () => Boolean(server.getClientCapabilities()?.elicitation),
        decision: 'none',
      };
      await chain(state);
      return state.result ?? errorResult(`${state.qualifiedName} returned nothing`);
    });
    connections.add(server);
    server.onclose = () => connections.delete(server);
    await server.connect(transport);
    return server;
  }

  async function close(): Promise<void> {
    shutdown.abort(new Error('server is shutting down'));
    await Promise.allSettled([...connections].map((server) => server.close()));
    await spec.onClose?.();
  }

  return { namespace: spec.namespace, toolNames: tools.map((t) => t.name), connect, close };
}
