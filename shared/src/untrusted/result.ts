import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { redactText } from '../audit/redact.js';
import type { ContentBlock } from '../kit/results.js';
import { truncateHeadTail } from '../limits/truncate.js';
import { neutralizeInvisible } from './neutralize.js';
import { defuseUntrusted, holdsUntrustedTag, wrapUntrusted } from './wrap.js';

/** An error message of a server is for a model to act on, not a document: this much is plenty. */
const MAX_ERROR_MESSAGE_BYTES = 8 * 1024;

/** Secrets redacted first (an invisible character written out would split a token the redactor knows), then invisible characters written out. */
function clean(text: string): string {
  return neutralizeInvisible(redactText(text));
}

/** Whether `text` is exactly one wrapper of `source` with nothing inside that could close it. */
function isWrappedBy(source: string, text: string): boolean {
  const [head, tail] = wrapUntrusted(source, '\u0000').split('\u0000') as [string, string];
  if (!text.startsWith(head) || !text.endsWith(tail) || text.length < head.length + tail.length) return false;
  return !holdsUntrustedTag(text.slice(head.length, text.length - tail.length));
}

/**
 * Text from a server the user does not trust, made data: secrets redacted, invisible and
 * direction-changing characters written out, every spelling of the wrapper's tag defused, then
 * wrapped. Text that already is this wrapper of `source` is returned as it is, so passing a
 * result through twice (a compartment that labels its own results, behind the gateway) wraps once.
 */
export function untrustedText(source: string, text: string): string {
  const cleaned = clean(text);
  if (isWrappedBy(source, cleaned)) return cleaned;
  return wrapUntrusted(source, defuseUntrusted(cleaned));
}

/** A protocol error's message from an untrusted server, bounded and made data like its results. */
export function untrustedErrorMessage(source: string, message: string): string {
  return untrustedText(source, truncateHeadTail(message, MAX_ERROR_MESSAGE_BYTES).text);
}

/** Strings anywhere in a value redacted and neutralised; keys and the shape stay, so it still matches its schema. */
function cleanValues(value: unknown): unknown {
  if (typeof value === 'string') return clean(value);
  if (Array.isArray(value)) return value.map(cleanValues);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = cleanValues(inner);
    return out;
  }
  return value;
}

function untrustedBlock(source: string, block: ContentBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return { ...block, text: untrustedText(source, block.text) };
    case 'resource': {
      const resource = block.resource;
      return 'text' in resource && typeof resource.text === 'string' ? { ...block, resource: { ...resource, text: untrustedText(source, resource.text) } } : block;
    }
    case 'resource_link':
      // A link's name and title are labels the client shows; its description is free text like any result.
      return {
        ...block,
        name: clean(block.name),
        ...(block.title !== undefined ? { title: clean(block.title) } : {}),
        ...(block.description !== undefined ? { description: untrustedText(source, block.description) } : {}),
      };
    default:
      // Images and audio are not read as instructions; they pass as they are.
      return block;
  }
}

/**
 * A tool result of a server the user does not trust (`source` names it, e.g. `acme (third-party
 * MCP server)`), as data: every text block and embedded text resource wrapped as untrusted
 * content, error results too; strings in structured content redacted and neutralised but not
 * wrapped, so the object keeps its schema. One pass over the result.
 */
export function untrustedResult(source: string, result: CallToolResult): CallToolResult {
  const content = result.content.map((block) => untrustedBlock(source, block));
  return result.structuredContent === undefined ? { ...result, content } : { ...result, content, structuredContent: cleanValues(result.structuredContent) as Record<string, unknown> };
}
