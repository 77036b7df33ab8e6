import { ErrorCode, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_BINARY_BYTES, formatBytes, truncateHeadTail, type OutputLimits } from '@bulkhead/core';
import { ProtocolError } from './protocol-error.js';

/**
 * A resource read held to the gateway's output limits, like a tool result: text over the text cap
 * is cut head and tail with the marker that says how much was cut (the caps are shared by all the
 * contents of one reply); binary data over the binary cap is refused, since a cut blob is no longer
 * the file, and silently dropping it would look like an empty resource.
 */
/** What a text content keeps at least once the budget is spent: room for the marker and a little text. */
const MIN_TEXT_BYTES = 96;

export function boundResourceContents(result: ReadResourceResult, limits: OutputLimits, what: string): ReadResourceResult {
  const binaryCap = limits.maxBinaryBytes ?? DEFAULT_MAX_BINARY_BYTES;
  const binary = result.contents.reduce((sum, content) => sum + ('blob' in content && typeof content.blob === 'string' ? content.blob.length : 0), 0);
  if (binaryCap > 0 && binary > binaryCap) {
    throw new ProtocolError(
      ErrorCode.InvalidRequest,
      `${what} holds ${formatBytes(Math.floor((binary * 3) / 4))} of binary data, over the gateway's cap of ${formatBytes(Math.floor((binaryCap * 3) / 4))} for binary data in one reply; it was not passed on`,
    );
  }
  const textCap = limits.maxOutputBytes;
  if (textCap <= 0) return result;
  let textLeft = textCap;
  const contents = result.contents.map((content) => {
    if (!('text' in content) || typeof content.text !== 'string') return content;
    const bytes = Buffer.byteLength(content.text);
    const kept = bytes <= textLeft ? content.text : truncateHeadTail(content.text, Math.max(textLeft, MIN_TEXT_BYTES)).text;
    textLeft = Math.max(0, textLeft - Buffer.byteLength(kept));
    return kept === content.text ? content : { ...content, text: kept };
  });
  return { ...result, contents };
}
