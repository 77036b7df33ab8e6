import { constants, fstatSync, promises as fsp, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { ToolError } from '../errors.js';
import type { ConfinedPath, PathPurpose, Roots } from './roots.js';
import { OPEN_READ_FLAGS } from './roots.js';
import { processAlive } from '../processes.js';
import { isTempNameOf, lockName, tempName, type InFlight, type InFlightRelease } from './temp-names.js';

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

/** What the kernel says an open descriptor is, or undefined where /proc is missing. */
async function procPath(fd: number): Promise<string | undefined> {
  return fsp.readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
}

/**
 * A path through the open folder descriptor, so a folder swapped for a symlink cannot redirect a
 * write. O_NOFOLLOW guards only the last component, and a folder above it swapped for a symlink
 * would still be followed by the open: so the descriptor must be the very folder that was confined.
 */
async function pinnedFolder(folder: string, shownAs: string): Promise<{ at: (name: string) => string; close: () => Promise<void> }> {
  let dir: FileHandle;
  try {
    dir = await fsp.open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ToolError(`the folder of ${shownAs} was removed while it was being written; nothing was written`, 'conflict');
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw new ToolError(`the folder of ${shownAs} changed while it was being written (it is now a symlink or a file); nothing was written`, 'conflict');
    }
    throw new ToolError(`cannot write ${shownAs}: ${errnoReason(error)}; nothing was written`, 'write_failed');
  }
  const actual = await procPath(dir.fd);
  // Without /proc the folder opened must at least be the one its path names now.
  const same = actual !== undefined ? actual === folder : await fsp.lstat(folder).then((named) => sameInode(fstatSync(dir.fd), named), () => false);
  if (!same) {
    await dir.close();
    throw new ToolError(`the folder of ${shownAs} changed while it was being written (a folder above it was swapped for a symlink?); nothing was written`, 'conflict');
  }
  const viaProc = `/proc/self/fd/${dir.fd}`;
  return {
    at: (name) => (actual !== undefined ? join(viaProc, name) : join(folder, name)),
    close: () => dir.close(),
  };
}

function sameInode(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * Creates `folder` and the missing folders above it, one at a time through open descriptors from
 * its root down, each opened without following a symlink: a folder on the way swapped for a
 * symlink cannot lead the creation outside the roots, as it would lead `mkdir -p`. Returns the
 * folders it created.
 */
export async function makeFoldersSafely(roots: Roots, folder: ConfinedPath, shownAs: string): Promise<string[]> {
  const root = roots.rootOf(folder);
  if (root === undefined) throw new ToolError(`${shownAs} is outside the allowed roots (${roots.real.join(', ')})`, 'outside_roots');
  const created: string[] = [];
  let current = root;
  let dir = await fsp.open(root, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const proc = (await procPath(dir.fd)) !== undefined;
    for (const part of relative(root, folder).split(sep).filter((name) => name.length > 0)) {
      const next = join(current, part);
      const at = proc ? `/proc/self/fd/${dir.fd}/${part}` : next;
      try {
        await fsp.mkdir(at);
        created.push(next);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw new ToolError(`${roots.display(current)} was removed while the folders were being created`, 'conflict');
        if (code !== 'EEXIST') throw new ToolError(`cannot create ${roots.display(next)}: ${errnoReason(error)}`, 'write_failed');
      }
      let child: FileHandle;
      try {
        child = await fsp.open(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ELOOP' || code === 'ENOTDIR') throw new ToolError(`${roots.display(next)} is not a folder (a file or a symlink is there)`, 'conflict');
        if (code === 'ENOENT') throw new ToolError(`${roots.display(next)} was removed while the folders were being created`, 'conflict');
        throw new ToolError(`cannot open ${roots.display(next)}: ${errnoReason(error)}`, 'write_failed');
      }
      await dir.close();
      dir = child;
      current = next;
    }
  } finally {
    await dir.close();
  }
  return created;
}

const ERRNO_REASONS: Record<string, string> = {
  ENOSPC: 'the disk is full (ENOSPC)',
  EDQUOT: 'the disk quota is used up (EDQUOT)',
  EFBIG: 'the file is larger than this process may write (EFBIG: file size limit)',
  EACCES: 'permission denied: its folder is not writable (EACCES)',
  EPERM: 'the operation is not permitted (EPERM)',
  EROFS: 'the filesystem is read-only (EROFS)',
  EIO: 'an input/output error (EIO)',
};

/** A failed system call in words, without the internal path (/proc/self/fd/…) Node puts in its message. */
function errnoReason(error: unknown): string {
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (code === undefined) return (error as Error).message;
  return ERRNO_REASONS[code] ?? `${code}${syscall ? ` in ${syscall}` : ''}`;
}

export interface WriteResult {
  readonly created: boolean;
  readonly mode: number;
}

/** What the file on disk must still be when it is replaced: the one that was read, or none at all. */
export type ExpectedFile = { readonly kind: 'absent' } | { readonly kind: 'file'; readonly dev: number; readonly ino: number; readonly size: number; readonly mtimeMs: number };

export function expectedFromStat(stat: Stats): ExpectedFile {
  return { kind: 'file', dev: stat.dev, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
}

function sameFile(expected: ExpectedFile, stat: Stats | undefined): boolean {
  if (expected.kind === 'absent') return stat === undefined;
  return stat !== undefined && stat.dev === expected.dev && stat.ino === expected.ino && stat.size === expected.size && stat.mtimeMs === expected.mtimeMs;
}

/**
 * Writes `data` to a confined path without ever following a symlink, so that the path holds
 * either the old content or the new, whole, at every moment (a crash mid-write included): the
 * data goes to a temp file in the same folder (pinned by descriptor) and is synced, then a new
 * file is linked into place (which fails rather than replace one that appeared meanwhile) and an
 * existing one is replaced by a rename, keeping its mode. With `expected`, the write happens only
 * if the file is still the one that was read. A failed write (a full disk) leaves the original
 * untouched and no temp file behind. The target folder must already exist.
 */
export interface WriteOptions {
  /** Journal of the hidden files this write creates, so that a kill -9 leaves nothing a restart does not sweep. */
  readonly inFlight?: InFlight;
  /**
   * Work that must be done before the new content is put in place (keeping the old version in
   * the trash), run alongside the writing of the temp file, so their two syncs overlap; if it
   * fails, nothing is replaced.
   */
  readonly before?: Promise<unknown>;
}

export async function writeFileSafely(path: ConfinedPath, data: string | Uint8Array, shownAs: string, expected?: ExpectedFile, options: WriteOptions = {}): Promise<WriteResult> {
  const folder = await pinnedFolder(dirname(path), shownAs);
  const name = basename(path);
  try {
    const existing = await lstatOrUndefined(folder.at(name));
    if (existing?.isSymbolicLink()) throw new ToolError(`${shownAs} is a symlink; it is not followed and not replaced`, 'symlink');
    if (existing && !existing.isFile()) throw new ToolError(`${shownAs} exists and is not a regular file`);
    if (existing && existing.nlink > 1) {
      throw new ToolError(`${shownAs} has ${existing.nlink} hard links; a file that is also reachable elsewhere (perhaps outside the roots) is not replaced through one of its names`, 'hard_link');
    }
    if (expected && !sameFile(expected, existing)) throw changedError(shownAs, expected);
    const mode = existing ? existing.mode & 0o7777 : 0o644;
    const temp = tempName(name);
    const released = await track(options.inFlight, dirname(path), temp);
    try {
      const handle = await fsp.open(folder.at(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
      try {
        await handle.writeFile(data);
        await handle.chmod(mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (options.before) await options.before;
      if (!existing) {
        await fsp.link(folder.at(temp), folder.at(name)).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'EEXIST') throw new ToolError(`${shownAs} appeared while it was being created; nothing was written`, 'conflict');
          throw error;
        });
        return { created: true, mode };
      }
      // Check and rename under a lock that other processes honour too: between a bare check and
      // the rename, another writer's rename could slip in and be overwritten unseen.
      await withReplaceLock(folder.at(lockName(name)), shownAs, options.inFlight && join(dirname(path), lockName(name)), options.inFlight, async () => {
        if (expected && !sameFile(expected, await lstatOrUndefined(folder.at(name)))) throw changedError(shownAs, expected);
        await fsp.rename(folder.at(temp), folder.at(name));
      });
      return { created: false, mode };
    } catch (error) {
      if (error instanceof ToolError) throw error;
      // The pinned folder itself was removed (a rename replaced it): nothing can appear in it.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ToolError(`the folder of ${shownAs} was removed while it was being written; nothing was written`, 'conflict');
      throw new ToolError(`cannot write ${shownAs}: ${errnoReason(error)}; nothing was written${existing ? `, ${shownAs} is unchanged` : ''}`, 'write_failed');
    } finally {
      await fsp.rm(folder.at(temp), { force: true });
      await released();
    }
  } finally {
    await folder.close();
  }
}

async function track(inFlight: InFlight | undefined, folder: string, name: string): Promise<InFlightRelease> {
  return inFlight ? inFlight.track(join(folder, name)) : async () => undefined;
}

/**
 * Takes away the second names a writer killed between link() and unlink() left beside `path`:
 * temp names made for this very name that are the same inode as it. Removing one loses nothing
 * (the real name keeps the content), so no owner check is needed. Returns how many went.
 */
export async function releaseInterruptedLinks(path: string): Promise<number> {
  const folder = dirname(path);
  const name = basename(path);
  const stat = await lstatOrUndefined(path);
  if (!stat?.isFile() || stat.nlink < 2) return 0;
  let removed = 0;
  for (const candidate of await fsp.readdir(folder).catch(() => [] as string[])) {
    if (!isTempNameOf(candidate, name)) continue;
    const other = await lstatOrUndefined(join(folder, candidate)).catch(() => undefined);
    if (other && sameInode(other, stat)) await fsp.unlink(join(folder, candidate)).then(() => removed++, () => undefined);
  }
  return removed;
}

/** A replace lock older than this was left by a writer that died holding it (it is held for two system calls). */
export const REPLACE_LOCK_STALE_MS = 2000;
const REPLACE_LOCK_WAIT_MS = 5000;
/** A lock naming a dead process is taken over once it is this old (a pid of another pid namespace looks dead). */
const DEAD_HOLDER_GRACE_MS = 100;

/** The pid a lock file names, or undefined when it names none (being written, or from an older version). */
async function lockHolder(lock: string): Promise<number | undefined> {
  const text = await fsp.readFile(lock, 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Runs `work` holding an exclusive lock file: created with O_EXCL (atomic on every local
 * filesystem) holding the pid of its holder, removed when done, taken over when its holder is
 * dead or it is older than REPLACE_LOCK_STALE_MS. With `inFlight` the lock is journaled, so a
 * holder killed with it is swept at the next start.
 */
async function withReplaceLock<T>(lock: string, shownAs: string, recorded: string | undefined, inFlight: InFlight | undefined, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const released = inFlight && recorded ? await inFlight.track(recorded) : async () => undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await fsp.open(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
        try {
          await handle.writeFile(String(process.pid));
        } finally {
          await handle.close();
        }
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const held = await lstatOrUndefined(lock);
      if (held) {
        const age = Date.now() - held.mtimeMs;
        const holder = age > DEAD_HOLDER_GRACE_MS ? await lockHolder(lock) : undefined;
        if (age > REPLACE_LOCK_STALE_MS || (holder !== undefined && holder !== process.pid && !processAlive(holder))) {
          await fsp.rm(lock, { force: true });
          continue;
        }
      }
      if (Date.now() - started > REPLACE_LOCK_WAIT_MS) {
        throw new ToolError(`${shownAs} is being replaced by another writer that holds its lock for too long; nothing was written. Retry in a moment.`, 'conflict');
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(1 + attempt, 20)));
    }
    try {
      return await work();
    } finally {
      await fsp.rm(lock, { force: true });
    }
  } finally {
    await released();
  }
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await fsp.lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function changedError(shownAs: string, expected: ExpectedFile): ToolError {
  return expected.kind === 'absent'
    ? new ToolError(`${shownAs} appeared while it was being created; nothing was written`, 'conflict')
    : new ToolError(`${shownAs} changed on disk since it was read (another writer?); nothing was written. Read it again and retry.`, 'conflict');
}
