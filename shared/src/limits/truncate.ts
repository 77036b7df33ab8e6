const encoder = new TextEncoder();

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Cuts a UTF-8 buffer at or before `max` bytes without splitting a character. */
function safeHeadEnd(bytes: Uint8Array, max: number): number {
  let end = Math.min(max, bytes.length);
  while (end > 0 && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** Start index of a tail of at most `max` bytes that does not begin mid-character. */
function safeTailStart(bytes: Uint8Array, max: number): number {
  let start = Math.max(0, bytes.length - max);
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return start;
}

export function truncationMarker(droppedBytes: number, where: 'middle' | 'head' | 'tail'): string {
  if (where === 'middle') return `…(${droppedBytes} bytes truncated)…`;
  return `…(${droppedBytes} bytes truncated from ${where})…`;
}

export interface Truncated {
  readonly text: string;
  readonly truncatedBytes: number;
}

/** Keeps the start and the end of `text` within `maxBytes`, with the marker between them. */
export function truncateHeadTail(text: string, maxBytes: number): Truncated {
  const bytes = encoder.encode(text);
  if (maxBytes <= 0 || bytes.length <= maxBytes) return { text, truncatedBytes: 0 };
  const budget = Math.max(0, maxBytes - 48);
  const headEnd = safeHeadEnd(bytes, Math.ceil(budget / 2));
  const tailStart = safeTailStart(bytes, Math.floor(budget / 2));
  const dropped = tailStart - headEnd;
  const decoder = new TextDecoder();
  return {
    text: `${decoder.decode(bytes.subarray(0, headEnd))}\n${truncationMarker(dropped, 'middle')}\n${decoder.decode(bytes.subarray(tailStart))}`,
    truncatedBytes: dropped,
  };
}

/** Keeps the end of `text` within `maxBytes`, for output whose last part matters most. */
export function truncateKeepTail(text: string, maxBytes: number): Truncated {
  const bytes = encoder.encode(text);
  if (maxBytes <= 0 || bytes.length <= maxBytes) return { text, truncatedBytes: 0 };
  const tailStart = safeTailStart(bytes, Math.max(0, maxBytes - 48));
  return {
    text: `${truncationMarker(tailStart, 'head')}\n${new TextDecoder().decode(bytes.subarray(tailStart))}`,
    truncatedBytes: tailStart,
  };
}

/** Keeps the start of `text` within `maxBytes`. */
export function truncateKeepHead(text: string, maxBytes: number): Truncated {
  const bytes = encoder.encode(text);
  if (maxBytes <= 0 || bytes.length <= maxBytes) return { text, truncatedBytes: 0 };
  const headEnd = safeHeadEnd(bytes, Math.max(0, maxBytes - 48));
  const dropped = bytes.length - headEnd;
  return {
    text: `${new TextDecoder().decode(bytes.subarray(0, headEnd))}\n${truncationMarker(dropped, 'tail')}`,
    truncatedBytes: dropped,
  };
}

/** Cuts one over-long line, saying how much was cut so the model knows the line continues. */
export function truncateLine(line: string, maxChars: number): string {
  if (line.length <= maxChars) return line;
  return `${line.slice(0, maxChars)}… [line truncated: ${line.length - maxChars} more characters]`;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}
