import { ToolError } from '@bulkhead/core';
import type { WebSearchPolicy } from '../../policy.js';
import type { JobRunner } from '../renderer.js';
import { braveProvider } from './brave.js';
import { ProviderClient, type SearchNetwork } from './client.js';
import { duckDuckGoProvider } from './duckduckgo.js';
import { searxngProvider } from './searxng.js';

export interface SearchHit {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

export interface SearchProvider {
  /** How messages name the provider: "DuckDuckGo", "SearXNG", "Brave Search". */
  readonly label: string;
  /**
   * Hits in the provider's order, titles and snippets as plain text. `count` is what the caller
   * wants: a provider with a count parameter asks for that many; the caller dedupes and cuts.
   */
  search(query: string, count: number, signal: AbortSignal): Promise<SearchHit[]>;
}

export interface ProviderSetup {
  readonly policy: WebSearchPolicy;
  readonly network: SearchNetwork;
  /** The control-plane folder: a relative search.api_key_file is read from here. */
  readonly controlDir: string;
  /** Parses a provider's HTML off the server's thread (DuckDuckGo). */
  readonly jobs: JobRunner;
}

const DEFAULT_ENDPOINTS = {
  duckduckgo: 'https://html.duckduckgo.com/html/',
  brave: 'https://api.search.brave.com/res/v1/web/search',
} as const;

const LABELS = { duckduckgo: 'DuckDuckGo', searxng: 'SearXNG', brave: 'Brave Search' } as const;

/** The provider web_policy.yaml chose; a SearXNG without an endpoint is refused here, at call time. */
export function searchProvider(setup: ProviderSetup): SearchProvider {
  const { policy } = setup;
  const label = LABELS[policy.provider];
  if (policy.provider === 'searxng') {
    const client = new ProviderClient(label, policy, searxngBase(policy.endpoint), setup.network);
    return searxngProvider(client);
  }
  const client = new ProviderClient(label, policy, new URL(policy.endpoint ?? DEFAULT_ENDPOINTS[policy.provider]), setup.network);
  return policy.provider === 'brave' ? braveProvider(client, policy, setup.controlDir) : duckDuckGoProvider(client, setup.jobs, policy.timeout_ms);
}

function searxngBase(endpoint: string | undefined): URL {
  if (endpoint === undefined) {
    throw new ToolError('search.provider is searxng but search.endpoint is not set: set it in web_policy.yaml to the instance\'s base URL (https://searx.example.org/)',
      'search_not_configured',
    );
  }
  const base = new URL(endpoint);
  // The instance may live under a path (https://host/searx/): its API is relative to that folder.
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}
