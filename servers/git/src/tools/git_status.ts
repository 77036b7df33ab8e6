import { z } from 'zod';
import { defineTool, NUL, READ_ONLY_LOCAL, structuredReply, textName, TokenReader } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { repoField } from '../lib/fields.js';
import { StatusParser, withoutPrivate, type StatusEntry, type StatusReport } from '../lib/status.js';

const MAX_RECORD_BYTES = 16 * 1024;

const input = z.strictObject({ repo: repoField });

const entry = z.object({
  path: z.string().describe('Path relative to the repository top'),
  status: z.string().describe('modified, added, deleted, renamed, copied, type changed; for conflicts: both modified, added by us, …'),
  from: z.string().optional().describe('The old path of a rename or copy'),
});

const output = z.object({
  branch: z.string().nullable().describe('The checked-out branch; null when HEAD is detached'),
  head: z.string().nullable().describe('The commit HEAD is at; null before the first commit'),
  upstream: z.string().nullable().describe('The upstream branch, if one is set'),
  ahead: z.number().int().nullable().describe('Commits on the branch that the upstream lacks'),
  behind: z.number().int().nullable().describe('Commits on the upstream that the branch lacks'),
  staged: z.array(entry).describe('Changes in the index (to be committed)'),
  unstaged: z.array(entry).describe('Changes in the working tree not staged'),
  untracked: z.array(z.string()).describe('Untracked files; a wholly untracked folder is one entry ending in /'),
  conflicted: z.array(entry).describe('Unmerged paths'),
  truncated: z.boolean().describe('More entries exist than were listed (limits.status_max_entries)'),
});

function section(title: string, entries: readonly StatusEntry[]): string[] {
  if (entries.length === 0) return [];
  return [`${title} (${entries.length}):`, ...entries.map((e) => `  ${e.status}: ${e.from !== undefined ? `${textName(e.from)} -> ` : ''}${textName(e.path)}`)];
}

function render(report: StatusReport, truncated: boolean, maxEntries: number): string {
  const where = report.branch === null ? `HEAD detached at ${report.head?.slice(0, 12) ?? '(no commit)'}` : `On branch ${report.branch}`;
  const commit = report.branch === null ? '' : report.head === null ? ' (no commits yet)' : ` at ${report.head.slice(0, 12)}`;
  const upstream = report.upstream === null ? '' : `; upstream ${report.upstream}${report.ahead !== null ? `: ahead ${report.ahead}, behind ${report.behind}` : ' (gone)'}`;
  const lines = [`${where}${commit}${upstream}`];
  lines.push(...section('Conflicted', report.conflicted), ...section('Staged', report.staged), ...section('Not staged', report.unstaged));
  if (report.untracked.length > 0) lines.push(`Untracked (${report.untracked.length}):`, ...report.untracked.map((path) => `  ${textName(path)}`));
  if (report.entries === 0) lines.push('Nothing to commit: the working tree and the index match HEAD.');
  if (truncated) lines.push(`[only the first ${maxEntries} changed paths are listed; there are more]`);
  return lines.join('\n');
}

export const gitStatus = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'git_status',
  title: 'Repository status',
  description:
    'The branch, its upstream and ahead/behind counts, and the staged, unstaged, untracked and conflicted files of a repository (like git status). Untracked folders are one entry; submodules are not looked into. At most 1000 files are listed, with a note when there are more.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const repository = await ctx.openRepository(args.repo);
    repository.requireWorkTree('git_status');
    const parser = new StatusParser(ctx.limits.status_max_entries);
    const reader = new TokenReader({ delimiter: NUL, maxTokenBytes: MAX_RECORD_BYTES, onToken: (record) => parser.record(record) });
    const result = await repository.run(['status', '--porcelain=v2', '-z', '--branch', '--untracked-files=normal', '--ignore-submodules=all'], {
      mayReadWorkTree: true,
      signal: ctx.signal,
      onStdout: (chunk) => (reader.push(chunk) ? undefined : 'stop'),
    });
    if (!result.stopped) reader.end();
    const report = withoutPrivate(parser.report, (path) => ctx.denyRead.hides(repository, path));
    const truncated = result.stopped || result.truncated;
    return structuredReply(render(report, truncated, ctx.limits.status_max_entries), {
      branch: report.branch,
      head: report.head,
      upstream: report.upstream,
      ahead: report.ahead,
      behind: report.behind,
      staged: report.staged,
      unstaged: report.unstaged,
      untracked: report.untracked,
      conflicted: report.conflicted,
      truncated,
    });
  },
});
