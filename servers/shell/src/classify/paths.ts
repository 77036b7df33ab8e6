import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Word } from './types.js';

/** Targets that swallow or pass output on without writing a file. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/fd/1', '/dev/fd/2']);

export type Place =
  /** `gitFolder`: the path lies in (or is) a `.git` folder below its root, where hooks and config run programs later. */
  | { readonly where: 'inside'; readonly path: string; readonly gitFolder: boolean }
  | { readonly where: 'harmless'; readonly path: string }
  | { readonly where: 'outside' | 'root'; readonly path: string }
  | { readonly where: 'unknown'; readonly why: string };

/** Where a path written by a command lands, judged against the roots with symbolic links resolved. */
export class Roots {
  private readonly real: readonly string[];

  constructor(roots: readonly string[]) {
    this.real = roots.map((root) => realOrLexical(resolve(root)));
  }

  /** `cwd` is null once a `cd` went somewhere unknown. */
  place(word: Word, cwd: string | null): Place {
    const path = staticPath(word);
    if (path === undefined) return { where: 'unknown', why: `\`${word.text}\` is only known when the command runs` };
    if (HARMLESS_TARGETS.has(path)) return { where: 'harmless', path };
    if (!isAbsolute(path) && cwd === null) return { where: 'unknown', why: `\`${path}\` is relative to a directory a cd left unknown` };
    const absolute = realOrLexical(resolve(cwd ?? '/', path));
    // A glob names what is inside its directory, so `rm *` at a root stays inside it.
    const inside = (root: string) => absolute.startsWith(withSep(root)) || (word.kind === 'glob' && absolute === root);
    const root = this.real.find(inside);
    if (root !== undefined) return { where: 'inside', path: absolute, gitFolder: absolute.slice(root.length).split(sep).includes('.git') };
    if (this.real.includes(absolute)) return { where: 'root', path: absolute };
    return { where: 'outside', path: absolute };
  }

  /** A directory `cd` or `git -C` moves to (null when not static). */
  directory(word: Word, cwd: string | null): string | null {
    if (word.kind !== 'static' || (cwd === null && !isAbsolute(word.text))) return null;
    return resolve(cwd ?? '/', word.text);
  }
}

/**
 * The path a word names: a static word, or a glob whose expansion stays under its static
 * directory (no `..` after the first glob character).
 */
function staticPath(word: Word): string | undefined {
  if (word.kind === 'static') return word.text;
  if (word.kind !== 'glob' || word.text.slice(word.staticPrefix.length).split('/').includes('..')) return undefined;
  const slash = word.staticPrefix.lastIndexOf('/');
  return slash < 0 ? '.' : word.staticPrefix.slice(0, slash + 1) || '/';
}

/** bash itself opens a socket for a redirect from or to /dev/tcp/HOST/PORT or /dev/udp/HOST/PORT. */
export function networkDevice(word: Word): boolean {
  const known = word.kind === 'static' ? word.text : word.staticPrefix;
  // "/dev/$proto/…" is known only up to /dev/: it may still become one.
  const mayBecome = (device: string) => word.kind !== 'static' && known.startsWith('/dev/') && device.startsWith(known);
  return ['/dev/tcp/', '/dev/udp/'].some((device) => known.startsWith(device) || mayBecome(device));
}

function withSep(path: string): string {
  return path.endsWith(sep) ? path : path + sep;
}

/** The real path of the deepest existing ancestor, with the rest appended (the file may not exist yet). */
function realOrLexical(path: string): string {
  let existing = path;
  let rest = '';
  for (;;) {
    try {
      const real = realpathSync.native(existing);
      return rest === '' ? real : join(real, rest);
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest = rest === '' ? basename(existing) : join(basename(existing), rest);
      existing = parent;
    }
  }
}
