import { z } from 'zod';
import { ToolError } from '@bulkhead/core';
import type { WebSearchPolicy } from '../../policy.js';
import { readApiKey } from './api-key.js';
import { statusText, type ProviderClient } from './client.js';
import { hitsFromJson } from './hits.js';
import type { SearchProvider } from './providers.js';

/** Brave's web search answer; only the fields read here are checked, the rest may change freely. */
const braveAnswer = z.object({
  web: z.object({ results: z.array(z.unknown()) }).optional(),
});

/** The Brave Search API: GET endpoint?q=…&count=N with the key in X-Subscription-Token. */
export function braveProvider(client: ProviderClient, policy: WebSearchPolicy, controlDir: string): SearchProvider {
  return {
    label: client.label,
    async search(query, count, signal) {
      const key = readApiKey(policy, controlDir, client.label);
      const url = new URL(client.endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(count));
      const response = await client.get(url, { accept: 'application/json', 'x-subscription-token': key }, signal);
      if (response.status === 401 || response.status === 403) {
        throw new ToolError(`the Brave API key was refused (${statusText(response.status)}); check ${policy.api_key_env} or search.api_key_file`, 'api_key_refused');
      }
      client.refuseStatus(response);
      const answer = braveAnswer.safeParse(client.json(response));
      if (!answer.success) throw new ToolError(`${client.label} answered JSON that is not a web search result`, 'provider_error');
      // Brave marks the query's words with <strong> and escapes entities in titles and descriptions.
      return hitsFromJson(answer.data.web?.results ?? [], 'description');
    },
  };
}
