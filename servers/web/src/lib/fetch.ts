import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { request, type Dispatcher } from 'undici';
import { errorMessage, NetworkRefusal, ToolError, type NetworkGuard } from '@bulkhead/core';

/** Redirects followed before a fetch gives up. */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface FetchOptions {
  readonly guard: NetworkGuard;
  readonly dispatcher: Dispatcher;
  readonly userAgent: string;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** The call's own signal (client cancellation). */
  readonly signal: AbortSignal;
  /** Headers sent besides user-agent, accept and accept-encoding (a provider's API key, its accept type). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Redirects followed before giving up (default MAX_REDIRECTS; 0 refuses any redirect). */
  readonly maxRedirects?: number;
  /** Called with every hop's URL after the guard passed it and before anything is sent (robots.txt). */
  readonly beforeHop?: (url: URL, signal: AbortSignal) => Promise<void>;
  /** Revalidates responses it holds with If-None-Match / If-Modified-Since and keeps new ones. */
  readonly cache?: ResponseCache;
}

export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** What a response cache offers a fetch: conditional headers for a URL, and the body behind a 304. */
export interface ResponseCache {
  conditionalHeaders(url: string): Record<string, string>;
  /** The held response for a URL whose server answered 304 Not Modified. */
  notModified(url: string): FetchedResponse | undefined;
  /** Offers a complete response; the cache decides whether to keep it. */
  offer(response: FetchedResponse): void;
}

export interface FetchedResponse {
  /** The URL the body came from, after redirects. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string;
  readonly headers: ResponseHeaders;
  /** The decoded body, at most maxBytes. */
  readonly body: Buffer;
  /** The body went on past maxBytes (after decoding) and was cut there. */
  readonly truncated: boolean;
  /** The body came from the cache after the server answered 304 Not Modified. */
  readonly revalidated?: boolean;
}

/**
 * GETs a URL through the guarded dispatcher, following redirects by hand so each hop's URL is
 * checked by the guard (and each hop's addresses by the connector) before anything is sent to it.
 */
export async function guardedFetch(startUrl: string, options: FetchOptions): Promise<FetchedResponse> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timeout]);
  const start = options.guard.checkUrl(startUrl);
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  let url = start;
  let redirectedFrom: URL | undefined;
  let redirects = 0;
  let revalidate = true;
  try {
    for (;;) {
      await options.beforeHop?.(url, signal);
      const conditional = revalidate ? (options.cache?.conditionalHeaders(url.href) ?? {}) : {};
      const response = await request(url, {
        method: 'GET',
        dispatcher: options.dispatcher,
        signal,
        headers: {
          'user-agent': options.userAgent,
          accept: 'text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
          // A provider's key is for the provider: a redirect to another origin does not carry it.
          ...(url.origin === start.origin ? options.headers : {}),
          ...conditional,
        },
      });
      const location = headerValue(response.headers['location']);
      if (REDIRECT_STATUSES.has(response.statusCode) && location !== undefined) {
        await response.body.dump();
        const next = redirectTarget(url, location, options.guard);
        if (maxRedirects === 0) throw new ToolError(`${url.href} redirected to ${next.href}; redirects are not followed here`, 'redirect_refused');
        if (redirects === maxRedirects) throw new ToolError(`more than ${maxRedirects} redirects (the last one, from ${url.href}, pointed to ${next.href})`, 'too_many_redirects');
        redirects += 1;
        redirectedFrom = url;
        url = next;
        revalidate = true;
        continue;
      }
      if (response.statusCode === 304) {
        await response.body.dump();
        const held = options.cache?.notModified(url.href);
        if (held !== undefined) return { ...held, url: url.href };
        if (Object.keys(conditional).length === 0) throw new ToolError(`${url.href} answered HTTP 304 Not Modified to a request that asked for no revalidation`, 'http_error');
        // The held response was let go while the request was out: ask again, unconditionally.
        revalidate = false;
        continue;
      }
      const { body, truncated } = await readCapped(response.body, headerValue(response.headers['content-encoding']), options.maxBytes);
      const fetched: FetchedResponse = {
        url: url.href,
        status: response.statusCode,
        contentType: headerValue(response.headers['content-type']) ?? '',
        headers: response.headers,
        body,
        truncated,
      };
      options.cache?.offer(fetched);
      return fetched;
    }
  } catch (error) {
    if (timeout.aborted) throw new ToolError(`${url.href} did not answer in full within ${options.timeoutMs} ms`, 'timeout');
    // A hop's address refused at connect time is a refused redirect, named as such.
    if (error instanceof NetworkRefusal && !(error instanceof RedirectRefusal) && redirectedFrom !== undefined) throw new RedirectRefusal(redirectedFrom, url.href, error.message);
    if (error instanceof ToolError) throw error;
    throw new ToolError(`fetching ${url.href} failed: ${errorMessage(error)}`, 'fetch_failed');
  }
}

/** A redirect whose target the guard refused. */
export class RedirectRefusal extends NetworkRefusal {
  constructor(from: URL, target: string, reason: string) {
    super(`${from.href} redirected to ${target}, which is refused: ${reason}`);
  }
}

function redirectTarget(from: URL, location: string, guard: NetworkGuard): URL {
  let target: string;
  try {
    target = new URL(location, from).href;
  } catch {
    // The server's text is not repeated: outside the untrusted wrapper only parsed URLs are shown.
    throw new ToolError(`${from.href} redirected to a Location that is not a URL`, 'bad_redirect');
  }
  try {
    return guard.checkUrl(target);
  } catch (error) {
    if (error instanceof NetworkRefusal) throw new RedirectRefusal(from, target, error.message);
    throw error;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A header token as the server sent it when it is one short token; the server's other words stay out of our messages. */
function shownToken(value: string): string {
  const token = value.trim();
  return /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}$/.test(token) ? `"${token}"` : 'that the server named';
}

/** The decoder for a Content-Encoding; identity passes bytes through. */
function decoderFor(encoding: string | undefined): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case undefined:
    case '':
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'br':
      return createBrotliDecompress();
    case 'deflate':
      return createInflate();
    default:
      throw new ToolError(`the response uses the content encoding ${shownToken(encoding ?? '')}, which is not decoded here (gzip, br and deflate are)`, 'unsupported_encoding');
  }
}

/**
 * Reads a body up to `maxBytes` of decoded bytes and stops there: the cap counts what decoding
 * produces, so a small compressed body that inflates without end (a bomb) is stopped at the cap.
 */
async function readCapped(body: Readable, encoding: string | undefined, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const decoder = decoderFor(encoding);
  const source: Readable = decoder === undefined ? body : body.pipe(decoder);
  // pipe() does not carry a source error on: without this the decoder would wait for bytes forever.
  if (decoder !== undefined) body.on('error', (error) => decoder.destroy(error));
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(buffer);
      size += buffer.length;
    }
  } catch (error) {
    throw new ToolError(`the response body could not be read${decoder !== undefined ? ` or decoded (${shownToken(encoding ?? '')})` : ''}: ${errorMessage(error)}`, 'bad_body');
  } finally {
    body.destroy();
    if (source !== body) source.destroy();
  }
  return { body: Buffer.concat(chunks), truncated: false };
}
