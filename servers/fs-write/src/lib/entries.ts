import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { errorMessage, formatBytes, isInside, measureEntry, openConfinedFile, ToolError, unifiedDiff, type ConfinedPath, type EntrySummary, type ToolContext, type TrashManifest } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { decodeForEdit } from './text.js';

/** Arguments of the tools that move or delete entries. */
export const entryChangeOptions = {
  expected_sha256: z
    .string()
    .max(64)
    .regex(/^[0-9a-fA-F]{64}$/, 'a SHA-256 is 64 hex digits')
    .optional()
    .describe('Only if the entry is a file that still has this SHA-256; protects a concurrent change from being lost'),
  dry_run: z.boolean().default(false).describe('Say what would happen without changing anything'),
};

/** What is being done to an entry; a refusal says it was not done. */
export type Action = 'move' | 'replace' | 'delete';
const NOTHING_DONE: Record<Action, string> = { move: 'nothing was moved', replace: 'nothing was moved', delete: 'nothing was deleted' };

/**
 * Measures an entry about to be moved or deleted and refuses when the control-plane folder is
 * inside it, or anything inside it is in the protected set where it is, or would be at
 * `landsAt` (a move can put a file under a protected path of the policy).
 */
export async function measureForChange(ctx: ToolContext<FsWriteCapabilities>, entry: ConfinedPath, shownAs: string, action: Action, landsAt?: ConfinedPath): Promise<EntrySummary> {
  if (isInside(entry, ctx.paths.controlDir)) {
    throw new ToolError(`cannot ${action} ${shownAs}: the control-plane folder ${ctx.paths.controlDir} is inside it; ${NOTHING_DONE[action]}`, 'protected');
  }
  const check = (path: string) => ctx.paths.checkProtected(ctx.paths.display(path), path, 'write');
  try {
    return await measureEntry(entry, shownAs, {
      signal: ctx.signal,
      visit: (inside) => {
        check(inside);
        if (landsAt) check(join(landsAt, relative(entry, inside)));
      },
    });
  } catch (error) {
    if (error instanceof ToolError && error.code === 'protected') throw new ToolError(`cannot ${action} ${shownAs}: inside it, ${error.message}; ${NOTHING_DONE[action]}`, 'protected');
    throw error;
  }
}

/** Refuses unless the entry is a file whose content still has the caller's `expected_sha256`. */
export async function checkEntryHash(ctx: ToolContext<FsWriteCapabilities>, entry: ConfinedPath, shownAs: string, summary: EntrySummary, expected: string | undefined, action: Action): Promise<void> {
  if (expected === undefined) return;
  if (summary.kind !== 'file') throw new ToolError(`expected_sha256 applies to a file, and ${shownAs} is a ${summary.kind}; ${NOTHING_DONE[action]}`, 'conflict');
  const opened = await openConfinedFile(ctx.paths, entry, shownAs, 'write');
  const hash = createHash('sha256');
  try {
    for await (const chunk of opened.handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
  } finally {
    await opened.handle.close();
  }
  const actual = hash.digest('hex');
  if (actual !== expected.toLowerCase()) {
    throw new ToolError(`${shownAs} has changed: its sha256 is ${actual}, not the expected_sha256 ${expected}. ${NOTHING_DONE[action][0]!.toUpperCase()}${NOTHING_DONE[action].slice(1)}; read it again and retry.`, 'conflict');
  }
}

/** Files larger than this are summarised rather than shown as removed lines. */
const PREVIEW_MAX_BYTES = 256 * 1024;

/**
 * What a delete removes, for the result: a small text file as a bounded diff of its lines going
 * away; anything else as a line saying what it was.
 */
export async function removalPreview(ctx: ToolContext<FsWriteCapabilities>, entry: ConfinedPath, shownAs: string, summary: EntrySummary): Promise<string> {
  if (summary.kind !== 'file') return '';
  if (summary.bytes === 0) return '(an empty file)';
  if (summary.bytes > PREVIEW_MAX_BYTES) return `(content not shown: ${formatBytes(summary.bytes)})`;
  const opened = await openConfinedFile(ctx.paths, entry, shownAs, 'write');
  let bytes: Buffer;
  try {
    bytes = await opened.handle.readFile();
  } finally {
    await opened.handle.close();
  }
  let text: string;
  try {
    text = decodeForEdit(bytes, shownAs).text;
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return `(content not shown: ${formatBytes(bytes.length)}, not UTF-8 text)`;
  }
  const diff = unifiedDiff(shownAs, text, '', ctx.limits.diff_max_lines);
  // The file is gone afterwards, so its new side is /dev/null, as git writes a deletion.
  const lines = diff.text.split('\n');
  lines[1] = '+++ /dev/null';
  return `\`\`\`diff\n${lines.join('\n')}\n\`\`\``;
}

/** The line that tells the model (and the human reading along) how to get an entry back. */
export function restoreHint(trashed: TrashManifest): string {
  return `Restore it with: bulkhead trash restore ${trashed.id}`;
}

/**
 * Applies the trash's retention policy after something went in, keeping what just went in (after
 * a kept version only when due: see Trash.purgeIfDue); says what was purged, if anything. A purge that fails does not undo the change that was made.
 */
export async function purgeAfter(ctx: ToolContext<FsWriteCapabilities>, trashed: TrashManifest, options: { readonly whenDue?: boolean } = {}): Promise<string[]> {
  try {
    const purged = options.whenDue ? await ctx.trash.purgeIfDue(trashed) : await ctx.trash.purge({ keep: trashed.id });
    if (purged === undefined || purged.removed.length === 0) return [];
    const count = purged.removed.length === 1 ? '1 older entry' : `${purged.removed.length} older entries`;
    return [`The trash purged ${count} (${formatBytes(purged.freedBytes)}) under its retention policy.`];
  } catch (error) {
    return [`The trash could not be purged: ${errorMessage(error)}`];
  }
}
