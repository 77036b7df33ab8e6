import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import { ToolError } from '@bulkhead/core';

/**
 * Search relative to a folder held open, never by its path again. A folder confined by path and
 * then handed on by path can be swapped for a symlink in between (`renameat2(RENAME_EXCHANGE)` by
 * anything that writes in the root); one held by descriptor cannot. `/proc/self/fd/N/name` opened
 * with O_NOFOLLOW is `openat(N, name, O_NOFOLLOW)`: every component is taken from a descriptor,
 * and none is ever followed as a symlink.
 */
export const HAS_PROC_FD = existsSync('/proc/self/fd');

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

export interface PinnedFolder {
  readonly fd: number;
  /** The folder as confine named it. */
  readonly real: string;
  /** A path to the very folder that was opened (`/proc/self/fd/N`), or `real` where /proc is missing. */
  readonly via: string;
  close(): void;
}

/**
 * Opens a confined folder once and proves that the folder opened is the one confine named (a
 * folder above it swapped for a symlink between the two would be followed by the open).
 */
export function pinFolder(real: string, shownAs: string, notAFolder?: string): PinnedFolder {
  let fd: number;
  try {
    fd = openSync(real, DIR_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new ToolError(notAFolder ?? `${shownAs} is not a folder`, 'not_a_folder');
    if (code === 'ELOOP') throw new ToolError(`${shownAs} changed into a symlink while it was being opened; nothing was searched`, 'outside_roots');
    if (code === 'ENOENT') throw new ToolError(`${shownAs} does not exist`, 'not_found');
    throw new ToolError(`${shownAs}: ${(error as Error).message}`);
  }
  if (HAS_PROC_FD) {
    let actual: string | undefined;
    try {
      actual = readlinkSync(fdPath(fd));
    } catch {
      actual = undefined;
    }
    if (actual !== real) {
      closeSync(fd);
      throw new ToolError(`${shownAs} changed while it was being opened (a folder on its path was swapped for a symlink?); nothing was searched`, 'outside_roots');
    }
  }
  return held(fd, real);
}

function held(fd: number, real: string): PinnedFolder {
  let open = true;
  return {
    fd,
    real,
    via: HAS_PROC_FD ? fdPath(fd) : real,
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** A regular file opened beneath a pinned folder, with what fstat says of it. */
export interface OpenedBeneath {
  readonly fd: number;
  readonly stat: Stats;
}

/**
 * Resolves paths relative to a pinned folder one component at a time, each folder opened with
 * O_DIRECTORY | O_NOFOLLOW through its parent's descriptor. A component that is (now) a symlink,
 * `..`, or not a folder makes the path unreachable: it is dropped, never followed. Paths given in
 * sorted order reuse the folders already open (a stack as deep as the path).
 */
export class Beneath {
  private readonly stack: { name: string; fd: number }[] = [];

  constructor(private readonly root: PinnedFolder) {}

  private folder(parts: readonly string[]): number | undefined {
    let same = 0;
    while (same < this.stack.length && same < parts.length && this.stack[same]!.name === parts[same]) same++;
    while (this.stack.length > same) closeSync(this.stack.pop()!.fd);
    for (let i = same; i < parts.length; i++) {
      const name = parts[i]!;
      if (name === '' || name === '.' || name === '..') return undefined;
      const parent = i === 0 ? this.root.fd : this.stack[i - 1]!.fd;
      let fd: number;
      try {
        fd = openSync(`${fdPath(parent)}/${name}`, DIR_FLAGS);
      } catch {
        return undefined;
      }
      this.stack.push({ name, fd });
    }
    return parts.length === 0 ? this.root.fd : this.stack[parts.length - 1]!.fd;
  }

  private split(relative: string): { dir: string[]; name: string } | undefined {
    const parts = relative.replace(/^\.\//, '').split('/').filter((part) => part !== '' && part !== '.');
    const name = parts.pop();
    if (name === undefined || name === '..') return undefined;
    return { dir: parts, name };
  }

  /** The path beneath the pinned folder as a name the kernel resolves without following, or undefined. */
  entryPath(relative: string): string | undefined {
    if (!HAS_PROC_FD) return `${this.root.real}/${relative}`;
    const split = this.split(relative);
    if (!split) return undefined;
    const dir = this.folder(split.dir);
    return dir === undefined ? undefined : `${fdPath(dir)}/${split.name}`;
  }

  /** lstat of the entry itself (never followed), or undefined when it cannot be reached. */
  lstat(relative: string): Stats | undefined {
    const path = this.entryPath(relative);
    if (path === undefined) return undefined;
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  }

  /** A descriptor of the entry opened with these flags (never following it), or undefined. */
  private openEntry(relative: string, flags: number): number | undefined {
    const path = this.entryPath(relative);
    if (path === undefined) return undefined;
    try {
      return openSync(path, flags);
    } catch {
      return undefined;
    }
  }

  /** Opens a regular file beneath the folder; undefined for anything else or anything unreachable. */
  open(relative: string): OpenedBeneath | undefined {
    const fd = this.openEntry(relative, FILE_FLAGS);
    if (fd === undefined) return undefined;
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      closeSync(fd);
      return undefined;
    }
    return { fd, stat };
  }

  /** Opens a folder beneath the pinned one as a pinned folder of its own (for walks). */
  openFolder(relative: string): PinnedFolder | undefined {
    const fd = this.openEntry(relative, DIR_FLAGS);
    return fd === undefined ? undefined : held(fd, `${this.root.real}/${relative}`);
  }

  close(): void {
    while (this.stack.length > 0) closeSync(this.stack.pop()!.fd);
  }
}

/** The entries of a pinned folder, read through its descriptor. */
export function readPinned(folder: PinnedFolder): Dirent[] {
  return readdirSync(folder.via, { withFileTypes: true });
}

/** Paths sorted so that those in one folder come together (Beneath reuses the folders open). */
export function byFolder(paths: readonly string[]): string[] {
  return [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
