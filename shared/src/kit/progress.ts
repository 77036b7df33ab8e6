import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/**
 * The longest a call with a progress token stays silent: clients time a request out (the SDK's
 * default is 60 s) unless progress resets their timer, so a long call says it still runs.
 */
export const PROGRESS_EVERY_MS = 3000;

/**
 * The silence a relay (the gateway) fills: longer than a built-in's own interval, so the gateway
 * beats only for a server that sends no progress, never between a built-in's beats.
 */
export const RELAY_PROGRESS_EVERY_MS = PROGRESS_EVERY_MS + 1000;

/** A tool's own reports closer together than this wait, the newest replacing the older: a tool may report per file without flooding its client. */
export const PROGRESS_REPORT_GAP_MS = 1000;

/** What the approval desk needs of a call's progress: to say what the call waits for, for as long as it waits. */
export interface ProgressPhases {
  /** Says `describe()` at once, and on every beat while `work` runs instead of "running for N s". */
  during<T>(describe: () => string, work: () => Promise<T>): Promise<T>;
}

/** Sends one notifications/progress; a rejection (the client went away) is ignored. */
export type ProgressSend = (progress: number, message: string) => Promise<void>;

/**
 * The progress of one call whose request carried a progress token. It owns the `progress` number
 * (1, 2, 3, … across every notification of the call, so the values strictly increase whoever
 * speaks: the tool, the approval desk or the heartbeat) and the words are the speaker's. A tool's
 * own count ("412 of 1200 rungs") goes in its message, never in `total`: a total beside the call's
 * counter would be a fraction of nothing.
 *
 * After `everyMs` (PROGRESS_EVERY_MS unless a relay) without a notification it sends a
 * heartbeat. It stops for good when the call ends or its signal aborts (cancellation, shutdown),
 * so nothing follows the result.
 */
export class CallProgress implements ProgressPhases {
  private sent = 0;
  private lastReportAt = Number.NEGATIVE_INFINITY;
  private unsent: string | undefined;
  private phase: (() => string) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly startedAt = Date.now();
  private readonly onAbort = () => this.stop();

  /**
   * `label` opens the heartbeat's words: the tool as its client knows it (`run_shell: running for
   * 12 s`). `everyMs` is the silence a heartbeat fills.
   */
  constructor(
    readonly label: string,
    private readonly send: ProgressSend,
    private readonly signal: AbortSignal,
    private readonly everyMs: number = PROGRESS_EVERY_MS,
  ) {
    if (signal.aborted) {
      this.stopped = true;
      return;
    }
    signal.addEventListener('abort', this.onAbort, { once: true });
    this.schedule(this.everyMs);
  }

  /** The speaker's own news, sent as it is (throttled to one per PROGRESS_REPORT_GAP_MS, the newest kept). */
  report(message: string): void {
    if (this.stopped) return;
    const wait = this.lastReportAt + PROGRESS_REPORT_GAP_MS - Date.now();
    if (wait <= 0) {
      this.lastReportAt = Date.now();
      this.emit(message);
      return;
    }
    const alreadyWaiting = this.unsent !== undefined;
    this.unsent = message;
    // The heartbeat is due later than a held report, so one timer serves both.
    if (!alreadyWaiting) this.schedule(wait);
  }

  async during<T>(describe: () => string, work: () => Promise<T>): Promise<T> {
    const outer = this.phase;
    this.phase = describe;
    if (!this.stopped) this.emit(describe());
    try {
      return await work();
    } finally {
      this.phase = outer;
    }
  }

  /** Ends the call's progress: no notification is sent after this, and no timer is left. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.signal.removeEventListener('abort', this.onAbort);
  }

  private readonly beat = () => {
    if (this.stopped) return;
    if (this.unsent !== undefined) {
      this.lastReportAt = Date.now();
      this.emit(this.unsent);
    } else this.emit(this.phase?.() ?? `${this.label}: running for ${Math.round((Date.now() - this.startedAt) / 1000)} s`);
  };

  private emit(message: string): void {
    this.unsent = undefined;
    this.sent++;
    this.send(this.sent, message).catch(() => undefined);
    // In a phase (the approval desk's wait) only this process speaks, so a relay beats at the built-in interval too.
    this.schedule(this.phase ? PROGRESS_EVERY_MS : this.everyMs);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.beat, ms);
    // A call's timer never holds a process open: the call's end or the server's close stops it anyway.
    this.timer.unref();
  }
}

/**
 * The progress of a call whose request asked for it (a progress token), started now; undefined
 * for a request without a token, which gets no progress at all.
 */
export function startProgress(extra: RequestHandlerExtra<ServerRequest, ServerNotification>, label: string, signal: AbortSignal, everyMs: number = PROGRESS_EVERY_MS): CallProgress | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return new CallProgress(label, (progress, message) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }), signal, everyMs);
}
