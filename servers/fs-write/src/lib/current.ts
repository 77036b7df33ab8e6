import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import { formatBytes, openConfinedFile, ToolError, type ConfinedPath, type Roots } from '@bulkhead/core';

/** The file a change starts from, as it was read. */
export type CurrentFile = { readonly exists: false } | { readonly exists: true; readonly bytes: Buffer; readonly stat: Stats };

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads what is at `entry` now, refusing what a change must not go through: a symlink (never
 * followed), a folder or special file, a file with other hard links, a file over the size cap.
 */
export async function readCurrent(paths: Roots, entry: ConfinedPath, shownAs: string, maxBytes: number): Promise<CurrentFile> {
  let stat: Stats;
  try {
    stat = await lstat(entry);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false };
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw new ToolError(`${shownAs} cannot be a file: a part of its path is a file, not a folder`, 'not_a_folder');
    throw new ToolError(`${shownAs}: ${(error as Error).message}`);
  }
  if (stat.isSymbolicLink()) {
    const target = await readlink(entry).catch(() => '?');
    throw new ToolError(`${shownAs} is a symlink (-> ${target}); it is not followed: change the file it points to by its own path`, 'symlink');
  }
  if (stat.isDirectory()) throw new ToolError(`${shownAs} is a folder, not a file`, 'is_directory');
  if (!stat.isFile()) throw new ToolError(`${shownAs} is not a regular file`);
  if (stat.nlink > 1) {
    throw new ToolError(`${shownAs} has ${stat.nlink} hard links; a file that is also reachable elsewhere (perhaps outside the roots) is not changed through one of its names`, 'hard_link');
  }
  if (stat.size > maxBytes) throw new ToolError(`${shownAs} is ${formatBytes(stat.size)}, over the ${formatBytes(maxBytes)} cap of fs_write_policy.yaml (limits.max_file_bytes); nothing was changed`, 'too_large');
  const opened = await openConfinedFile(paths, entry, shownAs, 'write');
  try {
    const bytes = await opened.handle.readFile();
    return { exists: true, bytes, stat: opened.stat };
  } finally {
    await opened.handle.close();
  }
}

/** Refuses a change when the caller's `expected_sha256` no longer describes the file. */
export function checkExpectedHash(current: CurrentFile, expected: string | undefined, shownAs: string): void {
  if (expected === undefined) return;
  if (!current.exists) throw new ToolError(`${shownAs} does not exist, but expected_sha256 was given; nothing was written`, 'conflict');
  // Hashed only here: a change without expected_sha256 need not pay for reading the old bytes twice.
  const actual = sha256Hex(current.bytes);
  if (actual !== expected.toLowerCase()) {
    throw new ToolError(`${shownAs} has changed: its sha256 is ${actual}, not the expected_sha256 ${expected}. Nothing was written; read it again and retry.`, 'conflict');
  }
}
