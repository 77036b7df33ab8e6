import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, textName, textReply, ToolError } from '@bulkhead/core';
import type { FsCapabilities } from '../context.js';
import { Beneath, byFolder, pinFolder } from '../lib/beneath.js';

const STAT_BATCH = 256;

const input = z.strictObject({
  pattern: z.string().min(1).max(1000).describe('Glob such as "**/*.ts", "src/*.json" or "*.{js,mjs}"; "*" does not cross folders, "**" does'),
  path: z.string().max(65_536).optional().describe('Folder to search in, relative to the first root (default: the root)'),
  include_ignored: z.boolean().default(false).describe('Also return files that .gitignore excludes'),
  hidden: z.boolean().default(false).describe('Also return hidden files (names starting with "."); a pattern that names them, like ".github/**", does this by itself'),
});

export const globFiles = defineTool<FsCapabilities, typeof input>({
  name: 'glob_files',
  title: 'Find files by name',
  description:
    'Find files whose path matches a glob ("**/*.ts", "src/**/test_*.py"), newest first by modification time, as paths relative to the root. Skips git-ignored and hidden files unless asked; returns at most 1000 paths with a note saying how many more matched.',
  input,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  subjectArg: 'pattern',
  async run(args, ctx) {
    if (args.pattern.includes('..')) throw new ToolError('pattern may not contain ".."; use path to choose the folder to search in', 'bad_pattern');
    const folder = await ctx.paths.confine(args.path ?? '.', 'read');
    if (!(await stat(folder)).isDirectory()) throw new ToolError(`${args.path} is not a folder; give the folder to search in as path`, 'not_a_folder');
    const pinned = pinFolder(folder, args.path ?? '.');
    const beneath = new Beneath(pinned);
    try {
      const outcome = await ctx.search.list({
        folder: pinned,
        pattern: args.pattern,
        hidden: args.hidden,
        respectGitignore: !args.include_ignored,
        // The root-anchored globs miss the private folders when the search runs inside the control-plane folder.
        denyRead: [...ctx.denyRead, ...ctx.paths.privateGlobsFrom(folder)],
        timeoutMs: ctx.limits.grep_timeout_ms,
        signal: ctx.signal,
        onProgress: (walked, matching) => ctx.progress(`${walked} ${walked === 1 ? 'file' : 'files'} walked, ${matching} matching ${JSON.stringify(args.pattern)}`),
      });
      const allowed = ctx.paths.searchResultFilter(folder);
      const found = outcome.paths.filter((path) => allowed(path) && ctx.paths.privateFolderOf(join(folder, path)) === undefined);
      // The walk saw these names by path; each is looked at again beneath the pinned folder, one
      // component at a time and never through a symlink, so a folder swapped during the walk
      // cannot bring in names from outside the roots. That lstat gives the times too.
      const withTimes: { path: string; mtime: number }[] = [];
      const sorted = byFolder(found);
      for (let i = 0; i < sorted.length; i += STAT_BATCH) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (i > 0) await nextTurn();
        for (const p of sorted.slice(i, i + STAT_BATCH)) {
          const s = beneath.lstat(p);
          if (!s?.isFile()) continue;
          // A second name of a deny_read file is left out as that file is.
          if (s.nlink > 1 && (await ctx.denyInodes.denial(s)) !== undefined) continue;
          withTimes.push({ path: p, mtime: s.mtimeMs });
        }
      }
      withTimes.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : 1));
      const max = ctx.limits.glob_max_results;
      const shown = withTimes.slice(0, max).map(({ path }) => textName(ctx.paths.display(join(folder, path))));
      const notes: string[] = [];
      if (withTimes.length > max) notes.push(`[${withTimes.length - max} more files matched; narrow the pattern or path]`);
      if (outcome.timedOut) notes.push('[the search stopped at its time limit; the list is partial]');
      if (shown.length === 0) return textReply(`No files match ${JSON.stringify(args.pattern)}${args.path ? ` in ${args.path}` : ''}.${args.include_ignored ? '' : ' (git-ignored files were skipped; include_ignored: true includes them)'}`);
      return textReply([...shown, ...notes].join('\n'));
    } finally {
      beneath.close();
      pinned.close();
    }
  },
});
