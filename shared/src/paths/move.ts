import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ToolError } from '../errors.js';
import { lstatIfExists, type EntryKind } from './tree.js';

/** How an entry got to its new place. */
export type MoveMethod = 'renamed' | 'copied';

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

function existsError(toShown: string): ToolError {
  return new ToolError(`${toShown} already exists; nothing was moved`, 'exists');
}

/** A fresh name beside `path`, for a copy that appears under its real name only when whole. */
function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path).slice(0, 200)}.bulkhead-${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Renames a folder to `to` only if nothing is there. POSIX has no portable rename that refuses
 * to replace, so the check comes right before the rename; what can slip in between is only an
 * empty folder (rename fails on a non-empty folder and on a file), so nothing can be lost.
 */
async function renameIfAbsent(from: string, to: string, toShown: string): Promise<void> {
  if (await lstatIfExists(to)) throw existsError(toShown);
  try {
    await fsp.rename(from, to);
  } catch (error) {
    if (['EEXIST', 'ENOTEMPTY', 'ENOTDIR', 'EISDIR'].includes(code(error) ?? '')) throw existsError(toShown);
    throw error;
  }
}

/** Filesystems without hard links, or that forbid linking this file, fall back to check-and-rename. */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS'];

/**
 * Gives a file a second name that must be new (link fails rather than replace), then drops the
 * first. Returns false when this filesystem cannot link the file, for the caller to fall back.
 */
async function linkThenUnlink(from: string, to: string, toShown: string): Promise<boolean> {
  try {
    await fsp.link(from, to);
  } catch (error) {
    if (code(error) === 'EEXIST') throw existsError(toShown);
    if (NO_HARD_LINKS.includes(code(error) ?? '')) return false;
    throw error;
  }
  try {
    await fsp.unlink(from);
  } catch (error) {
    // ENOENT: someone else (a concurrent purge of the trash) removed the old name first, so the move is done.
    if (code(error) === 'ENOENT') return true;
    await fsp.unlink(to).catch(() => undefined);
    throw error;
  }
  return true;
}

async function moveFile(from: string, to: string, toShown: string): Promise<MoveMethod> {
  try {
    if (!(await linkThenUnlink(from, to, toShown))) await renameIfAbsent(from, to, toShown);
    return 'renamed';
  } catch (error) {
    if (code(error) === 'EXDEV') return copyAcross(from, to, 'file', toShown);
    throw error;
  }
}

/**
 * A symlink is moved by writing the same link text at the new place (symlink() fails rather than
 * replace anything, on any filesystem) and removing the old link: the target is never touched.
 */
async function moveSymlink(from: string, to: string, toShown: string): Promise<MoveMethod> {
  const target = await fsp.readlink(from);
  try {
    await fsp.symlink(target, to);
  } catch (error) {
    if (code(error) === 'EEXIST') throw existsError(toShown);
    throw error;
  }
  await fsp.unlink(from).catch((error: unknown) => {
    if (code(error) !== 'ENOENT') throw error;
  });
  return 'renamed';
}

async function moveFolder(from: string, to: string, toShown: string): Promise<MoveMethod> {
  try {
    await renameIfAbsent(from, to, toShown);
    return 'renamed';
  } catch (error) {
    if (code(error) === 'EXDEV') return copyAcross(from, to, 'folder', toShown);
    throw error;
  }
}

/**
 * Across filesystems: copy to a temp name beside `to` (symlinks copied as they are written, never
 * followed; modes and times kept), put it in place without replacing anything, and only then
 * remove the original. A failure before that leaves the original whole and no copy behind.
 */
async function copyAcross(from: string, to: string, kind: 'file' | 'folder', toShown: string): Promise<MoveMethod> {
  const temp = tempBeside(to);
  try {
    await fsp.cp(from, temp, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, errorOnExist: true, force: false });
    // The temp copy and `to` share a folder, so a filesystem without hard links gets the rename.
    if (kind === 'folder' || !(await linkThenUnlink(temp, to, toShown))) await renameIfAbsent(temp, to, toShown);
  } catch (error) {
    await fsp.rm(temp, { recursive: true, force: true });
    throw error;
  }
  try {
    await fsp.rm(from, { recursive: true });
  } catch (error) {
    throw new ToolError(`${toShown} now holds a complete copy, but the original could not be removed entirely: ${(error as Error).message}`);
  }
  return 'copied';
}

/**
 * Moves the entry at `from` (of the given kind, never followed) to `to`, which must not exist:
 * nothing is ever replaced. The folder `to` goes in must exist. Across filesystems the entry is
 * copied and the original removed once the copy is in place.
 */
export async function moveEntry(from: string, to: string, kind: EntryKind, toShown: string): Promise<MoveMethod> {
  if (kind === 'symlink') return moveSymlink(from, to, toShown);
  if (kind === 'file') return moveFile(from, to, toShown);
  return moveFolder(from, to, toShown);
}
