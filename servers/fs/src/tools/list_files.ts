import { join, resolve } from 'node:path';
import { readlinkSync, type Dirent } from 'node:fs';
import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, formatBytes, isInside, PRIVATE_CONTROL_FOLDERS, textName, textReply } from '@bulkhead/core';
import type { FsCapabilities } from '../context.js';
import { Beneath, pinFolder, readPinned, type PinnedFolder } from '../lib/beneath.js';

const NOT_DESCENDED = new Set(['.git', 'node_modules']);

/**
 * What a name may not look like in the tree besides what textName quotes anyway: leading or
 * trailing white space (it would fake a depth), " -> " (a symlink) or a trailing "(…)" (a size or
 * a note), so "  passwd (1 KiB)" cannot pass for an entry of a folder it is not in.
 */
const TREE_SYNTAX = /^\s|\s$| -> |\)$|\/$/;

const input = z.strictObject({
  path: z.string().max(65_536).optional().describe('Folder to list, relative to the first root (default: the root)'),
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
    const pinned = pinFolder(folder, args.path ?? '.', `${args.path} is a file, not a folder; use read_file to read it`);
    const out: string[] = [`${textName(ctx.paths.display(folder))}/`];
    const maxEntries = ctx.limits.list_max_entries;

    // Every folder is read through a descriptor opened from its parent's with O_NOFOLLOW, and every
    // entry is looked at through its folder's descriptor: a folder swapped for a symlink during
    // the walk is shown as it now is (a symlink), never followed.
    const walk = async (dir: PinnedFolder, real: string, level: number): Promise<void> => {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      let entries: Dirent[];
      try {
        entries = readPinned(dir);
      } catch (error) {
        out.push(`${'  '.repeat(level)}[cannot list: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}]`);
        return;
      }
      const beneath = new Beneath(dir);
      try {
        entries.sort(byKindThenName);
        const indent = '  '.repeat(level);
        for (const entry of entries.slice(0, maxEntries)) {
          const shown = textName(entry.name, TREE_SYNTAX);
          const info = beneath.lstat(entry.name);
          // Shown by name (the layout is documented) but never opened: what they hold, even how many, stays unknown.
          const privateFolder = ctx.paths.privateFolderOf(join(real, entry.name));
          if (privateFolder !== undefined) {
            out.push(`${indent}${shown}${info?.isDirectory() ? '/' : ''} (${PRIVATE_CONTROL_FOLDERS[privateFolder].listedAs})`);
          } else if (info === undefined) {
            out.push(`${indent}${shown} (gone)`);
          } else if (info.isDirectory()) {
            const skip = NOT_DESCENDED.has(entry.name);
            if (!skip && level < args.depth) {
              const sub = beneath.openFolder(entry.name);
              out.push(`${indent}${shown}/${sub ? '' : ' (changed while listed; not descended)'}`);
              if (sub) {
                try {
                  await walk(sub, join(real, entry.name), level + 1);
                } finally {
                  sub.close();
                }
              }
            } else out.push(`${indent}${shown}/${skip ? ' (not descended)' : ''}`);
          } else if (info.isSymbolicLink()) {
            const path = beneath.entryPath(entry.name);
            let target = '?';
            try {
              if (path !== undefined) target = readlinkSync(path);
            } catch {
              // gone or changed: shown as "?"
            }
            const inside = target !== '?' && ctx.paths.real.some((root) => isInside(root, resolve(real, target)));
            // A link into a private folder is not followed by any tool; its text would still name what lies there.
            const linkedPrivate = target === '?' ? undefined : ctx.paths.privateFolderOf(resolve(real, target));
            if (linkedPrivate !== undefined) out.push(`${indent}${shown} -> (${PRIVATE_CONTROL_FOLDERS[linkedPrivate].listedAs})`);
            else out.push(`${indent}${shown} -> ${textName(target)}${inside ? '' : ' (outside the roots)'}`);
          } else if (info.isFile()) {
            out.push(`${indent}${shown} (${formatBytes(info.size)})`);
          } else {
            out.push(`${indent}${shown} (special file)`);
          }
        }
        if (entries.length > maxEntries) out.push(`${indent}… ${entries.length - maxEntries} more entries`);
      } finally {
        beneath.close();
      }
    };
    try {
      await walk(pinned, folder, 1);
    } finally {
      pinned.close();
    }
    if (out.length === 1) out.push('  (empty)');
    return textReply(out.join('\n'));
  },
});
