import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { redactText, ToolError } from '@bulkhead/core';
import { ChildProcessTransport, type ChildSpec } from './child-transport.js';

export type DownstreamSpec = (
  | { readonly kind: 'stdio'; readonly namespace: string; readonly child: ChildSpec }
  | { readonly kind: 'http'; readonly namespace: string; readonly url: string; readonly headers: Record<string, string> }
) & {
  /** Its own start timeout, when bulkhead.yaml gives one. */
  readonly startTimeoutMs?: number;
};

export interface RestartPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** Restarts allowed before the server is given up on, until it has been stable for `stableMs`. */
  readonly budget: number;
  readonly stableMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 1000, maxDelayMs: 30_000, budget: 8, stableMs: 60_000 };

/** How long a server may take to come up, and how much of a tool list the gateway takes from it. */
export interface StartLimits {
  /** From spawning (or connecting) to a complete tool list: initialize and every tools/list page. */
  readonly timeoutMs: number;
  readonly maxTools: number;
  readonly maxPages: number;
}

export const DEFAULT_START_LIMITS: StartLimits = { timeoutMs: 30_000, maxTools: 1000, maxPages: 100 };

export type DownstreamState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface CallOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly onprogress?: (progress: Progress) => void;
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

/**
 * One downstream MCP server under supervision: connected, its tools listed, restarted with
 * exponential backoff when it dies, and stopped with its whole process group.
 */
export class Downstream {
  state: DownstreamState = 'starting';
  tools: Tool[] = [];
  lastError: string | undefined;
  /** Why the tool list in use is not the server's whole list, when it is not. */
  listWarning: string | undefined;
  /** Called after the tool list was (re)loaded: at start, after a restart, on list_changed. */
  onToolsChanged: (() => void) | undefined;
  /** Called when the state changes, with the state it left. */
  onStateChanged: ((previous: DownstreamState) => void) | undefined;
  /** Settles when the first attempt to start has succeeded or failed (never rejects). */
  readonly firstAttempt: Promise<void>;
  private settleFirstAttempt: () => void = () => undefined;

  private client: Client | undefined;
  private transport: ChildProcessTransport | StreamableHTTPClientTransport | undefined;
  private restarts = 0;
  private readyAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextAttemptAt = 0;

  constructor(
    readonly spec: DownstreamSpec,
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly limits: StartLimits = DEFAULT_START_LIMITS,
  ) {
    this.firstAttempt = new Promise((resolve) => (this.settleFirstAttempt = resolve));
  }

  private setState(state: DownstreamState): void {
    const previous = this.state;
    this.state = state;
    if (previous !== state) this.onStateChanged?.(previous);
  }

  /** Whether it has not finished its first attempt to start yet. */
  get firstStarting(): boolean {
    return this.state === 'starting';
  }

  get namespace(): string {
    return this.spec.namespace;
  }

  /** Connects once; a failure schedules a restart rather than throwing. */
  async start(): Promise<void> {
    if (this.state === 'stopped') return;
    try {
      await this.connect(Date.now() + this.limits.timeoutMs);
    } catch (error) {
      const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
      this.lastError = timedOut
        ? this.describeFailure(new Error(`it did not answer initialize and list its tools within ${this.limits.timeoutMs / 1000} s (start_timeout_ms in bulkhead.yaml)`))
        : this.describeFailure(error);
      this.scheduleRestart();
    } finally {
      this.settleFirstAttempt();
    }
  }

  private describeFailure(error: unknown): string {
    const stderr = this.transport instanceof ChildProcessTransport ? this.transport.stderr.trim().split('\n').slice(-3).join(' | ') : '';
    return `${error instanceof Error ? error.message : String(error)}${stderr ? ` (stderr: ${stderr})` : ''}`;
  }

  /** `deadline` bounds the whole start: initialize and every page of the tool list. */
  private async connect(deadline: number): Promise<void> {
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
    await client.connect(transport as Transport, { timeout: remaining(deadline) });
    // Set only once connected: a failed start is handled by start() alone, not counted twice.
    client.onclose = () => this.onDisconnect(client);
    await this.refreshTools(deadline);
    this.readyAt = Date.now();
    this.lastError = undefined;
    this.setState('ready');
  }

  /**
   * Reads the whole tool list, page by page, up to the limits: a server that pages forever or lists
   * thousands of tools gets its first ones used and a warning, never an endless start.
   */
  async refreshTools(deadline: number = Date.now() + this.limits.timeoutMs): Promise<void> {
    const client = this.client;
    if (!client) return;
    const tools: Tool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    let warning: string | undefined;
    for (let page = 0; ; page++) {
      if (page === this.limits.maxPages) {
        warning = `it kept paging tools/list past ${this.limits.maxPages} pages; the tools of the first ${this.limits.maxPages} are used`;
        break;
      }
      const listed = await client.listTools(cursor ? { cursor } : undefined, { timeout: remaining(deadline) });
      tools.push(...listed.tools);
      if (tools.length > this.limits.maxTools) {
        warning = `it lists more than ${this.limits.maxTools} tools; the first ${this.limits.maxTools} are used (max_tools_per_server in bulkhead.yaml)`;
        tools.length = this.limits.maxTools;
        break;
      }
      cursor = listed.nextCursor;
      if (!cursor) break;
      if (seenCursors.has(cursor)) {
        warning = `its tools/list returned a cursor it had already returned; the tools listed before it are used`;
        break;
      }
      seenCursors.add(cursor);
    }
    this.tools = tools;
    this.listWarning = warning;
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
      this.setState('failed');
      void this.closeTransport();
      return;
    }
    const delay = Math.min(this.policy.initialDelayMs * 2 ** this.restarts, this.policy.maxDelayMs);
    this.restarts++;
    this.nextAttemptAt = Date.now() + delay;
    this.setState('restarting');
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      void this.closeTransport().then(() => this.start());
    }, delay);
    this.restartTimer.unref();
  }

  /** In words, why its tools cannot be used now; undefined when they can. */
  get unavailableReason(): string | undefined {
    switch (this.state) {
      case 'ready':
        return undefined;
      case 'starting':
        return `${this.namespace} is still starting`;
      case 'stopped':
        return `${this.namespace} is stopped`;
      default:
        return this.unavailable().message;
    }
  }

  private unavailable(): ToolError {
    if (this.state === 'starting') return new ToolError(`${this.namespace} is still starting; try the call again shortly`, 'unavailable');
    if (this.state === 'failed') {
      return new ToolError(`${this.namespace} is down and was given up on after ${this.policy.budget} restarts (last error: ${this.lastError ?? 'unknown'}); restart the gateway once it is fixed`, 'unavailable');
    }
    const seconds = Math.max(0, Math.ceil((this.nextAttemptAt - Date.now()) / 1000));
    const what = this.readyAt > 0 ? 'is restarting after it stopped unexpectedly' : `did not start: ${this.lastError ?? 'no error recorded'}`;
    return new ToolError(`${this.namespace} ${what} (restart ${this.restarts} of at most ${this.policy.budget}, next attempt in ${seconds} s); try the call again shortly`, 'unavailable');
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
    this.setState('stopped');
    clearTimeout(this.restartTimer);
    await this.closeTransport();
  }
}
