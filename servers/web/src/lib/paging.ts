export interface TextPage {
  readonly text: string;
  readonly start: number;
  readonly total: number;
  /** Where the next page starts, or null when this one reaches the end. */
  readonly next: number | null;
}

/**
 * A window of at most `maxLength` characters from `start`, and at most `maxBytes` bytes of UTF-8
 * when given (so the page fits the server's output cap whole and the rest stays reachable by
 * start_index); never ends between the two halves of a surrogate pair.
 */
export function pageText(text: string, start: number, maxLength: number, maxBytes?: number): TextPage {
  const from = Math.min(start, text.length);
  let end = Math.min(text.length, from + maxLength);
  if (end < text.length && end > from && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  if (maxBytes !== undefined && (end - from) * 3 > maxBytes) {
    // encodeInto stops where the next character would not fit, never inside a surrogate pair.
    const { read } = new TextEncoder().encodeInto(text.slice(from, end), new Uint8Array(Math.max(maxBytes, 4)));
    end = from + read;
  }
  return { text: text.slice(from, end), start: from, total: text.length, next: end < text.length ? end : null };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The line after a page telling the model how much is left and how to read on. */
export function textPageFooter(page: TextPage): string {
  if (page.next === null) return page.start > 0 ? `[characters ${page.start}-${page.total} of ${page.total}; end of content]` : '';
  return `[characters ${page.start}-${page.next} of ${page.total}; ${page.total - page.next} more; call again with start_index=${page.next} to continue]`;
}
