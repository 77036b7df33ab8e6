import { z } from 'zod';
import { defineTool, describeEntry, entriesInside, textReply, ToolError, type AnyToolDefinition } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { RELOCATE_ANNOTATIONS } from '../lib/annotations.js';
import { checkEntryHash, entryChangeOptions, measureForChange, purgeAfter, removalPreview, restoreHint } from '../lib/entries.js';
import { dryRunPreview } from '../lib/preview.js';

const input = z.strictObject({
  path: z.string().max(65_536).describe('File, folder or symlink to delete, relative to the first root'),
  recursive: z.boolean().default(false).describe('Needed to delete a folder that is not empty, with everything in it'),
  ...entryChangeOptions,
});

export const deletePath: AnyToolDefinition<FsWriteCapabilities> = defineTool<FsWriteCapabilities, typeof input>({
  name: 'delete_path',
  title: 'Delete a file or folder (recoverably)',
  description:
    'Delete a file, a folder or a symlink by moving it into the trash, from where the human can restore it (`bulkhead trash restore <id>`); nothing is erased. A symlink is deleted itself, never its target. A folder that is not empty needs recursive: true, and is refused if anything inside it is protected (.git, .env, keys, policy files). The result gives the trash id and, for a small text file, the removed lines as a diff. dry_run says what would be deleted; expected_sha256 deletes a file only if it is unchanged.',
  input,
  annotations: RELOCATE_ANNOTATIONS,
  risk: 'medium',
  subjectArg: 'path',
  preview: (args, ctx) => dryRunPreview(deletePath, args, ctx),
  async run(args, ctx) {
    const entry = await ctx.paths.confineEntry(args.path);
    const shownAs = ctx.paths.display(entry);
    return ctx.locks.run(entry, async () => {
      const summary = await measureForChange(ctx, entry, shownAs, 'delete');
      const described = describeEntry(summary);
      if (summary.kind === 'folder' && entriesInside(summary) > 0 && !args.recursive) {
        throw new ToolError(`${shownAs} is a ${described}; pass recursive: true to delete it with everything in it (it goes to the trash and can be restored). Nothing was deleted.`, 'not_empty');
      }
      await checkEntryHash(ctx, entry, shownAs, summary, args.expected_sha256, 'delete');
      const preview = await removalPreview(ctx, entry, shownAs, summary);
      const shown = (headline: string, ...more: string[]) => textReply([headline, ...more, preview].filter(Boolean).join('\n'));
      if (args.dry_run) return shown(`Dry run: would delete ${shownAs} (${described}) by moving it to the trash; nothing was deleted.`);
      const trashed = await ctx.trash.put(entry, shownAs, summary);
      return shown(`Deleted ${shownAs} (${described}): it is in the trash as ${trashed.id}. ${restoreHint(trashed)}`, ...(await purgeAfter(ctx, trashed)));
    });
  },
});
