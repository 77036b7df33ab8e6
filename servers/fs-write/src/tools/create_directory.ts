import { mkdir, readlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineTool, lstatIfExists, textReply, ToolError, type ConfinedPath, type Roots } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { ADDITIVE_ANNOTATIONS } from '../lib/annotations.js';

const input = z.strictObject({
  path: z.string().describe('Folder to create, with any missing parents, relative to the first root'),
  dry_run: z.boolean().default(false).describe('Say which folders would be created without creating them'),
});

/** The folders from the first missing one down to `entry`, as shown to the model. */
async function missingFolders(paths: Roots, entry: ConfinedPath): Promise<string[]> {
  const missing: string[] = [];
  for (let folder: string = entry; !(await lstatIfExists(folder)); folder = dirname(folder)) missing.unshift(paths.display(folder));
  return missing;
}

export const createDirectory = defineTool<FsWriteCapabilities, typeof input>({
  name: 'create_directory',
  title: 'Create a folder',
  description:
    'Create a folder and any missing parent folders inside the roots (like mkdir -p). Answers "No change needed" when the folder already exists, and refuses when a file or a symlink is at that path. dry_run lists the folders that would be created.',
  input,
  annotations: ADDITIVE_ANNOTATIONS,
  risk: 'medium',
  subjectArg: 'path',
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
      const missing = await missingFolders(ctx.paths, entry);
      const listed = missing.length === 1 ? `folder ${shownAs}` : `${missing.length} folders: ${missing.join(', ')}`;
      if (args.dry_run) return textReply(`Dry run: would create ${listed}; nothing was created.`);
      try {
        await mkdir(entry, { recursive: true });
      } catch (error) {
        throw new ToolError(`cannot create ${shownAs}: ${(error as Error).message}`);
      }
      // mkdir -p follows symlinks on its way down: prove the path still resolves where it was checked.
      if ((await ctx.paths.confineEntry(args.path)) !== entry || !(await lstatIfExists(entry))?.isDirectory()) {
        throw new ToolError(`${shownAs} changed while it was being created; check what is there now`, 'conflict');
      }
      return textReply(`Created ${listed}`);
    });
  },
});
