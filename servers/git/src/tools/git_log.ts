import { z } from 'zod';
import { checkGitValue, defineTool, exactPathspec, READ_ONLY_LOCAL, repositoryPath, structuredReply, ToolError } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { COMMIT_FORMAT, CommitReader, commitSchema, renderCommit } from '../lib/commits.js';
import { repoField, repoPathDescription } from '../lib/fields.js';
import { logRange } from '../lib/revisions.js';

const input = z.strictObject({
  repo: repoField,
  rev: z.string().max(1024).optional().describe('Where to start: a branch, tag, commit or HEAD~3, or a range main..feature (default HEAD)'),
  path: z.string().max(4096).optional().describe(`Only commits that touch this file or folder, ${repoPathDescription}`),
  since: z.string().max(200).optional().describe('Only commits after this date: 2024-05-01, "2 weeks ago"'),
  until: z.string().max(200).optional().describe('Only commits before this date'),
  author: z.string().max(1000).optional().describe('Only commits whose author name or email matches this extended regular expression'),
  grep: z.string().max(1000).optional().describe('Only commits whose message matches this extended regular expression (fix|bug)'),
  max_count: z.number().int().min(1).max(10_000).optional().describe('How many commits to show (default 50, at most 500)'),
  skip: z.number().int().min(0).max(1_000_000_000).optional().describe('Commits to skip first, for the next page (the footer gives it)'),
});

const output = z.object({
  commits: z.array(commitSchema).describe('Newest first'),
  skip: z.number().int().describe('Commits skipped before the first one shown'),
  next_skip: z.number().int().nullable().describe('skip for the next page; null at the end of the history'),
});

export const gitLog = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'git_log',
  title: 'Commit history',
  description:
    'Commits newest first (like git log) with full hash, parents, author, date, subject and body: 50 by default, paged with skip. Filter by rev or range (main..feature), path, since/until dates, author and grep (extended regular expressions). Messages longer than 4000 characters are cut with a marker.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const maxCount = args.max_count ?? ctx.limits.log_default_count;
    if (maxCount > ctx.limits.log_max_count) {
      throw new ToolError(`max_count ${maxCount} is over the limit of ${ctx.limits.log_max_count} (limits.log_max_count); page with skip instead`, 'out_of_range');
    }
    const skip = args.skip ?? 0;
    const filters = [
      ...(args.since !== undefined ? [`--since=${checkGitValue(args.since, 'since')}`] : []),
      ...(args.until !== undefined ? [`--until=${checkGitValue(args.until, 'until')}`] : []),
      ...(args.author !== undefined ? [`--author=${checkGitValue(args.author, 'author')}`] : []),
      ...(args.grep !== undefined ? [`--grep=${checkGitValue(args.grep, 'grep')}`] : []),
    ];
    const pathspec = args.path !== undefined ? [exactPathspec(repositoryPath(args.path, 'path'))] : [];
    const range = logRange(args.rev ?? 'HEAD', 'rev');
    const repository = await ctx.openRepository(args.repo);
    // One more than asked shows whether another page exists.
    const reader = new CommitReader(maxCount + 1, ctx.limits.body_max_chars);
    let result;
    try {
      result = await repository.namingMissingRevisions(
        range.requests,
        () =>
          repository.run(
            ['log', '-z', COMMIT_FORMAT, '--no-color', '--no-notes', '--extended-regexp', `--max-count=${maxCount + 1}`, `--skip=${skip}`, ...filters, '--end-of-options', range.text, '--', ...pathspec],
            {
              signal: ctx.signal,
              onStdout: (chunk) => {
                reader.push(chunk);
                ctx.progress(`${reader.commits.length} commits read`);
              },
            },
          ),
        ctx.signal,
      );
    } catch (error) {
      if (args.rev === undefined && error instanceof ToolError && error.code === 'no_commits') {
        return structuredReply(`${repository.shownAs} has no commits yet.`, { commits: [], skip, next_skip: null });
      }
      throw error;
    }
    const more = reader.commits.length > maxCount;
    const commits = reader.commits.slice(0, maxCount);
    // A cut stream may have hidden more commits, so the page after the last one read is offered.
    const nextSkip = more ? skip + maxCount : result.truncated && commits.length > 0 ? skip + commits.length : null;
    const notes: string[] = [];
    if (result.truncated) notes.push(`[git's output passed ${ctx.limits.max_read_bytes} bytes (limits.max_read_bytes) and was cut; ask for fewer commits]`);
    if (commits.length === 0) notes.push(skip > 0 ? `[no commits after skipping ${skip}]` : '[no commits match]');
    else notes.push(`[commits ${skip + 1}-${skip + commits.length}${nextSkip !== null ? `; more: skip=${nextSkip}` : '; end of history'}]`);
    const text = [...commits.map(renderCommit), ...notes].join('\n\n');
    return structuredReply(text, { commits, skip, next_skip: nextSkip });
  },
});
