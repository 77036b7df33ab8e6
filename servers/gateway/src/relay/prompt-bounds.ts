import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { capToolResult, type OutputLimits } from '@bulkhead/core';

/**
 * A prompt held to the gateway's output limits, as a tool result is: its messages' text shares the
 * text cap (each cut head and tail with the marker between), images, audio and embedded blobs the
 * binary cap (one that does not fit is replaced by a line naming it). Applied after the untrusted
 * wrapping, so the limit bounds what the client gets, wrapper and all.
 */
export function boundPromptResult(result: GetPromptResult, limits: OutputLimits): GetPromptResult {
  const capped = capToolResult({ content: result.messages.map((message) => message.content) }, limits).content;
  return { ...result, messages: result.messages.map((message, index) => ({ ...message, content: capped[index]! })) };
}
