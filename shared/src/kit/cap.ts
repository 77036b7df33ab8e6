import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatBytes, truncateHeadTail } from '../limits/truncate.js';
import { DEFAULT_MAX_BINARY_BYTES, type OutputLimits } from '../limits/index.js';
import type { ContentBlock } from './results.js';

/** A block past the budget still says how much was cut. */
const MIN_BLOCK_BYTES = 96;

/**
 * Bounds a result whatever produced it (our tools, or a third-party server behind the gateway):
 * text blocks and embedded text resources share the text budget, each keeping its head and tail;
 * images, audio and embedded blobs share the binary budget, and one that does not fit is replaced
 * by a line naming its type and size; structured content larger than the text budget is dropped
 * and the result marked as an error, since a cut-down object would no longer match its schema.
 */
export function capToolResult(result: CallToolResult, limits: OutputLimits): CallToolResult {
  const textCap = limits.maxOutputBytes;
  const binaryCap = limits.maxBinaryBytes ?? DEFAULT_MAX_BINARY_BYTES;
  let textLeft = textCap;
  let binaryLeft = binaryCap;

  const capText = (text: string): string => {
    if (textCap <= 0) return text;
    const budget = Math.max(textLeft, MIN_BLOCK_BYTES);
    // Most text fits: measuring it copies nothing, where truncateHeadTail encodes it whole first.
    const bytes = Buffer.byteLength(text);
    const kept = bytes <= budget ? text : truncateHeadTail(text, budget).text;
    textLeft -= kept === text ? bytes : Buffer.byteLength(kept);
    return kept;
  };
  const fitsBinary = (base64: string): boolean => {
    if (binaryCap <= 0) return true;
    if (base64.length > binaryLeft) return false;
    binaryLeft -= base64.length;
    return true;
  };
  const omitted = (what: string, base64: string): ContentBlock => ({
    type: 'text',
    text: `[${what} of ${formatBytes(Math.floor((base64.length * 3) / 4))} omitted: over this result's cap of ${formatBytes(Math.floor((binaryCap * 3) / 4))} for images, audio and binary data]`,
  });

  const content = result.content.map((block): ContentBlock => {
    switch (block.type) {
      case 'text':
        return { ...block, text: capText(block.text) };
      case 'image':
      case 'audio':
        return fitsBinary(block.data) ? block : omitted(`${block.type} ${block.mimeType}`, block.data);
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource && typeof resource.text === 'string') return { ...block, resource: { ...resource, text: capText(resource.text) } };
        if ('blob' in resource && typeof resource.blob === 'string' && !fitsBinary(resource.blob)) return omitted(`resource ${resource.uri}`, resource.blob);
        return block;
      }
      default:
        return block;
    }
  });

  if (result.structuredContent !== undefined && textCap > 0) {
    const structuredBytes = Buffer.byteLength(JSON.stringify(result.structuredContent));
    if (structuredBytes > textCap) {
      const { structuredContent: _dropped, ...rest } = result;
      const note = `[structured result of ${formatBytes(structuredBytes)} dropped: over this result's output cap of ${formatBytes(textCap)}; the text below is capped too. Ask for less (a narrower path, a smaller limit).]`;
      return { ...rest, isError: true, content: [{ type: 'text', text: note }, ...content] };
    }
  }
  return { ...result, content };
}
