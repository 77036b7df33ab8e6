import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool, repoField, repoOf } from '../context.js';
import { UNWRITTEN_RELEASES_MAX_TAGS, type LadderTree } from '../ladder/ladder.js';

const input = z.strictObject({
  repo: repoField,
  commit: z.string().min(1).max(1024).optional().describe('Measure freshness at this commit, branch or tag (default HEAD)'),
});

const output = z.object({ tree: z.custom<LadderTree>().describe('{repo, checkedAt, rungs: [{path, kind, summary, revision, commit, author, writtenAt, freshness}], unwritten: [{path, kind: repo|directory|file|release}], unwrittenReleasesTruncated, counts}') });

export const ladderTree = defineLadderTool({
  name: 'ladder_tree',
  title: 'The whole ladder',
  description: "Every rung of a repository with its freshness at HEAD (or a commit), and every path that has no rung yet (tags included, as _release/<tag>), in one call. Start here to see what is summarised and what needs rewriting.",
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async call(deps, _principal, args, signal) {
    const repository = await deps.openRepository(repoOf(deps, args.repo), signal);
    return { tree: await deps.ladder.tree(repository, args.commit) };
  },
  render({ tree }) {
    const { fresh, stale, missing, unwritten } = tree.counts;
    return [
      `${tree.repo} at ${tree.checkedAt.slice(0, 12)}: ${fresh} fresh, ${stale} stale, ${missing} missing, ${unwritten} unwritten`,
      ...tree.rungs.map((rung) => `${rung.path} [${rung.freshness}] r${rung.revision} ${rung.summary}`),
      ...(tree.unwritten.length > 0 ? ['', 'unwritten:', ...tree.unwritten.map((path) => `  ${path.path} (${path.kind})`)] : []),
      ...(tree.unwrittenReleasesTruncated ? [`  (more than ${UNWRITTEN_RELEASES_MAX_TAGS} tags: only the first ${UNWRITTEN_RELEASES_MAX_TAGS} by name were checked for a release rung)`] : []),
    ].join('\n');
  },
});
