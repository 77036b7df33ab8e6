import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * Why a tool that only runs as an MCP task (`execution.taskSupport: required`) cannot be called
 * through the gateway; undefined for any other tool. Tasks are not relayed: the call would answer
 * with a task id and its result come later through tasks/get and tasks/result, past the call's
 * audit line, output limit and the labelling of third-party results, and task ids (and the
 * requests a server queues for a task, such as its elicitation) would need routing to the server
 * that owns them. Without this the server's own error says "use callToolStream", which a client
 * of the gateway cannot act on.
 */
export function taskOnlyRefusal(tool: Pick<Tool, 'execution'>, qualifiedName: string): string | undefined {
  if (tool.execution?.taskSupport !== 'required') return undefined;
  return `${qualifiedName} requires task-based execution (MCP tasks), which the gateway does not relay; nothing was run. Connect to its server directly to use it.`;
}
