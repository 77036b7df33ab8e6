import { z } from 'zod';
import { decodeGitName, defineTool, READ_ONLY_LOCAL, repositoryPath, structuredReply, ToolError, utf8PathArgument } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { blameCommitSchema, blameLineSchema, BlameReader } from '../lib/blame.js';
import { BlobReader } from '../lib/blob.js';
import { checkFilePath, readFileAtCommit } from '../lib/blob-request.js';
import { repoField, repoPathDescription } from '../lib/fields.js';

const input = z.strictObject({
  repo: repoField,
  path: z.string().max(4096).describe(`The file, ${repoPathDescription}`),
  rev: z.string().max(1024).optional().describe('Blame the file as it is at this commit (default HEAD; uncommitted changes are not blamed)'),
  start_line: z.number().int().min(1).optional().describe('First line to blame (default 1)'),
  end_line: z.number().int().min(1).optional().describe('Last line to blame (default: 2000 lines from start_line, or the end of the file)'),
});

const output = z.object({
  path: z.string(),
  commit: z.string().describe('The commit the file was blamed at'),
  total_lines: z.number().int().describe('Lines in the file at that commit'),
  lines: z.array(blameLineSchema),
  commits: z.array(blameCommitSchema).describe('Each commit named in lines, once'),
  next_start_line: z.number().int().nullable().describe('start_line for the lines after these; null at the end of the file'),
});

export const gitBlame = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'git_blame',
  title: 'Who changed each line',
  description:
    'For each line of a file at a commit (default HEAD): the commit that last changed it, its author, date and summary (like git blame). At most 2000 lines (256 KiB of text) per call; start_line and end_line pick the range, and the footer gives the next start_line.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const pathBytes = repositoryPath(args.path, 'path');
    const shown = decodeGitName(pathBytes);
    checkFilePath(pathBytes);
    const path = utf8PathArgument(pathBytes, 'path');
    const repository = await ctx.openRepository(args.repo);
    const refusal = ctx.denyRead.refusal(repository, shown, 'its lines are not shown');
    if (refusal) throw new ToolError(refusal, 'protected');
    const rev = args.rev ?? 'HEAD';
    // The line count first (git blame -L past the end of the file is an error, not a shorter
    // answer), and the commit, so that blame sees exactly the file that was counted.
    const counter = new BlobReader({ offset: Number.MAX_SAFE_INTEGER, limit: 1, maxBytes: 1, lineMaxChars: 80, countTotalMaxBytes: Number.POSITIVE_INFINITY });
    const counted = await readFileAtCommit(repository, rev, pathBytes, counter, ctx.signal);
    const commit = counter.commit!;
    const at = `${rev}${rev === commit ? '' : ` (${commit.slice(0, 12)})`}`;
    const header = counter.header;
    if (!header || header.kind === 'missing') throw new ToolError(`${shown} does not exist at ${at}`, 'not_found');
    if (header.type !== 'blob') throw new ToolError(`${shown} at ${at} is a ${header.type === 'tree' ? 'folder' : header.type}; give the path of a file`, 'not_a_file');
    const counts = counter.window();
    if (counts.binary) throw new ToolError(`${shown} is a binary file at ${at}; it has no lines to blame`, 'binary');
    if (counted.truncated || counts.total === undefined) throw new ToolError(`${shown} is too large to blame (over limits.max_read_bytes)`, 'too_large');
    const total = counts.total;
    const empty = { path: shown, commit, total_lines: total, lines: [], commits: [], next_start_line: null };
    if (total === 0) return structuredReply(`[${shown} is empty at ${at}]`, empty);

    const start = args.start_line ?? 1;
    if (start > total) throw new ToolError(`${shown} has ${total} lines at ${at}; start_line ${start} is past the end`, 'out_of_range');
    const wanted = Math.min(args.end_line ?? total, total);
    if (wanted < start) throw new ToolError(`end_line ${args.end_line} is before start_line ${start}`, 'bad_argument');
    const end = Math.min(wanted, start + ctx.limits.blame_max_lines - 1);

    const blame = new BlameReader(ctx.limits.line_max_chars);
    // blame has no --end-of-options in git 2.39: it gets a commit id, which cannot look like an option.
    // --no-ignore-revs-file: the repository's blame.ignoreRevsFile (missing, or a FIFO) would fail or hang it.
    await repository.run(['blame', '--porcelain', '--no-textconv', '--no-ignore-revs-file', '-L', `${start},${end}`, commit, '--', path], {
      mayReadWorkTree: true,
      signal: ctx.signal,
      onStdout: (chunk) => (blame.reader.push(chunk) ? undefined : 'stop'),
    });
    blame.reader.end();
    // Lines past the byte cap are left for the next call.
    const lines: typeof blame.lines = [];
    let bytes = 0;
    for (const line of blame.lines) {
      bytes += Buffer.byteLength(line.text) + 1;
      if (bytes > ctx.limits.file_max_bytes && lines.length > 0) break;
      lines.push(line);
    }
    const last = lines.at(-1)?.line ?? end;
    const cutByBytes = lines.length < blame.lines.length;
    const commits = [...new Set(lines.map((l) => l.commit))].map((hash) => blame.commits.get(hash)!);
    const nextStart = last < total ? last + 1 : null;
    const byHash = new Map(commits.map((c) => [c.hash, c]));
    const width = String(last).length;
    const body = lines.map((l) => {
      const c = byHash.get(l.commit)!;
      return `${l.commit.slice(0, 12)} ${c.date.slice(0, 10)} ${c.author.padEnd(16).slice(0, 16)} ${String(l.line).padStart(width)}\t${l.text}`;
    });
    const cut = cutByBytes ? ' (stopped at the byte cap)' : last < wanted ? ` (at most ${ctx.limits.blame_max_lines} lines per call)` : '';
    const tail = nextStart !== null ? `[lines ${start}-${last} of ${total}${cut}; next: start_line=${nextStart}]` : start > 1 ? `[lines ${start}-${last} of ${total}; end of file]` : '';
    const legend = commits.map((c) => `${c.hash.slice(0, 12)} ${c.date} ${c.author} <${c.email}> ${c.summary}`);
    const text = [...body, ...(tail ? [tail] : []), '', 'Commits:', ...legend].join('\n');
    return structuredReply(text, { path: shown, commit, total_lines: total, lines, commits, next_start_line: nextStart });
  },
});
