import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool } from '../context.js';
import { QUERY_MAX_CHARS, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from '../ladder/ladder.js';
import { idSchemas } from '../store/work-queue.js';
import type { SearchHit } from '../store/rungs.js';

const input = z.strictObject({
  query: z.string().min(1).max(QUERY_MAX_CHARS).describe('Words to find in rung summaries, bodies and paths'),
  repo: idSchemas.repo.optional().describe('Only this repository (default: every repository)'),
  limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional().describe(`How many hits (default ${SEARCH_DEFAULT_LIMIT})`),
});

const output = z.object({
  hits: z.array(z.custom<SearchHit>()).describe('Best first: {repo, path, kind, summary, snippet, revision, commit, score}'),
  broad: z.boolean().describe('True when the words are in so many rungs that only the 2,000 most recently created matches were ranked'),
});

export const ladderSearch = defineLadderTool({
  name: 'ladder_search',
  title: 'Search the ladder',
  description: 'Full-text search over the rungs of every repository (or one), best first, with a snippet whose matches are in [brackets].',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async call(deps, _principal, args) {
    const { hits, broad } = await deps.ladder.search(args.query, { repo: args.repo, limit: args.limit });
    return { hits, broad };
  },
  render({ hits, broad }) {
    if (hits.length === 0) return 'no rung matches';
    const lines = hits.map((hit) => `${hit.repo} ${hit.path}: ${hit.summary}\n  ${hit.snippet}`);
    if (broad) lines.push('[these words are in very many rungs: only the 2,000 most recently created matches were ranked; add a rarer word to search them all]');
    return lines.join('\n');
  },
});
