import type { CallToolResult, GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { capToolResult, neutralizeInvisible, untrustedResult, type OutputLimits } from '@bulkhead/core';
import { exposeResourceLinks } from './resource-links.js';
import type { ResourceOwner } from './resource-names.js';

/**
 * A prompt's messages put through what a tool result's content goes through: each message's
 * content is one block of a result, in order (none of these steps adds or drops a block), and
 * each message keeps its role.
 */
function asToolContent(result: GetPromptResult, transform: (content: CallToolResult) => CallToolResult): GetPromptResult {
  const content = transform({ content: result.messages.map((message) => message.content) }).content;
  return { ...result, messages: result.messages.map((message, index) => ({ ...message, content: content[index]! })) };
}

/**
 * The URIs of a prompt's resource links and embedded resources as they read back from its server
 * through the gateway (see exposeResourceLinks), before any wrapping, so a link stays a link.
 */
export function exposePromptLinks(result: GetPromptResult, namespace: string, owners: ReadonlyMap<string, ResourceOwner>): GetPromptResult {
  return asToolContent(result, (content) => exposeResourceLinks(content, namespace, owners));
}

/**
 * A third-party server's prompt as data: its messages go straight into the model's context, so
 * each text message, embedded text resource and link description is wrapped as untrusted content
 * exactly as a tool result's blocks are (secrets redacted, invisible characters written out, the
 * wrapper's tag defused); images and audio pass as they are. Roles stay: a prompt may speak as
 * the assistant, and the wrapper says whose words they are. The description is a label a client
 * shows, so it is only written out, not wrapped.
 */
export function untrustedPromptResult(source: string, result: GetPromptResult): GetPromptResult {
  const wrapped = asToolContent(result, (content) => untrustedResult(source, content));
  return result.description !== undefined ? { ...wrapped, description: neutralizeInvisible(result.description) } : wrapped;
}

/**
 * A prompt held to the gateway's output limits, as a tool result is: its messages' text shares the
 * text cap (each cut head and tail with the marker between), images, audio and embedded blobs the
 * binary cap (one that does not fit is replaced by a line naming it). Applied after the untrusted
 * wrapping, so the limit bounds what the client gets, wrapper and all.
 */
export function boundPromptResult(result: GetPromptResult, limits: OutputLimits): GetPromptResult {
  return asToolContent(result, (content) => capToolResult(content, limits));
}
