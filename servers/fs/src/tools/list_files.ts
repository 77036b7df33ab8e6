import { join, resolve } from 'node:path';
import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, formatBytes, isInside, textReply, ToolError } from '@bulkhead/core';
import type { FsCapabilities } from '../context.js';

const NOT_DESCENDED = new Set(['.git', 'node_modules']);

const input = z.strictObject({
  path: z.string().optional().describe('Folder to list, relative to the first root (default: the root)'),
  depth: z.number().int().min(1).max(5).default(1).describe('How many levels to descend (1 = only this folder, at most 5)'),
});

function byKindThenName(a: Dirent, b: Dirent): number {
  const rank = (d: Dirent) => (d.isDirectory() ? 0 : 1);
  return rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export const listFiles = defineTool<FsCapabilities, typeof input>({
  name: 'list_files',
  title: 'List a folder',
  description:
    'List a folder as an indented tree of entries with type and size, folders first. depth sets how many levels to descend (default 1). At most 200 entries per folder with an "N more" line; .git and node_modules are shown but not descended; symlinks are shown with their target, never followed.',
  input,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  subjectArg: 'path',
  async run(args, ctx) {
    const folder = await ctx.paths.confine(args.path ?? '.', 'read');
    const top = await lstat(folder);
    if (!top.isDirectory()) throw new ToolError(`${args.path} is a file, not a folder; use read_file to read it`, 'not_a_folder');
    const out: string[] = [`${ctx.paths.display(folder)}/`];
    const maxEntries = ctx.limits.list_max_entries;

    const walk = async (dir: string, level: number): Promise<void> => {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        out.push(`${'  '.repeat(level)}[cannot list: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}]`);
        return;
      }
      entries.sort(byKindThenName);
      const indent = '  '.repeat(level);
      for (const entry of entries.slice(0, maxEntries)) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) {
          const skip = NOT_DESCENDED.has(entry.name);
          out.push(`${indent}${entry.name}/${skip ? ' (not descended)' : ''}`);
          if (!skip && level < args.depth) await walk(full, level + 1);
        } else if (entry.isSymbolicLink()) {
          const target = await readlink(full).catch(() => '?');
          const inside = ctx.paths.real.some((root) => isInside(root, resolve(dir, target)));
          out.push(`${indent}${entry.name} -> ${target}${inside ? '' : ' (outside the roots)'}`);
        } else if (entry.isFile()) {
          const size = await lstat(full).then((s) => formatBytes(s.size), () => '?');
          out.push(`${indent}${entry.name} (${size})`);
        } else {
          out.push(`${indent}${entry.name} (special file)`);
        }
      }
      if (entries.length > maxEntries) out.push(`${indent}… ${entries.length - maxEntries} more entries`);
    };
    await walk(folder, 1);
    if (out.length === 1) out.push('  (empty)');
    return textReply(out.join('\n'));
  },
});
