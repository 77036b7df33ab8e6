import { z } from 'zod';
import { decodeGitName, defineTool, formatBytes, numberedLines, READ_ONLY_LOCAL, repositoryPath, structuredReply, ToolError } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { BlobReader, type BlobWindow } from '../lib/blob.js';
import { checkFilePath, readFileAtCommit } from '../lib/blob-request.js';
import { repoField, repoPathDescription } from '../lib/fields.js';

/** Blobs up to this size are read to the end, so the footer can give the total line count. */
const COUNT_TOTAL_MAX_BYTES = 32 * 1024 * 1024;

const input = z.strictObject({
  repo: repoField,
  rev: z.string().max(1024).describe('The commit to read the file at: a hash, branch, tag or HEAD~3'),
  path: z.string().max(4096).describe(`The file, ${repoPathDescription}`),
  offset: z
    .number()
    .int()
    .refine((n) => n !== 0, 'offset counts from 1; use a negative number to count from the end')
    .optional()
    .describe('First line to show, counting from 1; a negative number counts from the end (-100 shows the last 100 lines)'),
  limit: z.number().int().min(1).max(100_000).optional().describe('How many lines to show (default 2000)'),
});

const output = z.object({
  path: z.string().describe('The file, relative to the repository top'),
  commit: z.string().describe('The commit it was read at'),
  size: z.number().int().describe('Size of the file in bytes'),
  binary: z.boolean().describe('Binary content (a NUL byte near the start): no lines are returned'),
  first_line: z.number().int().nullable().describe('Number of the first line returned'),
  last_line: z.number().int().nullable().describe('Number of the last line returned'),
  total_lines: z.number().int().nullable().describe('Lines in the file; null when not counted (files over 32 MiB)'),
  next_offset: z.number().int().nullable().describe('offset of the next page; null at the end'),
  content: z.string().describe('The lines returned, without numbers (long lines cut with a marker)'),
});

function footer(window: BlobWindow, size: number, nextOffset: number | null): string {
  const { lines, total } = window;
  const first = lines[0]!.number;
  const last = lines.at(-1)!.number;
  const cut = window.cutByBytes ? ' (stopped at the byte cap)' : '';
  const range = `lines ${first}-${last}${total !== undefined ? ` of ${total}` : ''}`;
  if (nextOffset === null) return first > 1 || window.cutByBytes ? `[${range}${cut}; end of file]` : '';
  return `[${range}${cut}; next: offset=${nextOffset}${total === undefined ? `; file is ${formatBytes(size)}` : ''}]`;
}

export const gitShowFile = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'git_show_file',
  title: 'Read a file at a commit',
  description:
    "A file's content at a commit, as numbered lines like read_file: 2000 lines from offset by default, at most 256 KiB per call, long lines cut with a marker, and a footer saying how to read on. A negative offset reads from the end. Binary files get a marker with their size. Files matching deny_read (secrets) are refused.",
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const path = repositoryPath(args.path, 'path');
    const shown = decodeGitName(path);
    checkFilePath(path);
    const repository = await ctx.openRepository(args.repo);
    const refusal = ctx.denyRead.refusal(repository, shown, 'its content is not shown');
    if (refusal) throw new ToolError(refusal, 'protected');
    const offset = args.offset ?? 1;
    const limit = args.limit ?? ctx.limits.show_file_max_lines;
    const reader = new BlobReader({ offset, limit, maxBytes: ctx.limits.file_max_bytes, lineMaxChars: ctx.limits.line_max_chars, countTotalMaxBytes: COUNT_TOTAL_MAX_BYTES });
    const result = await readFileAtCommit(repository, args.rev, path, reader, ctx.signal);
    const commit = reader.commit!;
    const header = reader.header;
    const at = `${args.rev}${args.rev === commit ? '' : ` (${commit.slice(0, 12)})`}`;
    if (!header || header.kind === 'missing') throw new ToolError(`${shown} does not exist at ${at}`, 'not_found');
    if (header.type === 'tree') throw new ToolError(`${shown} is a folder at ${at}; give the path of a file in it`, 'not_a_file');
    if (header.type !== 'blob') throw new ToolError(`${shown} at ${at} is a ${header.type}, not a file`, 'not_a_file');
    const window = reader.window();
    const base = { path: shown, commit, size: header.size, binary: window.binary };
    const empty = { ...base, first_line: null, last_line: null, total_lines: window.total ?? null, next_offset: null, content: '' };
    if (window.binary) return structuredReply(`[binary file ${shown} at ${at}: ${formatBytes(header.size)}; its bytes are not shown]`, { ...empty, total_lines: null });
    if (header.size === 0) return structuredReply(`[${shown} is empty at ${at}]`, empty);
    if (result.truncated && offset < 0) {
      throw new ToolError(`${shown} is ${formatBytes(header.size)}, more than can be read to its end (limits.max_read_bytes); read it with a positive offset`, 'too_large');
    }
    if (window.lines.length === 0 && result.truncated) {
      throw new ToolError(`${shown} at ${at}: the read stopped at limits.max_read_bytes before line ${offset} ended (a line longer than the limit); it cannot be shown`, 'too_large');
    }
    if (window.lines.length === 0) {
      throw new ToolError(`${shown} has ${window.total ?? 'fewer'} lines at ${at}; offset ${offset} is past the end (use offset=1, or a negative offset to read from the end)`, 'out_of_range');
    }
    const last = window.lines.at(-1)!.number;
    const nextOffset = window.total !== undefined && last >= window.total ? null : last + 1;
    const tail = footer(window, header.size, nextOffset);
    const body = numberedLines(window.lines);
    return structuredReply(tail ? `${body}\n${tail}` : body, {
      ...base,
      first_line: window.lines[0]!.number,
      last_line: last,
      total_lines: window.total ?? null,
      next_offset: nextOffset,
      content: window.lines.map((line) => line.text).join('\n'),
    });
  },
});
