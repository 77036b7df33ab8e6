import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';

/** What every tool receives besides its server's own capabilities. */
export interface BaseContext {
  /** Aborted when the client cancels the call or the server shuts down. */
  readonly signal: AbortSignal;
  /** Reports progress to the client when it asked for it; a no-op otherwise. */
  readonly progress: (progress: number, total?: number, message?: string) => Promise<void>;
  /** Sends an MCP log notification. */
  readonly log: (level: LoggingLevel, message: string) => Promise<void>;
}

export type ToolContext<Caps> = BaseContext & Caps;
