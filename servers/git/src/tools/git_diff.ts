import { z } from 'zod';
import { commitRevision, defineTool, exactPathspec, READ_ONLY_LOCAL, repositoryPath, structuredReply, ToolError } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { diffLimits, diffOutputSchema, renderDiff, runDiff, structuredDiff } from '../lib/diff.js';
import { repoField, repoPathDescription } from '../lib/fields.js';

const input = z.strictObject({
  repo: repoField,
  from: z.string().max(1024).optional().describe('Compare from this commit (branch, tag, hash, HEAD~1); without to, against the working tree (or the index with staged)'),
  to: z.string().max(1024).optional().describe('Compare up to this commit; needs from'),
  staged: z.boolean().optional().describe('Show what is staged: the index against HEAD (or against from)'),
  path: z.string().max(4096).optional().describe(`Only this file or folder, ${repoPathDescription}`),
  context_lines: z.number().int().min(0).max(100).optional().describe('Unchanged lines around each change (default 3)'),
  stat_only: z.boolean().optional().describe('Only the list of files with +added −deleted counts, no patches'),
});

export const gitDiff = defineTool<GitCapabilities, typeof input, typeof diffOutputSchema>({
  name: 'git_diff',
  title: 'Show changes',
  description:
    'Changes as a unified diff: the working tree against the index by default, staged changes with staged, or between two commits with from and to (from alone: against the working tree). Lists every changed file with status and +/− counts first. Patches are cut at 400 lines per file and 200 KiB in all, with a note saying what was cut; binary files, lockfiles and secrets are listed without their lines. stat_only gives just the list.',
  input,
  output: diffOutputSchema,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    if (args.to !== undefined && args.from === undefined) throw new ToolError('to needs from: give the commit to compare from as well', 'bad_argument');
    if (args.to !== undefined && args.staged) throw new ToolError('staged compares the index, so it takes from but not to; leave out staged to compare two commits', 'bad_argument');
    const pathspec = args.path !== undefined ? [exactPathspec(repositoryPath(args.path, 'path'))] : [];
    const requests = [...(args.from !== undefined ? [{ value: args.from, argument: 'from' }] : []), ...(args.to !== undefined ? [{ value: args.to, argument: 'to' }] : [])];
    const repository = await ctx.openRepository(args.repo);
    if (!args.staged && args.to === undefined) repository.requireWorkTree('a diff against the working tree');
    // A bare repository has no index of its own: git would compare HEAD with an empty one, every file "deleted".
    if (args.staged) repository.requireWorkTree('a diff of the staged changes (the index)');
    const statOnly = args.stat_only ?? false;
    const output = await repository.namingMissingRevisions(
      requests,
      () =>
        runDiff(repository, {
          command: ['diff', ...(args.staged ? ['--cached'] : [])],
          revisions: requests.map((request) => commitRevision(request.value)),
          pathspec: [...pathspec, ...ctx.denyRead.excludes(repository)],
          contextLines: args.context_lines ?? 3,
          statOnly,
          limits: diffLimits(ctx.limits),
          denyRead: ctx.denyRead.in(repository),
          lockfiles: ctx.lockfiles,
          signal: ctx.signal,
        }),
      ctx.signal,
    );
    return structuredReply(renderDiff(output, statOnly), structuredDiff(output));
  },
});
