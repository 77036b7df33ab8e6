import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AnyToolDefinition } from './define-tool.js';

/** Everything one tools/call carries through the middleware chain. */
export interface CallState {
  readonly tool: AnyToolDefinition<unknown>;
  readonly qualifiedName: string;
  readonly rawArgs: unknown;
  /** Validated arguments; set by the validation step. */
  args: Record<string, unknown>;
  readonly extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
  readonly signal: AbortSignal;
  readonly caller: string;
  readonly clientCanElicit: () => boolean;
  decision: string;
  result?: CallToolResult;
}
