import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { CallState } from './call-state.js';

/** What every tool receives besides its server's own capabilities. */
export interface BaseContext {
  /** Aborted when the client cancels the call or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Tells the client how far the call got, in words ("4100 files scanned", "12 of 40 rungs"), when
   * it asked for progress; a no-op otherwise. The kit numbers the notifications, prefixes the tool's
   * name, sends at most one a second (the newest) and fills any 3 s of silence with a heartbeat.
   */
  readonly progress: (message: string) => void;
  /** Sends an MCP log notification. */
  readonly log: (level: LoggingLevel, message: string) => Promise<void>;
  /** Who the transport authenticated for this call (a bearer token's owner over HTTP); undefined over stdio. */
  readonly principal: string | undefined;
  /** The parameters of the HTTP route the call came through (the ladder's `repo` from the URL); empty over MCP. */
  readonly routeParams: Readonly<Record<string, string>>;
}

export type ToolContext<Caps> = BaseContext & Caps;

/** The context parts every server kit builds the same way from a call. */
export function baseContext(state: CallState, logger: string): BaseContext {
  return {
    signal: state.signal,
    principal: state.principal,
    routeParams: state.routeParams ?? {},
    progress: (message) => state.progress?.report(`${state.progress.label}: ${message}`),
    log: async (level, message) => {
      await state.extra.sendNotification({ method: 'notifications/message', params: { level, logger, data: message } });
    },
  };
}
