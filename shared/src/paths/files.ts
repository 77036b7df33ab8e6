import { constants, fstatSync, promises as fsp, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ToolError } from '../errors.js';
import type { ConfinedPath, PathPurpose, Roots } from './roots.js';
import { OPEN_READ_FLAGS } from './roots.js';

export interface OpenedFile {
  readonly handle: FileHandle;
  readonly stat: Stats;
  /** The path the kernel reports for the open descriptor. */
  readonly real: string;
}

function describeKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Opens a confined regular file for reading without following a final symlink and without
 * blocking on a FIFO, then checks what was really opened.
 */
export async function openConfinedFile(roots: Roots, path: ConfinedPath, shownAs: string, purpose: PathPurpose = 'read'): Promise<OpenedFile> {
  let handle: FileHandle;
  try {
    handle = await fsp.open(path, OPEN_READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ToolError(`${shownAs} changed into a symlink while it was being opened; nothing was read`, 'outside_roots');
    if (code === 'ENOENT') throw new ToolError(`${shownAs} does not exist`, 'not_found');
    if (code === 'EISDIR') throw new ToolError(`${shownAs} is a folder; use list_files to see what it holds`, 'is_directory');
    throw new ToolError(`${shownAs}: ${(error as Error).message}`);
  }
  try {
    const real = await roots.verifyOpened(handle.fd, path, shownAs, purpose);
    const stat = fstatSync(handle.fd);
    if (!stat.isFile()) {
      throw new ToolError(`${shownAs} is ${describeKind(stat)}; only regular files can be read${stat.isDirectory() ? ' (use list_files for folders)' : ''}`);
    }
    return { handle, stat, real };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** A path through the open folder descriptor, so a folder swapped for a symlink cannot redirect a write. */
async function pinnedFolder(folder: string): Promise<{ at: (name: string) => string; close: () => Promise<void> }> {
  let dir: FileHandle;
  try {
    dir = await fsp.open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new ToolError(`${folder} cannot be used as a folder: ${(error as Error).message}`);
  }
  const viaProc = `/proc/self/fd/${dir.fd}`;
  const procWorks = await fsp.readlink(viaProc).then((target) => target === folder, () => false);
  return {
    at: (name) => (procWorks ? join(viaProc, name) : join(folder, name)),
    close: () => dir.close(),
  };
}

export interface WriteResult {
  readonly created: boolean;
  readonly mode: number;
}

/**
 * Writes `data` to a confined path without ever following a symlink: a new file is created
 * exclusively; an existing one is replaced by a temp file in the same folder and a rename, keeping
 * its mode. The target folder must already exist.
 */
export async function writeFileSafely(path: ConfinedPath, data: string | Uint8Array, shownAs: string): Promise<WriteResult> {
  const folder = await pinnedFolder(dirname(path));
  const name = basename(path);
  try {
    let existing: Stats | undefined;
    try {
      existing = await fsp.lstat(folder.at(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (existing?.isSymbolicLink()) throw new ToolError(`${shownAs} is a symlink; it is not followed and not replaced`, 'symlink');
    if (existing && !existing.isFile()) throw new ToolError(`${shownAs} exists and is not a regular file`);
    if (!existing) {
      const handle = await fsp.open(folder.at(name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') throw new ToolError(`${shownAs} appeared while it was being created; nothing was written`, 'conflict');
        throw error;
      });
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return { created: true, mode: 0o644 };
    }
    const mode = existing.mode & 0o7777;
    const temp = `.${name}.bulkhead-${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fsp.open(folder.at(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
    try {
      await handle.writeFile(data);
      await handle.chmod(mode);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await fsp.rm(folder.at(temp), { force: true });
      throw error;
    }
    await handle.close();
    try {
      await fsp.rename(folder.at(temp), folder.at(name));
    } catch (error) {
      await fsp.rm(folder.at(temp), { force: true });
      throw error;
    }
    return { created: false, mode };
  } finally {
    await folder.close();
  }
}
