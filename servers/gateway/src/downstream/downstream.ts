import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { redactText, ToolError } from '@bulkhead/core';
import type { TrustGrant } from '../config/schema.js';
import { ChildProcessTransport, type ChildSpec } from './child-transport.js';

export type DownstreamSpec = (
  | { readonly kind: 'stdio'; readonly namespace: string; readonly child: ChildSpec }
  | { readonly kind: 'http'; readonly namespace: string; readonly url: string; readonly headers: Record<string, string> }
) & {
  /** Its own start timeout, when bulkhead.yaml gives one. */
  readonly startTimeoutMs?: number;
  /** A compartment Bulkhead ships (its tools switch on and off in `<namespace>_policy.yaml`). */
  readonly builtin?: boolean;
  /** What the user trusts this server with (bulkhead.yaml `trust`); a built-in has every grant. */
  readonly trust: ReadonlySet<TrustGrant>;
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

class StartTimeout extends Error {}

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
  /** Called when the state changes, and at each failed retry. */
  onStateChanged: (() => void) | undefined;
  /** Settles when the first attempt to start has succeeded or failed (never rejects). */
  readonly firstAttempt: Promise<void>;
  private settleFirstAttempt: () => void = () => undefined;

  private client: Client | undefined;
  private transport: ChildProcessTransport | StreamableHTTPClientTransport | undefined;
  private restarts = 0;
  private readyAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextAttemptAt = 0;
  private listsStarted = 0;
  private listApplied = 0;
  /** How many times it has come up: more than once means it came back after a failure. */
  timesReady = 0;

  constructor(
    readonly spec: DownstreamSpec,
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly limits: StartLimits = DEFAULT_START_LIMITS,
  ) {
    this.firstAttempt = new Promise((resolve) => (this.settleFirstAttempt = resolve));
  }

  /** `always` reports a state even when it is the same again (each failed retry). */
  private setState(state: DownstreamState, always = false): void {
    const changed = this.state !== state;
    this.state = state;
    if (changed || always) this.onStateChanged?.();
  }

  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  /** Its tools in words: "4 tools", or why a built-in has none. */
  get toolSummary(): string {
    const count = this.tools.length;
    if (count === 0 && this.spec.builtin) return `no tools: ${this.namespace}_policy.yaml enables none`;
    return `${count} tool${count === 1 ? '' : 's'}`;
  }

  /** Whether it has not finished its first attempt to start yet. */
  get firstStarting(): boolean {
    return this.state === 'starting';
  }

  get namespace(): string {
    return this.spec.namespace;
  }

  /**
   * Connects once; a failure schedules a restart rather than throwing. The whole attempt is bounded
   * by the start timeout, whatever the transport does (an HTTP server can stall a notification
   * the SDK sends without a timeout of its own).
   */
  async start(): Promise<void> {
    if (this.state === 'stopped') return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new StartTimeout()), this.limits.timeoutMs);
    });
    try {
      await Promise.race([this.connect(Date.now() + this.limits.timeoutMs), timedOut]);
    } catch (error) {
      // stop() may have come while the attempt was on its way.
      if (this.isStopped()) return;
      const late = error instanceof StartTimeout || (error instanceof McpError && error.code === ErrorCode.RequestTimeout);
      const exited = this.transport instanceof ChildProcessTransport ? this.transport.exitDescription : undefined;
      this.lastError = late
        ? this.describeFailure(new Error(`it did not answer initialize and list its tools within ${this.limits.timeoutMs / 1000} s (start_timeout_ms in bulkhead.yaml)`))
        : this.describeFailure(exited ? new Error(`it ${exited}`) : error);
      // The attempt's connection is dropped now, so a reply that arrives late cannot revive it.
      void this.closeTransport();
      this.scheduleRestart();
    } finally {
      clearTimeout(timer);
      this.settleFirstAttempt();
    }
  }

  private describeFailure(error: unknown): string {
    const stderr = this.transport instanceof ChildProcessTransport ? this.transport.stderr.trim().split('\n').slice(-3).join(' | ') : '';
    return `${error instanceof Error ? error.message : String(error)}${stderr ? ` (stderr: ${stderr})` : ''}`;
  }

  /** Throws when this attempt's client is no longer the one in use (stopped, timed out, replaced). */
  private ensureCurrent(client: Client): void {
    if (client !== this.client || this.isStopped()) throw new Error(`the attempt to start ${this.namespace} was abandoned`);
  }

  /** `deadline` bounds each request of the start: initialize and every page of the tool list. */
  private async connect(deadline: number): Promise<void> {
    const transport: ChildProcessTransport | StreamableHTTPClientTransport =
      this.spec.kind === 'stdio'
        ? new ChildProcessTransport(this.spec.child)
        : new StreamableHTTPClientTransport(new URL(this.spec.url), { requestInit: { headers: this.spec.headers } });
    const client = new Client({ name: 'bulkhead-gateway', version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await this.refreshTools(client);
    });
    this.transport = transport;
    this.client = client;
    await client.connect(transport as Transport, { timeout: remaining(deadline) });
    this.ensureCurrent(client);
    client.onclose = () => this.onDisconnect(client);
    await this.refreshTools(client, deadline);
    this.ensureCurrent(client);
    this.readyAt = Date.now();
    this.timesReady++;
    this.lastError = undefined;
    this.setState('ready');
  }

  /**
   * Reads the whole tool list, page by page, up to the limits: a server that pages forever or lists
   * thousands of tools gets its first ones used and a warning, never an endless start. Of two
   * reads that overlap (a list_changed during the first one), the later-started one wins.
   */
  async refreshTools(client: Client | undefined = this.client, deadline: number = Date.now() + this.limits.timeoutMs): Promise<void> {
    if (!client) return;
    const generation = ++this.listsStarted;
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
    if (client !== this.client || generation < this.listApplied) return;
    this.listApplied = generation;
    this.tools = tools;
    this.listWarning = warning;
    this.onToolsChanged?.();
  }

  /** A server that was up went away; one that dies while starting is the failed attempt's to handle. */
  private onDisconnect(client: Client): void {
    if (client !== this.client || this.state !== 'ready') return;
    this.client = undefined;
    this.lastError = this.lastError ?? `the connection to ${this.namespace} closed`;
    if (this.transport instanceof ChildProcessTransport) {
      const reason = this.transport.closeReason;
      this.lastError = reason ? `the gateway stopped ${this.namespace}: ${reason}` : this.describeFailure(new Error(`${this.namespace} ${this.transport.exitDescription ?? 'exited'}`));
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
    this.setState('restarting', true);
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
      case 'failed':
        return `${this.namespace} is down and was given up on after ${this.policy.budget} restarts (last error: ${this.lastError ?? 'unknown'})`;
      case 'restarting': {
        const seconds = Math.ceil((this.nextAttemptAt - Date.now()) / 1000);
        const what = this.readyAt > 0 ? 'is restarting after it stopped unexpectedly' : `did not start: ${this.lastError ?? 'no error recorded'}`;
        return `${this.namespace} ${what} (restart ${this.restarts} of at most ${this.policy.budget}, ${seconds > 0 ? `next attempt in ${seconds} s` : 'trying again now'})`;
      }
    }
  }

  private unavailable(): ToolError {
    const reason = this.unavailableReason ?? `${this.namespace} is not connected`;
    return new ToolError(this.state === 'failed' ? `${reason}; restart the gateway once it is fixed` : `${reason}; try the call again shortly`, 'unavailable');
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
