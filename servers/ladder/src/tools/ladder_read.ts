import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool, repoField, repoOf } from '../context.js';
import type { RungReading } from '../ladder/ladder.js';

const input = z.strictObject({
  repo: repoField,
  path: z.string().min(1).max(4096).describe('_repo, a directory (src), a file (src/index.js), _release/<tag> or _changeset/<id>'),
  commit: z.string().min(1).max(1024).optional().describe('Measure freshness at this commit, branch or tag (default HEAD)'),
});

const output = z.object({ reading: z.custom<RungReading>().describe('{repo, path, checkedAt, rung (or null when unwritten), freshness, children: [{path, kind, summary, revision, freshness}]}') });

export const ladderRead = defineLadderTool({
  name: 'ladder_read',
  title: 'Read a rung',
  description:
    "A path's rung (summary and body) with its freshness at HEAD or a given commit — fresh (the path is unchanged since the rung's commit), stale (it changed), missing (it is gone) or unwritten (no rung yet) — and the summaries of the rungs directly under it.",
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async call(deps, _principal, args, signal) {
    const repository = await deps.openRepository(repoOf(deps, args.repo), signal);
    return { reading: await deps.ladder.readRung(repository, args.path, args.commit) };
  },
  render({ reading }) {
    const head = `${reading.repo} ${reading.path} [${reading.freshness} at ${reading.checkedAt.slice(0, 12)}]`;
    const rung = reading.rung
      ? [`revision ${reading.rung.revision} by ${reading.rung.author}, anchored to ${reading.rung.commit.slice(0, 12)}`, reading.rung.summary, ...(reading.rung.body ? ['', reading.rung.body] : [])]
      : ['no rung yet: write one with ladder_write_rung'];
    const children = reading.children.length > 0 ? ['', 'children:', ...reading.children.map((child) => `  ${child.path} [${child.freshness}] ${child.summary}`)] : [];
    return [head, ...rung, ...children].join('\n');
  },
});
