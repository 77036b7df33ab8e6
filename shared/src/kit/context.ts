import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { CallState } from './call-state.js';

/** What every tool receives besides its server's own capabilities. */
export interface BaseContext {
  /** Aborted when the client cancels the call or the server shuts down. */
  readonly signal: AbortSignal;
  /** Reports progress to the client when it asked for it; a no-op otherwise. */
  readonly progress: (progress: number, total?: number, message?: string) => Promise<void>;
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
    progress: async (progress, total, message) => {
      const token = state.extra._meta?.progressToken;
      if (token === undefined) return;
      await state.extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) },
      });
    },
    log: async (level, message) => {
      await state.extra.sendNotification({ method: 'notifications/message', params: { level, logger, data: message } });
    },
  };
}
