import type { Stats } from 'node:fs';
import { rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineTool, describeEntry, errorMessage, isInside, lstatIfExists, makeFoldersSafely, moveEntry, textReply, ToolError, type ConfinedPath, type ToolContext, type TrashManifest, type AnyToolDefinition } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { RELOCATE_ANNOTATIONS } from '../lib/annotations.js';
import { checkEntryHash, entryChangeOptions, measureForChange, purgeAfter, restoreHint } from '../lib/entries.js';
import { dryRunPreview } from '../lib/preview.js';

const input = z.strictObject({
  source: z.string().max(65_536).describe('File, folder or symlink to move, relative to the first root'),
  destination: z.string().max(65_536).describe('Its new path, relative to the first root (the full new path, not a folder to move it into)'),
  overwrite: z.boolean().default(false).describe('Replace an existing destination; what was there goes to the trash and can be restored'),
  ...entryChangeOptions,
});

type Ctx = ToolContext<FsWriteCapabilities>;

/** Runs `work` holding the locks of both paths, always taken in the same order so two moves cannot deadlock. */
function withBothLocks<T>(ctx: Ctx, a: string, b: string, work: () => Promise<T>): Promise<T> {
  const [first, second] = a < b ? [a, b] : [b, a];
  return ctx.locks.run(first, () => ctx.locks.run(second, work));
}

/**
 * The same directory entry under another spelling: a case-only rename on a case-insensitive
 * filesystem. A file with several hard links is several entries, so it does not count.
 */
function sameEntry(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino && (a.isDirectory() || a.nlink === 1);
}

/** Creates missing folders above the destination, then proves it still resolves to the same place. */
async function createParents(ctx: Ctx, to: ConfinedPath, destination: string): Promise<void> {
  try {
    await makeFoldersSafely(ctx.paths, dirname(to) as ConfinedPath, destination);
  } catch (error) {
    throw new ToolError(`cannot create the folders for ${destination}: ${errorMessage(error)}; nothing was moved`, error instanceof ToolError ? error.code : 'write_failed');
  }
  if ((await ctx.paths.confineEntry(destination)) !== to) throw new ToolError(`${destination} changed while its folders were being created; nothing was moved`, 'conflict');
}

export const movePath: AnyToolDefinition<FsWriteCapabilities> = defineTool<FsWriteCapabilities, typeof input>({
  name: 'move_path',
  title: 'Move or rename a file or folder',
  description:
    'Move or rename a file, a folder or a symlink to a new path inside the roots (missing parent folders are created). Never silently replaces: an existing destination is an error unless overwrite is true, and then what was there goes to the trash (recoverable with `bulkhead trash restore <id>`). A symlink is moved itself, never its target. Moving into, out of or with anything protected (.git, .env, keys, policy files) is refused. dry_run says what would move; expected_sha256 moves a file only if it is unchanged.',
  input,
  annotations: RELOCATE_ANNOTATIONS,
  risk: 'medium',
  preview: (args, ctx) => dryRunPreview(movePath, args, ctx),
  async run(args, ctx) {
    const from = await ctx.paths.confineEntry(args.source);
    const to = await ctx.paths.confineEntry(args.destination);
    const fromShown = ctx.paths.display(from);
    const toShown = ctx.paths.display(to);
    if (from === to) return textReply(`No change needed: ${fromShown} and ${toShown} are the same path`);
    if (isInside(from, to)) throw new ToolError(`cannot move ${fromShown} into itself (${toShown} is inside it); nothing was moved`);
    if (isInside(to, from)) throw new ToolError(`cannot move ${fromShown} to ${toShown}, a folder that holds it; nothing was moved`);
    return withBothLocks(ctx, from, to, async () => {
      const summary = await measureForChange(ctx, from, fromShown, 'move', to);
      await checkEntryHash(ctx, from, fromShown, summary, args.expected_sha256, 'move');
      const existing = await lstatIfExists(to);
      const caseRename = existing !== undefined && sameEntry(existing, summary.stat);
      const replaced = existing && !caseRename ? await measureForChange(ctx, to, toShown, 'replace') : undefined;
      if (replaced && !args.overwrite) {
        throw new ToolError(
          `${toShown} already exists (${describeEntry(replaced)}); nothing was moved. Pass overwrite: true to replace it (what is there goes to the trash and can be restored), or choose another destination.`,
          'exists',
        );
      }
      const moved = `${fromShown} to ${toShown} (${describeEntry(summary)})`;
      if (args.dry_run) {
        return textReply(`Dry run: would move ${moved}${replaced ? `, replacing ${toShown} (${describeEntry(replaced)}), which would go to the trash` : ''}; nothing was moved.`);
      }
      if (caseRename) {
        await rename(from, to);
        return textReply(`Moved ${moved}`);
      }
      await createParents(ctx, to, args.destination);
      let trashed: TrashManifest | undefined;
      if (replaced) trashed = await ctx.trash.put(to, toShown, replaced);
      try {
        await moveEntry(from, to, summary.kind, { from: fromShown, to: toShown }, { inFlight: ctx.trash.inFlight });
      } catch (error) {
        if (!trashed) throw error;
        const back = await ctx.trash.restore(trashed.id, ctx.paths).then(
          () => `${toShown} was put back`,
          (restoreError: unknown) => `${toShown} stays in the trash as ${trashed.id} (${errorMessage(restoreError)})`,
        );
        throw new ToolError(`cannot move ${fromShown}: ${errorMessage(error)}; ${back}`);
      }
      const lines = [`Moved ${moved}${trashed ? `; the ${describeEntry(replaced!)} that was at ${toShown} is in the trash as ${trashed.id}. ${restoreHint(trashed)}` : ''}`];
      if (trashed) lines.push(...(await purgeAfter(ctx, trashed)));
      return textReply(lines.join('\n'));
    });
  },
});
