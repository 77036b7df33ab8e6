import { z } from 'zod';
import { ToolError } from '@bulkhead/core';
import { statusText, type ProviderClient } from './client.js';
import { hitsFromJson } from './hits.js';
import type { SearchProvider } from './providers.js';

/** SearXNG's format=json answer; only the fields read here are checked. */
const searxngAnswer = z.object({ results: z.array(z.unknown()) });

/** A SearXNG instance: GET <base>/search?q=…&format=json. It takes no result count: the tool cuts the list. */
export function searxngProvider(client: ProviderClient): SearchProvider {
  return {
    label: client.label,
    async search(query, _count, signal) {
      const url = new URL('search', client.endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const response = await client.get(url, { accept: 'application/json' }, signal);
      if (response.status === 403) {
        throw new ToolError(
          `${client.label} at ${client.endpoint.href} answered ${statusText(403)}: its JSON API is probably not enabled; add json to search.formats in the instance's settings.yml (formats: [html, json])`,
          'provider_error',
        );
      }
      client.refuseStatus(response);
      const answer = searxngAnswer.safeParse(client.json(response));
      if (!answer.success) throw new ToolError(`${client.label} answered JSON without a results list`, 'provider_error');
      return hitsFromJson(answer.data.results, 'content');
    },
  };
}
