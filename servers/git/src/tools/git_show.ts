import { z } from 'zod';
import { commitRevision, defineTool, READ_ONLY_LOCAL, structuredReply } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { COMMIT_FORMAT, CommitReader, commitSchema, renderCommit } from '../lib/commits.js';
import { diffFileSchema, diffLimits, renderDiff, runDiff, structuredDiff } from '../lib/diff.js';
import { repoField } from '../lib/fields.js';

const input = z.strictObject({
  repo: repoField,
  rev: z.string().max(1024).describe('The commit to show: a hash, branch, tag or HEAD~2'),
  context_lines: z.number().int().min(0).max(100).optional().describe('Unchanged lines around each change (default 3)'),
});

const output = z.object({
  commit: commitSchema,
  compared_with: z.string().nullable().describe('The parent the patch is against (the first parent of a merge); null for a root commit'),
  files: z.array(diffFileSchema).describe('Files the commit changed; their bounded patches are in the text'),
  total_files: z.number().int().describe('All changed files, listed or not'),
  truncated: z.boolean().describe('Some patches were cut or left out'),
});

export const gitShow = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'git_show',
  title: 'Show a commit',
  description:
    'One commit: hash, parents, author, date and full message, then the files it changed with +/− counts and their patch (against the first parent for a merge; everything for a root commit). Patches are bounded like git_diff: 400 lines per file, 200 KiB in all, binary files, lockfiles and secrets listed without their lines.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const repository = await ctx.openRepository(args.repo);
    const reader = new CommitReader(1, ctx.limits.body_max_chars);
    await repository.namingMissingRevisions(
      [{ value: args.rev, argument: 'rev' }],
      () =>
        repository.run(['log', '-z', COMMIT_FORMAT, '--no-color', '--no-notes', '--max-count=1', '--end-of-options', commitRevision(args.rev), '--'], {
          signal: ctx.signal,
          onStdout: (chunk) => reader.push(chunk),
        }),
      ctx.signal,
    );
    const commit = reader.commits[0]!;
    const oid = commit.hash;
    const parent = commit.parents[0];
    const diff = await runDiff(repository, {
      command: ['diff-tree', '-r', ...(parent === undefined ? ['--root', '--no-commit-id'] : [])],
      revisions: parent === undefined ? [oid] : [parent, oid],
      pathspec: ctx.denyRead.excludes(repository),
      contextLines: args.context_lines ?? 3,
      statOnly: false,
      limits: diffLimits(ctx.limits),
      denyRead: ctx.denyRead.in(repository),
      lockfiles: ctx.lockfiles,
      signal: ctx.signal,
    });
    const against = parent === undefined ? 'a root commit: every file is new' : commit.parents.length > 1 ? `a merge: changes against its first parent ${parent.slice(0, 12)}` : undefined;
    const text = [renderCommit(commit), ...(against ? [`[${against}]`] : []), '', renderDiff(diff, false)].join('\n');
    return structuredReply(text, { commit, compared_with: parent ?? null, ...structuredDiff(diff) });
  },
});
