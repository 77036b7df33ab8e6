import { dirname, basename, join, relative } from 'node:path';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, textName, textReply } from '@bulkhead/core';
import type { FsCapabilities } from '../context.js';
import type { GrepFile } from '../lib/search-types.js';
import { pinFolder } from '../lib/beneath.js';

const MAX_COLLECTED = 20_000;

const input = z.strictObject({
  pattern: z.string().min(1).max(16_384).describe('Regular expression (Rust regex syntax) to search for; a leading "-" is part of the pattern, never an option'),
  path: z.string().max(65_536).optional().describe('File or folder to search, relative to the first root (default: the root)'),
  glob: z.string().max(4096).optional().describe('Only files matching this glob, .gitignore style ("*.ts", "src/**/*.tsx"); several separated by commas; "!*.lock" excludes'),
  type: z.string().max(64).regex(/^[A-Za-z0-9_+-]+$/).optional().describe('Only files of this ripgrep type (ts, py, rust, go, js, md, …)'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .default('files_with_matches')
    .describe('content: matching lines with line numbers; files_with_matches: file paths (default); count: matches per file'),
  case_insensitive: z.boolean().default(false).describe('Ignore case'),
  context: z.number().int().min(0).max(20).default(0).describe('Lines of context around each match (content mode)'),
  multiline: z.boolean().default(false).describe('Let the pattern span lines; . also matches newlines'),
  literal: z.boolean().default(false).describe('Treat the pattern as a plain string, not a regex'),
  hidden: z.boolean().default(false).describe('Also search hidden files and folders (names starting with ".")'),
  head_limit: z.number().int().min(1).max(10_000).optional().describe('Most result lines to return (default 250)'),
  offset: z.number().int().min(0).default(0).describe('Skip this many result lines first, to page through results'),
});

function formatFile(file: GrepFile, mode: 'content' | 'files_with_matches' | 'count', prefix: string, withSeparators: boolean): string[] {
  // ":" and "-" end the name in grep's lines, so a name holding ":" is quoted too: "x:1:match"
  // cannot pass for a match in x.
  const path = textName(prefix ? join(prefix, file.path) : file.path, /:/);
  if (mode === 'files_with_matches') return [path];
  if (mode === 'count') return [`${path}:${file.count}`];
  const out: string[] = [];
  let previous = -1;
  for (const line of file.lines) {
    if (withSeparators && previous !== -1 && line.line > previous + 1) out.push('--');
    out.push(`${path}${line.context ? '-' : ':'}${line.line}${line.context ? '-' : ':'}${line.text}`);
    previous = line.line;
  }
  return out;
}

export const grep = defineTool<FsCapabilities, typeof input>({
  name: 'grep',
  title: 'Search file contents',
  description:
    'Search file contents with a regular expression (ripgrep). Honours .gitignore, skips binary and hidden files unless asked. output_mode content shows path:line:text, files_with_matches (default) lists paths, count gives matches per file. Results are sorted by path, capped by head_limit (default 250) and paged with offset.',
  input,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  subjectArg: 'path',
  async run(args, ctx) {
    const confined = await ctx.paths.confine(args.path ?? '.', 'read');
    const info = await stat(confined);
    const searchDir = info.isDirectory() ? confined : dirname(confined);
    const shownDir = ctx.paths.display(searchDir);
    const headLimit = args.head_limit ?? ctx.limits.grep_head_limit;
    const folder = pinFolder(searchDir, shownDir);
    const outcome = await ctx.search.grep({
      folder,
      ...(info.isDirectory() ? {} : { file: basename(confined) }),
      pattern: args.pattern,
      mode: args.output_mode,
      caseInsensitive: args.case_insensitive,
      multiline: args.multiline,
      literal: args.literal,
      context: args.output_mode === 'content' ? args.context : 0,
      ...(args.glob ? { glob: args.glob } : {}),
      ...(args.type ? { type: args.type } : {}),
      hidden: args.hidden,
      // The root-anchored globs miss the private folders when the search runs inside the control-plane folder.
      denyRead: [...ctx.denyRead, ...ctx.paths.privateGlobsFrom(searchDir)],
      denyInodes: ctx.denyInodes,
      maxLineChars: ctx.limits.line_max_chars,
      maxRecords: Math.max(MAX_COLLECTED, args.offset + headLimit),
      timeoutMs: ctx.limits.grep_timeout_ms,
      signal: ctx.signal,
      onProgress: (matching) => ctx.progress(`${matching} matching ${matching === 1 ? 'file' : 'files'} so far in ${shownDir}`),
    }).finally(() => folder.close());
    const allowed = ctx.paths.searchResultFilter(searchDir);
    const files = outcome.files.filter((file) => allowed(file.path) && ctx.paths.privateFolderOf(join(searchDir, file.path)) === undefined).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const prefix = shownDir === '.' || shownDir === '' ? '' : relative(ctx.paths.primary, searchDir).startsWith('..') ? searchDir : shownDir;
    const lines = files.flatMap((file) => formatFile(file, args.output_mode, prefix, args.context > 0));
    const page = lines.slice(args.offset, args.offset + headLimit);
    const notes: string[] = [];
    if (outcome.timedOut) notes.push(`[the search stopped after ${ctx.limits.grep_timeout_ms} ms; results are partial — narrow it with path, glob or type]`);
    else if (!outcome.complete) notes.push(`[more than ${lines.length} result lines; only those are sorted and paged — narrow the search]`);
    if (args.offset + page.length < lines.length) {
      notes.push(`[showing ${args.offset + 1}-${args.offset + page.length} of ${lines.length}${outcome.complete ? '' : '+'} result lines; next: offset=${args.offset + page.length}]`);
    }
    if (page.length === 0) {
      const where = args.path ?? 'the root';
      const empty = args.offset > 0 && lines.length > 0 ? `[offset ${args.offset} is past the ${lines.length} result lines]` : `No matches for ${JSON.stringify(args.pattern)} in ${where}.`;
      return textReply([empty, ...notes].join('\n'));
    }
    if (args.output_mode === 'count') {
      const totalMatches = files.reduce((sum, file) => sum + file.count, 0);
      notes.unshift(`[${totalMatches} matching lines in ${files.length} files]`);
    }
    return textReply([...page, ...notes].join('\n'));
  },
});
