import { ToolError } from '@bulkhead/core';
import { decodeBody, parseContentType } from '../content.js';
import type { JobRunner } from '../renderer.js';
import type { ProviderClient } from './client.js';
import { cleanHit } from './hits.js';
import type { SearchHit, SearchProvider } from './providers.js';

/**
 * DuckDuckGo's HTML endpoint, which needs no key: GET endpoint?q=…, results parsed from its markup.
 * The markup is parsed in a renderer worker, never on the server's thread: a results page is the
 * provider's (or a man in the middle's) to build, and jsdom can take seconds on a big one or
 * overflow its stack on a deeply nested one. `timeoutMs` bounds the whole search, request and parse.
 */
export function duckDuckGoProvider(client: ProviderClient, jobs: JobRunner, timeoutMs: number): SearchProvider {
  return {
    label: client.label,
    async search(query, _count, signal) {
      const deadline = Date.now() + timeoutMs;
      const url = new URL(client.endpoint);
      url.searchParams.set('q', query);
      const response = await client.get(url, { accept: 'text/html' }, signal);
      client.refuseStatus(response);
      const html = decodeBody(response.body, parseContentType(response.contentType));
      // Its bot check answers 202 with a captcha page ("anomaly-modal") instead of results.
      if (response.status === 202 || html.includes('anomaly-modal')) {
        throw new ToolError('DuckDuckGo refused the query as automated traffic (rate limited); try later or configure searxng/brave', 'rate_limited');
      }
      return jobs.run({ kind: 'duckduckgo', html, url: response.url }, deadline, signal, {
        timedOut: () => new ToolError(`${client.label}'s results page could not be read within search.timeout_ms (${timeoutMs} ms)`, 'timeout'),
        failed: (why) => new ToolError(`${client.label}'s results page could not be read: ${why}`, 'provider_error'),
      });
    },
  };
}

/**
 * The organic results of a results page: `div.result` blocks without `result--ad`, the title and
 * link in `a.result__a`, the snippet in `.result__snippet`. jsdom only parses here (DOMParser, no
 * browsing context): no script runs, nothing is loaded, no style sheet is built. It is loaded on
 * first use, as for Markdown. Runs in the renderer's worker (render-worker.ts).
 */
export async function parseDuckDuckGoResults(html: string, page: URL): Promise<SearchHit[]> {
  const { JSDOM, VirtualConsole } = await import('jsdom');
  const { window } = new JSDOM('', { virtualConsole: new VirtualConsole() });
  try {
    const document = new window.DOMParser().parseFromString(html, 'text/html');
    const hits: SearchHit[] = [];
    for (const result of document.querySelectorAll('div.result:not(.result--ad)')) {
      const link = result.querySelector('a.result__a');
      const href = link?.getAttribute('href');
      if (link === null || href == null) continue;
      const hit = cleanHit({ title: link.textContent ?? '', url: targetOf(href, page), snippet: result.querySelector('.result__snippet')?.textContent ?? '' }, 'text');
      if (hit !== undefined) hits.push(hit);
    }
    return hits;
  } finally {
    window.close();
  }
}

/**
 * Where a result link leads: DuckDuckGo wraps targets as //duckduckgo.com/l/?uddg=<target>. Any
 * other link back to DuckDuckGo (an ad's y.js, a settings page) is no result.
 */
function targetOf(href: string, page: URL): string | undefined {
  let link: URL;
  try {
    link = new URL(href, page);
  } catch {
    return undefined;
  }
  const wrapped = link.searchParams.get('uddg');
  if (link.pathname === '/l/' && wrapped !== null) return wrapped;
  return isDuckDuckGo(link) || link.host === page.host ? undefined : link.href;
}

function isDuckDuckGo(url: URL): boolean {
  return url.hostname === 'duckduckgo.com' || url.hostname.endsWith('.duckduckgo.com');
}
