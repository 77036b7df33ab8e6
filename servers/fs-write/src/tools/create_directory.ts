import { readlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineTool, lstatIfExists, makeFoldersSafely, textReply, ToolError, type ConfinedPath, type Roots, type AnyToolDefinition } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { ADDITIVE_ANNOTATIONS } from '../lib/annotations.js';
import { dryRunPreview } from '../lib/preview.js';

const input = z.strictObject({
  path: z.string().max(65_536).describe('Folder to create, with any missing parents, relative to the first root'),
  dry_run: z.boolean().default(false).describe('Say which folders would be created without creating them'),
});

/** The folders from the first missing one down to `entry`, as shown to the model. */
async function missingFolders(paths: Roots, entry: ConfinedPath): Promise<string[]> {
  const missing: string[] = [];
  for (let folder: string = entry; !(await lstatIfExists(folder)); folder = dirname(folder)) missing.unshift(paths.display(folder));
  return missing;
}

export const createDirectory: AnyToolDefinition<FsWriteCapabilities> = defineTool<FsWriteCapabilities, typeof input>({
  name: 'create_directory',
  title: 'Create a folder',
  description:
    'Create a folder and any missing parent folders inside the roots (like mkdir -p). Answers "No change needed" when the folder already exists, and refuses when a file or a symlink is at that path. dry_run lists the folders that would be created.',
  input,
  annotations: ADDITIVE_ANNOTATIONS,
  risk: 'medium',
  subjectArg: 'path',
  preview: (args, ctx) => dryRunPreview(createDirectory, args, ctx),
  async run(args, ctx) {
    const entry = await ctx.paths.confineEntry(args.path);
    const shownAs = ctx.paths.display(entry);
    return ctx.locks.run(entry, async () => {
      const existing = await lstatIfExists(entry);
      if (existing?.isDirectory()) return textReply(`No change needed: ${shownAs} already exists (a folder)`);
      if (existing?.isSymbolicLink()) {
        throw new ToolError(`${shownAs} is a symlink (-> ${await readlink(entry).catch(() => '?')}); it is not followed, so no folder was created`, 'symlink');
      }
      if (existing) throw new ToolError(`${shownAs} exists and is a file, not a folder; no folder was created`, 'exists');
      const listed = (folders: readonly string[]) => (folders.length === 1 ? `folder ${folders[0]}` : `${folders.length} folders: ${folders.join(', ')}`);
      if (args.dry_run) return textReply(`Dry run: would create ${listed(await missingFolders(ctx.paths, entry))}; nothing was created.`);
      // One folder at a time through descriptors, so a folder swapped for a symlink cannot lead outside.
      const created = await makeFoldersSafely(ctx.paths, entry, shownAs).catch((error: unknown) => {
        throw error instanceof ToolError ? new ToolError(`cannot create ${shownAs}: ${error.message}`, error.code) : error;
      });
      if (created.length === 0) return textReply(`No change needed: ${shownAs} already exists (a folder)`);
      return textReply(`Created ${listed(created.map((folder) => ctx.paths.display(folder)))}`);
    });
  },
});
