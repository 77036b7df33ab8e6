import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { redactText, ToolError } from '@bulkhead/core';
import { ChildProcessTransport, type ChildSpec } from './child-transport.js';

export type DownstreamSpec =
  | { readonly kind: 'stdio'; readonly namespace: string; readonly child: ChildSpec }
  | { readonly kind: 'http'; readonly namespace: string; readonly url: string; readonly headers: Record<string, string> };

export interface RestartPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** Restarts allowed before the server is given up on, until it has been stable for `stableMs`. */
  readonly budget: number;
  readonly stableMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 1000, maxDelayMs: 30_000, budget: 8, stableMs: 60_000 };

export type DownstreamState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface CallOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly onprogress?: (progress: Progress) => void;
}

/**
 * One downstream MCP server under supervision: connected, its tools listed, restarted with
 * exponential backoff when it dies, and stopped with its whole process group.
 */
export class Downstream {
  state: DownstreamState = 'starting';
  tools: Tool[] = [];
  lastError: string | undefined;
  /** Called after the tool list was (re)loaded: at start, after a restart, on list_changed. */
  onToolsChanged: (() => void) | undefined;

  private client: Client | undefined;
  private transport: ChildProcessTransport | StreamableHTTPClientTransport | undefined;
  private restarts = 0;
  private readyAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextAttemptAt = 0;

  constructor(
    readonly spec: DownstreamSpec,
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
  ) {}

  get namespace(): string {
    return this.spec.namespace;
  }

  /** Connects once; a failure schedules a restart rather than throwing. */
  async start(): Promise<void> {
    if (this.state === 'stopped') return;
    try {
      await this.connect();
    } catch (error) {
      this.lastError = this.describeFailure(error);
      this.scheduleRestart();
    }
  }

  private describeFailure(error: unknown): string {
    const stderr = this.transport instanceof ChildProcessTransport ? this.transport.stderr.trim().split('\n').slice(-3).join(' | ') : '';
    return `${error instanceof Error ? error.message : String(error)}${stderr ? ` (stderr: ${stderr})` : ''}`;
  }

  private async connect(): Promise<void> {
    const transport: ChildProcessTransport | StreamableHTTPClientTransport =
      this.spec.kind === 'stdio'
        ? new ChildProcessTransport(this.spec.child)
        : new StreamableHTTPClientTransport(new URL(this.spec.url), { requestInit: { headers: this.spec.headers } });
    const client = new Client({ name: 'bulkhead-gateway', version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await this.refreshTools();
    });
    this.transport = transport;
    this.client = client;
    await client.connect(transport as Transport);
    // Set only once connected: a failed start is handled by start() alone, not counted twice.
    client.onclose = () => this.onDisconnect(client);
    await this.refreshTools();
    this.state = 'ready';
    this.readyAt = Date.now();
    this.lastError = undefined;
  }

  async refreshTools(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    this.tools = tools;
    this.onToolsChanged?.();
  }

  private onDisconnect(client: Client): void {
    if (client !== this.client || this.state === 'stopped') return;
    this.client = undefined;
    this.lastError = this.lastError ?? `the connection to ${this.namespace} closed`;
    if (this.transport instanceof ChildProcessTransport) {
      const reason = this.transport.closeReason;
      this.lastError = reason ? `the gateway stopped ${this.namespace}: ${reason}` : this.describeFailure(new Error(`${this.namespace} exited`));
    }
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.state === 'stopped') return;
    if (this.readyAt > 0 && Date.now() - this.readyAt >= this.policy.stableMs) this.restarts = 0;
    if (this.restarts >= this.policy.budget) {
      this.state = 'failed';
      void this.closeTransport();
      return;
    }
    const delay = Math.min(this.policy.initialDelayMs * 2 ** this.restarts, this.policy.maxDelayMs);
    this.restarts++;
    this.state = 'restarting';
    this.nextAttemptAt = Date.now() + delay;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      void this.closeTransport().then(() => this.start());
    }, delay);
    this.restartTimer.unref();
  }

  private unavailable(): ToolError {
    if (this.state === 'failed') {
      return new ToolError(`${this.namespace} is down and was given up on after ${this.policy.budget} restarts (last error: ${this.lastError ?? 'unknown'}); restart the gateway once it is fixed`, 'unavailable');
    }
    const seconds = Math.max(0, Math.ceil((this.nextAttemptAt - Date.now()) / 1000));
    return new ToolError(`${this.namespace} is restarting after it stopped unexpectedly (restart ${this.restarts} of at most ${this.policy.budget}, next attempt in ${seconds} s); try the call again shortly`, 'unavailable');
  }

  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.state !== 'ready') throw this.unavailable();
    try {
      return (await client.callTool({ name, arguments: args }, CallToolResultSchema, {
        signal: options.signal,
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
        ...(options.onprogress ? { onprogress: options.onprogress } : {}),
      })) as CallToolResult;
    } catch (error) {
      if (options.signal.aborted) throw error;
      if (client !== this.client || this.state !== 'ready') {
        const cause = this.transport instanceof ChildProcessTransport && this.transport.closeReason ? ` (the gateway stopped it: ${this.transport.closeReason})` : '';
        throw new ToolError(`${this.namespace} stopped while running ${name}${cause}; it is restarting and the call was not completed. Try again shortly.`, 'unavailable');
      }
      if (this.spec.kind === 'http' && !(error instanceof McpError)) {
        this.lastError = error instanceof Error ? error.message : String(error);
        this.onDisconnect(client);
        throw new ToolError(redactText(`${this.namespace} (${this.spec.url}) could not be reached (${this.lastError}); reconnecting. Try again shortly.`), 'unavailable');
      }
      throw error;
    }
  }

  private async closeTransport(): Promise<void> {
    const transport = this.transport;
    this.transport = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    if (transport instanceof ChildProcessTransport) await transport.close();
    else await transport?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.restartTimer);
    await this.closeTransport();
  }
}
