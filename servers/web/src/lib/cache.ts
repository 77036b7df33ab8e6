import type { FetchedResponse, ResponseCache } from './fetch.js';

interface HeldResponse {
  readonly response: FetchedResponse;
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
}

export interface MemoryCacheLimits {
  /** Body bytes held in all; 0 holds nothing. */
  readonly maxBytes: number;
  readonly maxEntries: number;
}

/**
 * Complete 200 responses that carry an ETag or a Last-Modified, held in memory so the next fetch of
 * the same URL asks the server whether they changed and, on 304, reuses the body instead of
 * downloading it again. The least recently used go first when a bound is reached.
 */
export class MemoryResponseCache implements ResponseCache {
  private readonly held = new Map<string, HeldResponse>();
  private bytes = 0;

  constructor(private readonly limits: MemoryCacheLimits) {}

  get size(): number {
    return this.held.size;
  }

  conditionalHeaders(url: string): Record<string, string> {
    const entry = this.held.get(cacheKey(url));
    if (entry === undefined) return {};
    return {
      ...(entry.etag !== undefined ? { 'if-none-match': entry.etag } : {}),
      ...(entry.lastModified !== undefined ? { 'if-modified-since': entry.lastModified } : {}),
    };
  }

  notModified(url: string): FetchedResponse | undefined {
    const key = cacheKey(url);
    const entry = this.held.get(key);
    if (entry === undefined) return undefined;
    this.held.delete(key);
    this.held.set(key, entry);
    return { ...entry.response, revalidated: true };
  }

  offer(response: FetchedResponse): void {
    const { headers } = response;
    const key = cacheKey(response.url);
    this.forget(key);
    const etag = single(headers['etag']);
    const lastModified = single(headers['last-modified']);
    if (response.status !== 200 || response.truncated || (etag === undefined && lastModified === undefined)) return;
    if (/\bno-store\b/i.test(single(headers['cache-control']) ?? '')) return;
    if (response.body.length > this.limits.maxBytes) return;
    this.held.set(key, { response: { ...response, revalidated: false }, etag, lastModified });
    this.bytes += response.body.length;
    for (const [oldest, entry] of this.held) {
      if (this.bytes <= this.limits.maxBytes && this.held.size <= this.limits.maxEntries) break;
      this.held.delete(oldest);
      this.bytes -= entry.response.body.length;
    }
  }

  private forget(key: string): void {
    const entry = this.held.get(key);
    if (entry === undefined) return;
    this.held.delete(key);
    this.bytes -= entry.response.body.length;
  }
}

/** A fragment never reaches the server, so it does not make a different response. */
function cacheKey(url: string): string {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}

function single(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}
