import type { SearchHit } from './providers.js';

/** The first hit for each page: URLs differing only in scheme, host case, fragment or a trailing slash are one page. */
export function dedupeHits(hits: readonly SearchHit[]): SearchHit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => {
    const key = pageKey(hit.url);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Hits come from cleanHit, so every URL parses; the host is already lower case once parsed. */
function pageKey(text: string): string {
  const url = new URL(text);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.host}${path}${url.search}`;
}
