import { constants, fstatSync, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ToolError } from '../errors.js';
import { lstatIfExists, type EntryKind } from './tree.js';
import { tempName, type InFlight } from './temp-names.js';

/** How an entry got to its new place. */
export type MoveMethod = 'renamed' | 'copied';

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

function existsError(toShown: string): ToolError {
  return new ToolError(`${toShown} already exists; nothing was moved`, 'exists');
}

/** A failed system call in words, without the paths (some through /proc/self/fd) Node puts in its message. */
function reason(error: unknown): string {
  const { code: errno, syscall } = error as NodeJS.ErrnoException;
  if (errno === undefined) return (error as Error).message;
  const words: Record<string, string> = { EACCES: 'permission denied', EPERM: 'not permitted', EROFS: 'the filesystem is read-only', ENOSPC: 'the disk is full', EBUSY: 'it is in use' };
  return `${words[errno] ? `${words[errno]} (${errno})` : errno}${syscall ? ` in ${syscall}` : ''}`;
}

interface PinnedFolder {
  /** The path of `name` in this very folder, whatever is swapped for what above it meanwhile. */
  at(name: string): string;
  close(): Promise<void>;
}

/**
 * Opens `folder` (a real path) and proves the descriptor is that folder, so names in it can be
 * reached through /proc/self/fd: a folder above it swapped for a symlink to outside the roots
 * cannot redirect the move. Without /proc the folder must still be the one its path names.
 */
async function pinFolder(folder: string, shownAs: string): Promise<PinnedFolder> {
  let dir: FileHandle;
  try {
    dir = await fsp.open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (['ENOENT', 'ELOOP', 'ENOTDIR'].includes(code(error) ?? '')) throw changedError(shownAs);
    throw new ToolError(`cannot move ${shownAs}: ${reason(error)}; nothing was moved`);
  }
  const viaProc = `/proc/self/fd/${dir.fd}`;
  const actual = await fsp.readlink(viaProc).catch(() => undefined);
  const same =
    actual !== undefined
      ? actual === folder
      : await fsp.lstat(folder).then(
          (named) => {
            const opened = fstatSync(dir.fd);
            return opened.dev === named.dev && opened.ino === named.ino;
          },
          () => false,
        );
  if (!same) {
    await dir.close();
    throw changedError(shownAs);
  }
  return { at: (name) => (actual !== undefined ? join(viaProc, name) : join(folder, name)), close: () => dir.close() };
}

function changedError(shownAs: string): ToolError {
  return new ToolError(`the folder of ${shownAs} changed during the move (removed, or swapped for a symlink); nothing was moved`, 'conflict');
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
async function linkThenUnlink(from: string, to: string, toShown: string, journal?: Journal): Promise<boolean> {
  // Journaled, so a kill between the two calls (the file under both names, two links) is finished by the next sweep.
  const released = journal ? await journal.inFlight.track(journal.from, journal.to) : async () => undefined;
  try {
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
  } finally {
    await released();
  }
}

/** The journal of a move and the real paths of its two ends, as the sweep will find them. */
interface Journal {
  readonly inFlight: InFlight;
  readonly from: string;
  readonly to: string;
}

async function moveFile(from: string, to: string, toShown: string, journal?: Journal): Promise<MoveMethod> {
  try {
    if (!(await linkThenUnlink(from, to, toShown, journal))) await renameIfAbsent(from, to, toShown);
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
  const temp = join(dirname(to), tempName(basename(to)));
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
    throw new ToolError(`${toShown} now holds a complete copy, but the original could not be removed entirely: ${reason(error)}`);
  }
  return 'copied';
}

/** How the two ends of a move are named to the model. */
export interface MoveNames {
  readonly from: string;
  readonly to: string;
}

/**
 * Moves the entry at `from` (of the given kind, never followed) to `to`, which must not exist:
 * nothing is ever replaced. Both are real paths; the folders they are in must exist and are
 * pinned by descriptor. Across filesystems the entry is copied and the original removed once
 * the copy is in place. With `inFlight`, a file moved by link() then unlink() is journaled, so a
 * kill between the two leaves nothing a sweep does not finish.
 */
export async function moveEntry(from: string, to: string, kind: EntryKind, names: MoveNames, options: { readonly inFlight?: InFlight } = {}): Promise<MoveMethod> {
  const source = await pinFolder(dirname(from), names.from);
  try {
    const target = await pinFolder(dirname(to), names.to);
    try {
      const [pinnedFrom, pinnedTo] = [source.at(basename(from)), target.at(basename(to))];
      if (kind === 'symlink') return await moveSymlink(pinnedFrom, pinnedTo, names.to);
      if (kind === 'file') return await moveFile(pinnedFrom, pinnedTo, names.to, options.inFlight && { inFlight: options.inFlight, from, to });
      return await moveFolder(pinnedFrom, pinnedTo, names.to);
    } finally {
      await target.close();
    }
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(`cannot move ${names.from} to ${names.to}: ${reason(error)}; nothing was moved`);
  } finally {
    await source.close();
  }
}
