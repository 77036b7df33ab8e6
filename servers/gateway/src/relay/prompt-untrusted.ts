import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { neutralizeInvisible, untrustedResult } from '@bulkhead/core';

/**
 * A third-party server's prompt as data: its messages go straight into the model's context, so
 * each text message, embedded text resource and link description is wrapped as untrusted content
 * exactly as a tool result's blocks are (secrets redacted, invisible characters written out, the
 * wrapper's tag defused); images and audio pass as they are. Roles stay: a prompt may speak as
 * the assistant, and the wrapper says whose words they are. The description is a label a client
 * shows, so it is only written out, not wrapped.
 */
export function untrustedPromptResult(source: string, result: GetPromptResult): GetPromptResult {
  const wrapped = untrustedResult(source, { content: result.messages.map((message) => message.content) }).content;
  return {
    ...result,
    ...(result.description !== undefined ? { description: neutralizeInvisible(result.description) } : {}),
    messages: result.messages.map((message, index) => ({ ...message, content: wrapped[index]! })),
  };
}
