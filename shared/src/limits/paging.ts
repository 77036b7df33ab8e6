export interface Page<T> {
  readonly items: readonly T[];
  readonly offset: number;
  readonly total: number;
  /** Offset of the next page, or undefined when this page reaches the end. */
  readonly nextOffset: number | undefined;
}

export function paginate<T>(items: readonly T[], offset: number, limit: number): Page<T> {
  const start = Math.max(0, Math.min(offset, items.length));
  const end = Math.min(items.length, start + Math.max(0, limit));
  return {
    items: items.slice(start, end),
    offset: start,
    total: items.length,
    nextOffset: end < items.length ? end : undefined,
  };
}

/** The footer every paged result ends with, telling the model exactly how to read on. */
export function pageFooter(page: Pick<Page<unknown>, 'offset' | 'total' | 'nextOffset'>, shown: number, noun: string): string {
  if (page.nextOffset === undefined) return '';
  const remaining = page.total - page.nextOffset;
  return `[showing ${noun} ${page.offset + 1}-${page.offset + shown} of ${page.total}; ${remaining} more; next: offset=${page.nextOffset}]`;
}
