import { z } from 'zod';
import { defineLadderTool, repoField, repoOf, WRITES_LOCAL } from '../context.js';
import type { ReindexResult } from '../ladder/ladder.js';

const input = z.strictObject({ repo: repoField });

const output = z.object({ reindex: z.custom<ReindexResult>().describe('{repo, indexed, checkedAt, counts, outdated: [{path, freshness}]}') });

export const ladderReindex = defineLadderTool({
  name: 'ladder_reindex',
  title: 'Rebuild the search index',
  description: "Rebuilds a repository's search entries from its rungs and measures every rung's freshness at HEAD again; lists the rungs to rewrite (stale or missing).",
  input,
  output,
  // Rebuilding twice gives the same index.
  annotations: { ...WRITES_LOCAL, idempotentHint: true },
  risk: 'medium',
  async call(deps, _principal, args, signal) {
    const repository = await deps.openRepository(repoOf(deps, args.repo), signal);
    return { reindex: await deps.ladder.reindex(repository, deps.progress) };
  },
  render({ reindex }) {
    const { fresh, stale, missing } = reindex.counts;
    return [
      `${reindex.repo}: ${reindex.indexed} rungs indexed; at ${reindex.checkedAt.slice(0, 12)} ${fresh} fresh, ${stale} stale, ${missing} missing`,
      ...reindex.outdated.map((rung) => `  rewrite ${rung.path} (${rung.freshness})`),
    ].join('\n');
  },
});
