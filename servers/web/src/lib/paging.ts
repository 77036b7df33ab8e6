export interface TextPage {
  readonly text: string;
  readonly start: number;
  readonly total: number;
  /** Where the next page starts, or null when this one reaches the end. */
  readonly next: number | null;
}

/** A window of `maxLength` characters from `start`; never ends between the two halves of a surrogate pair. */
export function pageText(text: string, start: number, maxLength: number): TextPage {
  const from = Math.min(start, text.length);
  let end = Math.min(text.length, from + maxLength);
  if (end < text.length && end > from && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
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
