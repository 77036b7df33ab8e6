import type { Stats } from 'node:fs';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { ToolError } from '../errors.js';
import { formatBytes } from '../limits/truncate.js';

/** The kinds of entry a move, a delete or the trash handles; anything else is refused. */
export type EntryKind = 'file' | 'folder' | 'symlink';

/** What an entry is and holds, measured with lstat: no symlink is ever followed. */
export interface EntrySummary {
  readonly kind: EntryKind;
  /** Bytes of the files (and link texts) it holds, itself included; folders count nothing. */
  readonly bytes: number;
  /** Entries inside a folder, at any depth (0 for a file or a symlink). */
  readonly files: number;
  readonly folders: number;
  readonly symlinks: number;
  /** Named pipes, sockets and devices inside a folder. */
  readonly others: number;
  /** What a symlink points at, as written. */
  readonly target?: string;
  /** The lstat of the entry itself. */
  readonly stat: Stats;
}

/**
 * Past this many entries inside a folder, a move or delete is refused rather than checked: every
 * entry must be looked at to be sure nothing in the protected set goes along, and a walk of
 * millions of entries would hold the call for minutes. Large folders can be handled one
 * subfolder at a time.
 */
export const MAX_TREE_ENTRIES = 100_000;

export interface MeasureOptions {
  /** Called with the absolute path of every entry inside a folder, parents before children, names in order. */
  readonly visit?: (path: string) => void;
  readonly maxEntries?: number;
  readonly signal?: AbortSignal;
}

export function entryKind(stat: Stats): EntryKind | undefined {
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isDirectory()) return 'folder';
  if (stat.isFile()) return 'file';
  return undefined;
}

function describeSpecial(stat: Stats): string {
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  return 'a device';
}

/** lstat, with a missing entry reported as `undefined` (also when a folder on the way is a file). */
export async function lstatIfExists(path: string): Promise<Stats | undefined> {
  try {
    return await fsp.lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Measures the entry at `path` (which must exist) and, for a folder, walks everything inside it
 * depth first with lstat, calling `visit` on each entry so a caller can refuse what must not go
 * along. A folder holding more than `maxEntries` entries is refused.
 */
export async function measureEntry(path: string, shownAs: string, options: MeasureOptions = {}): Promise<EntrySummary> {
  const stat = await fsp.lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new ToolError(`${shownAs} does not exist`, 'not_found');
    throw new ToolError(`${shownAs}: ${error.message}`);
  });
  const kind = entryKind(stat);
  if (!kind) throw new ToolError(`${shownAs} is ${describeSpecial(stat)}; only files, folders and symlinks are moved or deleted`);
  if (kind === 'symlink') return { kind, bytes: stat.size, files: 0, folders: 0, symlinks: 0, others: 0, target: await fsp.readlink(path), stat };
  if (kind === 'file') return { kind, bytes: stat.size, files: 0, folders: 0, symlinks: 0, others: 0, stat };
  const maxEntries = options.maxEntries ?? MAX_TREE_ENTRIES;
  const counts = { bytes: 0, files: 0, folders: 0, symlinks: 0, others: 0 };
  let seen = 0;
  const pending = [path];
  while (pending.length > 0) {
    options.signal?.throwIfAborted();
    const folder = pending.pop()!;
    const names = (await fsp.readdir(folder)).sort();
    seen += names.length;
    if (seen > maxEntries) {
      throw new ToolError(`${shownAs} holds more than ${maxEntries} entries, too many to check for protected files; nothing was changed. Handle its subfolders one at a time.`, 'too_large');
    }
    const children = names.map((name) => join(folder, name));
    const stats = await Promise.all(children.map((child) => fsp.lstat(child)));
    const subfolders: string[] = [];
    children.forEach((child, index) => {
      options.visit?.(child);
      const childStat = stats[index]!;
      const childKind = entryKind(childStat);
      if (childKind === 'folder') {
        counts.folders++;
        subfolders.push(child);
      } else if (childKind === 'symlink') {
        counts.symlinks++;
        counts.bytes += childStat.size;
      } else if (childKind === 'file') {
        counts.files++;
        counts.bytes += childStat.size;
      } else counts.others++;
    });
    // Reversed onto the stack so the first name is walked first.
    pending.push(...subfolders.reverse());
  }
  return { kind, ...counts, stat };
}

/** Entries inside a folder (0 for a file or a symlink). */
export function entriesInside(summary: EntrySummary): number {
  return summary.files + summary.folders + summary.symlinks + summary.others;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** `file, 1.2 KiB`, `symlink -> ../x`, `empty folder`, `folder: 3 files, 1 folder, 4.5 KiB` (counts of none left out). */
export function describeEntry(summary: EntrySummary): string {
  if (summary.kind === 'file') return `file, ${formatBytes(summary.bytes)}`;
  if (summary.kind === 'symlink') return `symlink -> ${summary.target ?? '?'}`;
  if (entriesInside(summary) === 0) return 'empty folder';
  const counted: [number, string][] = [
    [summary.files, 'file'],
    [summary.folders, 'folder'],
    [summary.symlinks, 'symlink'],
    [summary.others, 'special file'],
  ];
  const parts = counted.filter(([count]) => count > 0).map(([count, word]) => plural(count, word));
  return `folder: ${parts.join(', ')}, ${formatBytes(summary.bytes)}`;
}
