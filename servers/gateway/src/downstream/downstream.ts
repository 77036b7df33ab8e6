import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientRequest,
  type Progress,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { redactText, ToolError } from '@bulkhead/core';
import type { TrustGrant } from '../config/schema.js';
import { boundedFetch, type ReplyLimits } from './bounded-fetch.js';
import { ChildProcessTransport, MAX_CHILD_MESSAGE_BYTES, type ChildSpec } from './child-transport.js';

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
  /** Restarts allowed before the server is given up on. */
  readonly budget: number;
  /** A run that stayed up this long gives the server a fresh budget; a start that fails never does. */
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

/** An HTTP reply is held to the size of a stdio message; it must begin within the call timeout. */
export const DEFAULT_REPLY_LIMITS: ReplyLimits = { maxBytes: MAX_CHILD_MESSAGE_BYTES, firstByteMs: 300_000, firstByteSetting: 'call_timeout_ms in bulkhead.yaml' };

/** How a server that was up went away, in words that follow its name. */
interface Stop {
  /** "stopped (killed by SIGKILL)", "sent a reply larger than 64 MiB …, so it was disconnected". */
  readonly event: string;
  /** Its last stderr lines, redacted (stdio servers). */
  readonly stderr: readonly string[];
}

export type DownstreamState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface CallOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly onprogress?: (progress: Progress) => void;
  /** The request's `_meta`: only keys the gateway itself sets (the caller's principal for a built-in), never a client's. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** The lists besides tools that a server may offer, each read whole (paged) and re-read on its list_changed. */
export interface FeatureLists {
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
}
export type FeatureList = keyof FeatureLists;

/** What the gateway answers for a server's requests to its client (roots, elicitation, sampling). */
export interface ServerRequestHandlers {
  readonly roots: (downstream: Downstream) => Promise<{ roots: { uri: string; name?: string }[] }>;
  readonly elicit: (downstream: Downstream, request: z.output<typeof ElicitRequestSchema>, signal: AbortSignal) => Promise<Record<string, unknown>>;
  readonly sample: (downstream: Downstream, request: z.output<typeof CreateMessageRequestSchema>, signal: AbortSignal) => Promise<Record<string, unknown>>;
}

/** A notification a server sent that the gateway passes on (resource updates, log messages). */
export type ServerNotice =
  | { readonly kind: 'resource_updated'; readonly uri: string }
  | { readonly kind: 'log'; readonly params: z.output<typeof LoggingMessageNotificationSchema>['params'] };

class StartTimeout extends Error {}

function stderrPart(stop: Stop): string {
  return stop.stderr.length ? `; its last stderr lines: ${stop.stderr.join(' | ')}` : '';
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
  /** Its prompts, resources and resource templates, as last read (empty when it offers none). */
  readonly lists: FeatureLists = { prompts: [], resources: [], resourceTemplates: [] };
  /** Why a list besides tools is incomplete or could not be read, by list. */
  readonly featureWarnings = new Map<FeatureList, string>();
  /** Several relays watch one server: each adds its listeners here. */
  readonly listeners: {
    /** After one of `lists` was (re)loaded. */
    readonly list: Set<(list: FeatureList) => void>;
    /** For each notification the gateway passes on. */
    readonly notice: Set<(notice: ServerNotice) => void>;
    /** Each time it is up, with a new connection (at start and after each restart). */
    readonly ready: Set<() => void>;
    /** Each time it stops being up (lost, restarting, given up on, stopped): what it offered is gone with it. */
    readonly down: Set<() => void>;
  } = { list: new Set(), notice: new Set(), ready: new Set(), down: new Set() };
  /** How the gateway answers the server's own requests; without them the server is told the method is not available. */
  requestHandlers: ServerRequestHandlers | undefined;
  /** Called when the state changes, and at each failed retry. */
  onStateChanged: (() => void) | undefined;
  /** Settles when the first attempt to start has succeeded or failed (never rejects). */
  readonly firstAttempt: Promise<void>;
  private settleFirstAttempt: () => void = () => undefined;

  private client: Client | undefined;
  private transport: ChildProcessTransport | StreamableHTTPClientTransport | undefined;
  private restarts = 0;
  /** Every restart since the gateway started (`restarts` is reset by a stable run). */
  private restartsInAll = 0;
  /** The stderr lines of the last process, kept once its transport is dropped. */
  private lastStderr: readonly string[] = [];
  /** When the current run came up; undefined while it is not up. */
  private upSince: number | undefined;
  /** How the last run that was up ended, while the failure to report is that one (not a failed start). */
  private stopped: Stop | undefined;
  /** Ends the attempt to start under way with this error (an HTTP reply over a limit during the start). */
  private failAttempt: ((error: Error) => void) | undefined;
  /** The connection whose tool list is being read after a list_changed. */
  private refreshing: Client | undefined;
  private refreshAgain = false;
  /** The lists besides tools being re-read after a list_changed, each with whether another came meanwhile. */
  private readonly rereading = new Map<FeatureList, { client: Client; again: boolean }>();
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
    private readonly replyLimits: ReplyLimits = DEFAULT_REPLY_LIMITS,
  ) {
    this.firstAttempt = new Promise((resolve) => (this.settleFirstAttempt = resolve));
  }

  /** `always` reports a state even when it is the same again (each failed retry). */
  private setState(state: DownstreamState, always = false): void {
    const changed = this.state !== state;
    const wentDown = changed && this.state === 'ready';
    this.state = state;
    if (changed || always) this.onStateChanged?.();
    if (wentDown) for (const listener of this.listeners.down) listener();
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

  /** How many times it was restarted since the gateway started. */
  get restartCount(): number {
    return this.restartsInAll;
  }

  /** The last lines its process wrote to stderr (stdio servers), redacted and with invisible characters written out. */
  get recentStderr(): readonly string[] {
    return this.transport instanceof ChildProcessTransport ? this.transport.stderrLines : this.lastStderr;
  }

  /** Whether it has not finished its first attempt to start yet. */
  get firstStarting(): boolean {
    return this.state === 'starting';
  }

  get namespace(): string {
    return this.spec.namespace;
  }

  /** What the server said it offers when it came up; undefined while it is not connected. */
  get capabilities(): ServerCapabilities | undefined {
    return this.state === 'ready' ? this.client?.getServerCapabilities() : undefined;
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
      this.failAttempt = reject;
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
      this.stopped = undefined;
      // The attempt's connection is dropped now, so a reply that arrives late cannot revive it.
      void this.closeTransport();
      this.scheduleRestart();
    } finally {
      clearTimeout(timer);
      this.failAttempt = undefined;
      this.settleFirstAttempt();
    }
  }

  private describeFailure(error: unknown): string {
    const stderr = this.transport instanceof ChildProcessTransport ? this.transport.stderrLines.slice(-3).join(' | ') : '';
    return redactText(`${error instanceof Error ? error.message : String(error)}${stderr ? ` (stderr: ${stderr})` : ''}`);
  }

  /** Throws when this attempt's client is no longer the one in use (stopped, timed out, replaced). */
  private ensureCurrent(client: Client): void {
    if (client !== this.client || this.isStopped()) throw new Error(`the attempt to start ${this.namespace} was abandoned`);
  }

  /** `deadline` bounds each request of the start: initialize and every page of the tool list. */
  private async connect(deadline: number): Promise<void> {
    // Declared for every server, since a server is shared by every client of the gateway and starts
    // before any of them connects: a request that no client can answer is refused when it comes,
    // with the reason (see the relays of roots, elicitation and sampling).
    const client = new Client({ name: 'bulkhead-gateway', version: '0.1.0' }, { capabilities: { roots: { listChanged: true }, elicitation: { form: {}, url: {} }, sampling: {} } });
    const transport: ChildProcessTransport | StreamableHTTPClientTransport =
      this.spec.kind === 'stdio'
        ? new ChildProcessTransport(this.spec.child)
        : new StreamableHTTPClientTransport(new URL(this.spec.url), {
            requestInit: { headers: this.spec.headers },
            fetch: boundedFetch(this.replyLimits, (what) => this.breach(client, what)),
          });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.requestRefresh(client);
    });
    this.handleFeatureNotifications(client);
    this.transport = transport;
    this.client = client;
    await client.connect(transport as Transport, { timeout: remaining(deadline) });
    this.ensureCurrent(client);
    client.onclose = () => this.onDisconnect(client);
    await this.refreshTools(client, deadline);
    this.ensureCurrent(client);
    await Promise.all(this.offeredLists(client).map((list) => this.refreshList(client, list, deadline)));
    this.ensureCurrent(client);
    this.upSince = Date.now();
    this.timesReady++;
    this.lastError = undefined;
    this.stopped = undefined;
    this.setState('ready');
    for (const listener of this.listeners.ready) listener();
  }

  private notice(notice: ServerNotice): void {
    for (const listener of this.listeners.notice) listener(notice);
  }

  /**
   * A list_changed starts one read at a time: notifications that come during a read are answered
   * by one more read after it, so a server that floods them costs one read in flight, not one each.
   */
  private requestRefresh(client: Client): void {
    if (this.refreshing === client) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = client;
    this.refreshAgain = false;
    void (async () => {
      do {
        this.refreshAgain = false;
        try {
          await this.refreshTools(client);
        } catch (error) {
          if (client === this.client) this.listWarning = `its tools/list after list_changed failed (${redactText(error instanceof Error ? error.message : String(error))}); the tools listed before are kept`;
        }
      } while (this.refreshAgain && client === this.client);
      if (this.refreshing === client) this.refreshing = undefined;
    })();
  }

  /**
   * Reads the whole tool list, page by page, up to the limits: a server that pages forever or lists
   * thousands of tools gets its first ones used and a warning, never an endless start. Of two
   * reads that overlap (a list_changed during the first one), the later-started one wins.
   */
  async refreshTools(client: Client | undefined = this.client, deadline: number = Date.now() + this.limits.timeoutMs): Promise<void> {
    if (!client) return;
    const generation = ++this.listsStarted;
    // A server that offers only prompts or resources has no tools/list to ask (it answers Method not found).
    const offersTools = client.getServerCapabilities()?.tools !== undefined;
    const { items: tools, warning } = !offersTools ? { items: [], warning: undefined } : await this.readPaged('tools/list', 'tools', (cursor) => client.listTools(cursor ? { cursor } : undefined, { timeout: remaining(deadline) }).then((page) => ({ items: page.tools, nextCursor: page.nextCursor })));
    if (client !== this.client || generation < this.listApplied) return;
    this.listApplied = generation;
    this.tools = tools;
    this.listWarning = warning;
    this.onToolsChanged?.();
  }

  /**
   * Reads a whole paged list up to the limits: a server that pages forever or lists thousands of
   * items gets its first ones used and a warning, never an endless read.
   */
  private async readPaged<T>(method: string, noun: string, page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<{ items: T[]; warning: string | undefined }> {
    const items: T[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let count = 0; ; count++) {
      if (count === this.limits.maxPages) return { items, warning: `it kept paging ${method} past ${this.limits.maxPages} pages; the ${noun} of the first ${this.limits.maxPages} are used` };
      const listed = await page(cursor);
      items.push(...listed.items);
      if (items.length > this.limits.maxTools) {
        items.length = this.limits.maxTools;
        return { items, warning: `it lists more than ${this.limits.maxTools} ${noun}; the first ${this.limits.maxTools} are used (max_tools_per_server in bulkhead.yaml)` };
      }
      cursor = listed.nextCursor;
      if (!cursor) return { items, warning: undefined };
      if (seenCursors.has(cursor)) return { items, warning: `its ${method} returned a cursor it had already returned; the ${noun} listed before it are used` };
      seenCursors.add(cursor);
    }
  }

  /** The lists besides tools that this connection's server offers. */
  private offeredLists(client: Client): FeatureList[] {
    const capabilities = client.getServerCapabilities();
    return [...(capabilities?.prompts ? (['prompts'] as const) : []), ...(capabilities?.resources ? (['resources', 'resourceTemplates'] as const) : [])];
  }

  /**
   * Reads one list besides tools. Unlike tools, a failure does not fail the start: the server's
   * tools stay usable, the list is kept as it was and the reason is kept in `featureWarnings`.
   */
  private async refreshList<K extends FeatureList>(client: Client, list: K, deadline: number = Date.now() + this.limits.timeoutMs): Promise<void> {
    const options = { timeout: remaining(deadline) };
    const readers: { [L in FeatureList]: () => Promise<{ items: FeatureLists[L]; warning: string | undefined }> } = {
      prompts: () => this.readPaged('prompts/list', 'prompts', (cursor) => client.listPrompts(cursor ? { cursor } : undefined, options).then((page) => ({ items: page.prompts, nextCursor: page.nextCursor }))),
      resources: () => this.readPaged('resources/list', 'resources', (cursor) => client.listResources(cursor ? { cursor } : undefined, options).then((page) => ({ items: page.resources, nextCursor: page.nextCursor }))),
      resourceTemplates: () =>
        this.readPaged('resources/templates/list', 'resource templates', (cursor) => client.listResourceTemplates(cursor ? { cursor } : undefined, options).then((page) => ({ items: page.resourceTemplates, nextCursor: page.nextCursor }))),
    };
    const reader: () => Promise<{ items: FeatureLists[K]; warning: string | undefined }> = readers[list];
    try {
      const { items, warning } = await reader();
      if (client !== this.client) return;
      this.lists[list] = items;
      if (warning) this.featureWarnings.set(list, warning);
      else this.featureWarnings.delete(list);
    } catch (error) {
      if (client !== this.client) return;
      this.featureWarnings.set(list, `its ${list === 'resourceTemplates' ? 'resources/templates' : list}/list failed (${redactText(error instanceof Error ? error.message : String(error))})`);
    }
    for (const listener of this.listeners.list) listener(list);
  }

  /** As requestRefresh, for a list besides tools: one read in flight per list, and one more for what came during it. */
  private async rereadList(client: Client, list: FeatureList): Promise<void> {
    const inFlight = this.rereading.get(list);
    if (inFlight?.client === client) {
      inFlight.again = true;
      return;
    }
    const reading = { client, again: false };
    this.rereading.set(list, reading);
    try {
      do {
        reading.again = false;
        await this.refreshList(client, list);
      } while (reading.again && client === this.client);
    } finally {
      if (this.rereading.get(list) === reading) this.rereading.delete(list);
    }
  }

  /** list_changed of prompts and resources, resource updates and log messages; the server's requests to its client. */
  private handleFeatureNotifications(client: Client): void {
    client.setNotificationHandler(PromptListChangedNotificationSchema, async () => {
      if (client === this.client && this.state === 'ready') await this.rereadList(client, 'prompts');
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
      if (client === this.client && this.state === 'ready') await Promise.all([this.rereadList(client, 'resources'), this.rereadList(client, 'resourceTemplates')]);
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
      if (client === this.client) this.notice({ kind: 'resource_updated', uri: notification.params.uri });
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
      if (client === this.client) this.notice({ kind: 'log', params: notification.params });
    });
    const handlers = () => {
      if (client !== this.client || !this.requestHandlers) throw new McpError(ErrorCode.MethodNotFound, 'this gateway does not relay requests from its servers');
      return this.requestHandlers;
    };
    client.setRequestHandler(ListRootsRequestSchema, async () => handlers().roots(this));
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => handlers().elicit(this, request, extra.signal) as never);
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => handlers().sample(this, request, extra.signal) as never);
  }

  /** A server that was up went away; one that dies while starting is the failed attempt's to handle. */
  private onDisconnect(client: Client): void {
    if (client !== this.client || this.state !== 'ready') return;
    if (!(this.transport instanceof ChildProcessTransport)) return this.lose(client, { event: 'closed its connection', stderr: [] });
    const reason = this.transport.closeReason?.replace(/^it /, '');
    const exit = (this.transport.exitDescription ?? 'exited').replace(/^was /, '');
    this.lose(client, { event: reason ? `${reason}, so it was stopped` : `stopped (${exit})`, stderr: this.transport.stderrLines });
  }

  /** An HTTP reply broke a limit: the server is dropped and restarted, like one that crashed. */
  private breach(client: Client, what: string): void {
    if (client !== this.client || this.isStopped()) return;
    if (this.state !== 'ready') return this.failAttempt?.(new Error(`it ${what}`));
    this.lose(client, { event: `${what}, so it was disconnected`, stderr: [] });
  }

  private lose(client: Client, stop: Stop): void {
    if (client !== this.client) return;
    const uptime = this.upSince === undefined ? 0 : Date.now() - this.upSince;
    this.upSince = undefined;
    this.stopped = stop;
    this.lastError = `${stop.event}${stderrPart(stop)}`;
    // The connection is dropped now, so that nothing more is read from it.
    void this.closeTransport();
    this.scheduleRestart(uptime);
  }

  /** `uptime` is how long the run that just ended was up; a failed start has none. */
  private scheduleRestart(uptime = 0): void {
    if (this.state === 'stopped') return;
    if (uptime >= this.policy.stableMs) this.restarts = 0;
    if (this.restarts >= this.policy.budget) {
      this.setState('failed');
      void this.closeTransport();
      return;
    }
    const delay = Math.min(this.policy.initialDelayMs * 2 ** this.restarts, this.policy.maxDelayMs);
    this.restarts++;
    this.restartsInAll++;
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
        if (this.stopped) return `${this.namespace} ${this.stopped.event}${stderrPart(this.stopped)}; ${this.plan}`;
        const seconds = Math.ceil((this.nextAttemptAt - Date.now()) / 1000);
        return `${this.namespace} did not start: ${this.lastError ?? 'no error recorded'} (restart ${this.restarts} of at most ${this.policy.budget}, ${seconds > 0 ? `next attempt in ${seconds} s` : 'trying again now'})`;
      }
    }
  }

  /** What happens next, after a run that was up ended. */
  private get plan(): string {
    if (this.state === 'failed') return `given up on after ${this.policy.budget} restarts; restart the gateway once it is fixed`;
    const seconds = Math.ceil((this.nextAttemptAt - Date.now()) / 1000);
    return `${seconds > 0 ? `restarting in ${seconds} s` : 'restarting now'} (restart ${this.restarts} of at most ${this.policy.budget})`;
  }

  private unavailable(): ToolError {
    const reason = this.unavailableReason ?? `${this.namespace} is not connected`;
    return new ToolError(this.state === 'failed' ? `${reason}; restart the gateway once it is fixed` : `${reason}; try the call again shortly`, 'unavailable');
  }

  /** A call that was under way when its server went away. */
  private lostCall(name: string): ToolError {
    const stop = this.stopped;
    if (!stop) return new ToolError(`${this.namespace} stopped while running ${name}; the call was not completed. Try again shortly.`, 'unavailable');
    const next = this.state === 'failed' ? `${this.plan}.` : `${this.plan}. Try again shortly.`;
    return new ToolError(`${this.namespace} ${stop.event} while running ${name}${stderrPart(stop)}; the call was not completed; ${next}`, 'unavailable');
  }

  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    // The SDK's callTool, not a plain request: it checks structured content against the tool's output schema.
    return (await this.send(name, options, (client, requestOptions) => client.callTool({ name, arguments: args, ...(options.meta ? { _meta: { ...options.meta } } : {}) }, CallToolResultSchema, requestOptions))) as CallToolResult;
  }

  /**
   * Sends one request to the server (a tool call, a resource read, a prompt, a completion) with the
   * caller's signal, a timeout reset by progress, and the same words as a call when the server is
   * down or goes away meanwhile; `what` names it in those words.
   */
  request<T extends z.ZodType>(request: ClientRequest, resultSchema: T, options: CallOptions, what: string = request.method): Promise<z.output<T>> {
    return this.send(what, options, (client, requestOptions) => client.request(request, resultSchema, requestOptions));
  }

  private async send<T>(what: string, options: CallOptions, sending: (client: Client, requestOptions: RequestOptions) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!client || this.state !== 'ready') throw this.unavailable();
    const requestOptions: RequestOptions = {
      signal: options.signal,
      timeout: options.timeoutMs,
      resetTimeoutOnProgress: true,
      // Progress never moves the bound: a built-in's heartbeat would otherwise keep a call alive past call_timeout_ms.
      maxTotalTimeout: options.timeoutMs,
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
    };
    try {
      return await sending(client, requestOptions);
    } catch (error) {
      if (options.signal.aborted) throw error;
      if (client !== this.client || this.state !== 'ready') throw this.lostCall(what);
      if (this.spec.kind === 'http' && !(error instanceof McpError)) {
        const cause = error instanceof Error ? error.message : String(error);
        this.lose(client, { event: redactText(`(${this.spec.url}) could not be reached (${cause})`), stderr: [] });
        throw new ToolError(`${this.namespace} ${this.stopped!.event}; reconnecting: ${this.plan}. Try again shortly.`, 'unavailable');
      }
      throw error;
    }
  }

  /** A notification to the server (roots/list_changed), dropped when it is not connected. */
  async notify(method: 'notifications/roots/list_changed'): Promise<void> {
    if (this.client && this.state === 'ready') await this.client.notification({ method }).catch(() => undefined);
  }

  private async closeTransport(): Promise<void> {
    const transport = this.transport;
    this.transport = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    if (transport instanceof ChildProcessTransport) {
      await transport.close();
      this.lastStderr = transport.stderrLines;
    } else await transport?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.setState('stopped');
    clearTimeout(this.restartTimer);
    await this.closeTransport();
  }
}
