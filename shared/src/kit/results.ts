import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type ContentBlock = CallToolResult['content'][number];

export interface ToolReply<S> {
  readonly content: ContentBlock[];
  readonly structuredContent?: S;
}

export function textReply(text: string): ToolReply<undefined> {
  return { content: [{ type: 'text', text }] };
}

export function structuredReply<S extends Record<string, unknown>>(text: string, structuredContent: S): ToolReply<S> {
  return { content: [{ type: 'text', text }], structuredContent };
}

export function imageReply(data: Buffer, mimeType: string, caption: string): ToolReply<undefined> {
  return { content: [{ type: 'text', text: caption }, { type: 'image', data: data.toString('base64'), mimeType }] };
}

export function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

export function resultBytes(result: CallToolResult): number {
  let total = 0;
  for (const block of result.content) {
    if (block.type === 'text') total += Buffer.byteLength(block.text);
    else if (block.type === 'image' || block.type === 'audio') total += block.data.length;
  }
  if (result.structuredContent) total += Buffer.byteLength(JSON.stringify(result.structuredContent));
  return total;
}
