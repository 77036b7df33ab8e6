import { rmdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { expectedFromStat, formatBytes, makeFoldersSafely, releaseInterruptedLinks, textReply, ToolError, unifiedDiff, writeFileSafely, type ConfinedPath, type Roots, type ToolContext, type ToolReply, type Trash, type TrashManifest } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { checkExpectedHash, readCurrent, sha256Hex, type CurrentFile } from './current.js';
import { purgeAfter } from './entries.js';

/** Arguments every changing tool takes besides its own. */
export const changeOptions = {
  expected_sha256: z
    .string()
    .max(64)
    .regex(/^[0-9a-fA-F]{64}$/, 'a SHA-256 is 64 hex digits')
    .optional()
    .describe('Write only if the file on disk still has this SHA-256 (as returned by an earlier change); protects a concurrent change from being overwritten'),
  dry_run: z.boolean().default(false).describe('Show the diff of what would change without writing anything'),
};

/** What a tool decided to do with the file it read. */
export type Plan =
  | { readonly kind: 'unchanged'; readonly why: string }
  | {
      readonly kind: 'write';
      readonly bytes: Buffer;
      readonly before: string | undefined;
      readonly after: string;
      readonly summary: string;
      /** Lines shown between the headline and the diff (one per edit of a multi_edit, say). */
      readonly details?: readonly string[];
    };

/**
 * The one path every file change takes: confine the entry (never following its last component),
 * take the path's lock, read what is there, check expected_sha256, let the tool plan the new
 * content, enforce the size cap, then show the diff (dry run) or write atomically, refusing if
 * the file changed on disk since it was read. The content a write replaces goes to the trash
 * first (synced there before the new content is put in place), so it can be restored.
 */
export async function changeFile(
  ctx: ToolContext<FsWriteCapabilities>,
  request: { readonly path: string; readonly expected_sha256?: string | undefined; readonly dry_run: boolean },
  plan: (current: CurrentFile, shownAs: string) => Plan,
): Promise<ToolReply<undefined>> {
  const entry = await ctx.paths.confineEntry(request.path);
  const shownAs = ctx.paths.display(entry);
  return ctx.locks.run(entry, async () => {
    const current = await readRecovering(ctx.paths, ctx.trash, entry, shownAs, ctx.limits.max_file_bytes);
    checkExpectedHash(current, request.expected_sha256, shownAs);
    const planned = plan(current, shownAs);
    if (planned.kind === 'unchanged') return textReply(`No change needed: ${planned.why}`);
    if (planned.bytes.length > ctx.limits.max_file_bytes) {
      throw new ToolError(
        `the new content of ${shownAs} would be ${formatBytes(planned.bytes.length)}, over the ${formatBytes(ctx.limits.max_file_bytes)} cap of fs_write_policy.yaml (limits.max_file_bytes); nothing was written`,
        'too_large',
      );
    }
    const diff = unifiedDiff(shownAs, planned.before, planned.after, ctx.limits.diff_max_lines);
    const counts = `+${diff.added} −${diff.removed} lines`;
    const fenced = [...(planned.details ?? []), `\`\`\`diff\n${diff.text}\n\`\`\``].join('\n');
    if (request.dry_run) {
      return textReply(`Dry run: would ${current.exists ? 'update' : 'create'} ${shownAs} (${planned.summary}; ${counts}); nothing was written.\n${fenced}`);
    }
    const made = current.exists ? [] : await createParents(ctx, entry, request.path);
    // The old version goes into the trash while the new content is written; it is there before the rename.
    const keeping: Promise<TrashManifest> | undefined = current.exists ? ctx.trash.keep(entry, shownAs, current.bytes, current.stat) : undefined;
    keeping?.catch(() => undefined);
    const expected = current.exists ? expectedFromStat(current.stat) : ({ kind: 'absent' } as const);
    const written = await writeFileSafely(entry, planned.bytes, shownAs, expected, { inFlight: ctx.trash.inFlight, ...(keeping ? { before: keeping } : {}) }).catch(async (error: unknown) => {
      await removeEmptyFolders(made);
      const kept = await keeping?.catch(() => undefined);
      if (kept) await ctx.trash.discard(kept.id).catch(() => undefined);
      // A version that could not be kept is the reason, whatever the write then said.
      if (keeping) await keeping;
      throw error;
    });
    const kept = await keeping;
    const headline = `${written.created ? 'Created' : 'Updated'} ${shownAs} (${planned.summary}; ${counts}; ${formatBytes(planned.bytes.length)}; sha256 ${sha256Hex(planned.bytes)})`;
    // After the diff, where a reply cut to its head and tail still shows it.
    const after = kept ? [keptHint(kept, shownAs), ...(await purgeAfter(ctx, kept, { whenDue: true }))] : [];
    return textReply([headline, fenced, ...after].join('\n'));
  });
}

/** The line that says where the replaced content went and how to get it back (restore never overwrites). */
export function keptHint(kept: TrashManifest, shownAs: string): string {
  return `The previous version (${formatBytes(kept.bytes)}) is in the trash as ${kept.id}; \`bulkhead trash restore ${kept.id} --to PATH\` brings it back (restore never overwrites ${shownAs}: give another path, or move ${shownAs} away first).`;
}

/**
 * Reads the current file; one with two links gets one more try after the leftovers of a killed
 * writer are cleared (a temp name linked in place but not yet removed, or a delete's link into
 * the trash), since those are the same file under a second name and not a real hard link.
 */
async function readRecovering(paths: Roots, trash: Trash, entry: ConfinedPath, shownAs: string, maxBytes: number): Promise<CurrentFile> {
  try {
    return await readCurrent(paths, entry, shownAs, maxBytes);
  } catch (error) {
    if (!(error instanceof ToolError) || error.code !== 'hard_link') throw error;
    const released = await releaseInterruptedLinks(entry).catch(() => 0);
    if (released === 0) await trash.purge().catch(() => undefined);
    return readCurrent(paths, entry, shownAs, maxBytes);
  }
}

/**
 * Creates missing folders above a new file, then proves the path still resolves to the same place.
 * Returns the folders it created, for a failed write to take away again.
 */
async function createParents(ctx: ToolContext<FsWriteCapabilities>, entry: ConfinedPath, input: string): Promise<string[]> {
  let made: string[];
  try {
    made = await makeFoldersSafely(ctx.paths, dirname(entry) as ConfinedPath, input);
  } catch (error) {
    throw new ToolError(`cannot create the folders for ${input}: ${(error as Error).message}; nothing was written`, error instanceof ToolError ? error.code : 'write_failed');
  }
  const again = await ctx.paths.confineEntry(input).catch(async (error: unknown) => {
    await removeEmptyFolders(made);
    throw error;
  });
  if (again !== entry) {
    await removeEmptyFolders(made);
    throw new ToolError(`${input} changed while its folders were being created; nothing was written`, 'conflict');
  }
  return made;
}

/** Takes away folders this change created, deepest first, as long as they are still empty. */
async function removeEmptyFolders(made: readonly string[]): Promise<void> {
  for (const folder of [...made].reverse()) await rmdir(folder).catch(() => undefined);
}
