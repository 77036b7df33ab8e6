import { isUtf8 } from 'node:buffer';
import { constants, readdirSync, type Dirent } from 'node:fs';
import { lstat, open, realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ToolError } from '../errors.js';
import type { ConfinedPath, Roots } from '../paths/roots.js';

/** Where a repository's parts are, every one proven to lie inside the roots. */
export interface RepositoryLayout {
  /** The top folder of the working tree; undefined for a bare repository. */
  readonly workTree: string | undefined;
  /** The git directory: `.git`, a linked worktree's `.git/worktrees/<name>`, or the bare repository. */
  readonly gitDir: string;
  /** Where objects and refs live; differs from gitDir only for a linked worktree. */
  readonly commonDir: string;
}

const SMALL_FILE_BYTES = 64 * 1024;
/** git reads alternates files to this nesting depth, the main object store's own being depth 0 (link_alt_odb_entries). */
const MAX_ALTERNATE_DEPTH = 5;
/**
 * Folders of the git directory and of the common directory whose entries git reads or writes
 * (HEAD, config, index, objects, packs, refs, reflogs, info/attributes, info/exclude,
 * info/sparse-checkout): a symlink there must point inside the roots.
 */
const GIT_DIR_FOLDERS = ['', 'logs', 'logs/refs', 'logs/refs/heads'];
const COMMON_DIR_FOLDERS = ['', 'info', 'objects', 'objects/pack', 'objects/info', 'refs', 'refs/heads', 'refs/tags', 'refs/remotes', 'logs', 'logs/refs', 'logs/refs/heads'];

function listFolder(path: string): Dirent[] {
  try {
    return readdirSync(path, { withFileTypes: true });
  } catch {
    return [];
  }
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** A file's text with the line ends at its end taken away, as git reads `commondir` and `.git` pointers (nothing else is trimmed). */
function withoutLineEnds(text: string): string {
  return text.replace(/[\r\n]+$/, '');
}

/** The path in a `gitdir: <path>` file, read as git reads it (read_gitfile_gently): the rest of the file after the prefix. */
function gitdirPointer(text: string | undefined): string | undefined {
  const path = text?.startsWith('gitdir: ') ? withoutLineEnds(text.slice('gitdir: '.length)) : undefined;
  return path && !/[\r\n]/.test(path) ? path : undefined;
}

const C_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 0x5c, '"': 0x22 };

/** A C-quoted string starting at `start` (quote.c, unquote_c_style): its bytes and the index after the closing quote, or undefined when git would not take it as quoted. */
function unquoteC(bytes: Buffer, start: number): { value: Buffer; end: number } | undefined {
  const out: number[] = [];
  let i = start + 1;
  for (;;) {
    const byte = bytes[i++];
    if (byte === undefined) return undefined;
    if (byte === 0x22) return { value: Buffer.from(out), end: i };
    if (byte !== 0x5c) {
      out.push(byte);
      continue;
    }
    const escape = String.fromCharCode(bytes[i++] ?? 0);
    if (C_ESCAPES[escape] !== undefined) out.push(C_ESCAPES[escape]!);
    else if (/^[0-3]$/.test(escape) && /^[0-7]{2}$/.test(bytes.toString('latin1', i, i + 2))) {
      out.push(Number.parseInt(`${escape}${bytes.toString('latin1', i, i + 2)}`, 8));
      i += 2;
    } else return undefined;
  }
}

/**
 * The entries of an alternates file as git reads them (parse_alt_odb_entry): one a line, `#`
 * starts a comment, a C-quoted entry is unquoted (and may span lines), nothing is trimmed.
 */
function alternateEntries(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const entries: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const lineEnd = bytes.indexOf(0x0a, at) === -1 ? bytes.length : bytes.indexOf(0x0a, at);
    const quoted = bytes[at] === 0x22 ? unquoteC(bytes, at) : undefined;
    const [entry, end] = bytes[at] === 0x23 ? [Buffer.alloc(0), lineEnd] : quoted ? [quoted.value, quoted.end] : [bytes.subarray(at, lineEnd), lineEnd];
    at = end < bytes.length ? end + 1 : end;
    if (entry.length > 0) entries.push(entry);
  }
  return entries;
}

class RepositoryFinder {
  constructor(
    private readonly roots: Roots,
    private readonly shownAs: string,
  ) {}

  /** realpath of a part of the repository, refused when it lies outside the roots. */
  async inside(path: string, what: string): Promise<string> {
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      throw new ToolError(`${this.shownAs}: ${what} ${path} does not exist; the repository is broken`, 'not_a_repository');
    }
    if (!this.roots.rootOf(real)) {
      throw new ToolError(`${this.shownAs}: ${what} is ${real}, outside the allowed roots (${this.roots.real.join(', ')}); the repository is refused`, 'outside_roots');
    }
    return real;
  }

  /**
   * A small file git reads to find the repository's parts (a `.git` pointer, commondir,
   * alternates), as git reads it: through symlinks. Missing, or not a regular file: undefined
   * (opened without blocking, so a FIFO never hangs us). A file too large to read whole here, or
   * one holding a NUL or bytes that are not UTF-8, could be read one way here and another by git:
   * the repository is refused.
   */
  async readPart(path: string): Promise<string | undefined> {
    let handle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      if (!(await handle.stat()).isFile()) return undefined;
      const buffer = Buffer.alloc(SMALL_FILE_BYTES + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      if (bytesRead > SMALL_FILE_BYTES) throw new ToolError(`${this.shownAs}: ${path} is larger than 64 KiB, too large to check; the repository is refused`, 'not_a_repository');
      const bytes = buffer.subarray(0, bytesRead);
      if (!isUtf8(bytes) || bytes.includes(0)) throw new ToolError(`${this.shownAs}: ${path} holds a NUL or bytes that are not UTF-8, so it cannot be checked; the repository is refused`, 'not_a_repository');
      return bytes.toString('utf8');
    } finally {
      await handle.close();
    }
  }

  /** A folder laid out like a git directory (what git's is_git_directory checks). */
  async looksLikeGitDir(path: string): Promise<boolean> {
    const head = await lstat(join(path, 'HEAD')).catch(() => undefined);
    if (!head || !(head.isFile() || head.isSymbolicLink())) return false;
    const common = withoutLineEnds((await this.readPart(join(path, 'commondir'))) ?? '');
    const base = common === '' ? path : common.startsWith('/') ? common : `${path}/${common}`;
    return (await isFolder(join(base, 'objects'))) && (await isFolder(join(base, 'refs')));
  }

  /** The git directory that `<folder>/.git` names, when there is one: a folder, or a file (or a symlink to one) with a gitdir pointer. */
  async gitDirAt(folder: string): Promise<string | undefined> {
    const dotGit = join(folder, '.git');
    const info = await lstat(dotGit).catch(() => undefined);
    if (!info) return undefined;
    const target = info.isSymbolicLink() ? await stat(dotGit).catch(() => undefined) : info;
    if (!target?.isFile()) return this.gitDirInside(dotGit, '.git');
    const pointer = gitdirPointer(await this.readPart(dotGit));
    if (!pointer) throw new ToolError(`${this.shownAs}: ${dotGit} is a file but not a "gitdir: …" pointer; the repository is broken`, 'not_a_repository');
    // Joined as text, not resolved: git resolves `..` after a symlink from the symlink's target, as realpath does.
    return this.gitDirInside(pointer.startsWith('/') ? pointer : `${folder}/${pointer}`, 'named by .git');
  }

  /** A git directory must be a folder: git takes a file given as its git directory for one more gitdir pointer, read unchecked. */
  private async gitDirInside(path: string, how: string): Promise<string> {
    const real = await this.inside(path, `its git directory (${how})`);
    if (!(await isFolder(real))) throw new ToolError(`${this.shownAs}: its git directory ${real} (${how}) is not a folder; the repository is broken`, 'not_a_repository');
    return real;
  }

  async commonDirOf(gitDir: string): Promise<string> {
    const common = withoutLineEnds((await this.readPart(join(gitDir, 'commondir'))) ?? '');
    if (common === '') return gitDir;
    return this.inside(common.startsWith('/') ? common : `${gitDir}/${common}`, 'its common git directory (named by commondir)');
  }

  /** Symlinks among the parts git reads and writes (objects, packs, refs, reflogs, HEAD, config, index) must point inside the roots. */
  async checkSymlinks(gitDir: string, commonDir: string): Promise<void> {
    const folders = new Map<string, string>([...GIT_DIR_FOLDERS.map((f) => [join(gitDir, f), f] as const), ...COMMON_DIR_FOLDERS.map((f) => [join(commonDir, f), f] as const)]);
    // Listed synchronously: a few small folders, far cheaper than a thread-pool round trip each.
    const listings = [...folders].map(([folder, shown]) => ({ folder, shown, entries: listFolder(folder) }));
    const nameOf = (shown: string, entry: Dirent) => (shown === '' ? entry.name : `${shown}/${entry.name}`);
    // A named pipe or device where git expects a file (HEAD, config, commondir…) would hold git until its timeout.
    for (const { shown, entries } of listings) {
      const special = entries.find((entry) => entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice());
      if (special) {
        const kind = special.isFIFO() ? 'a named pipe' : special.isSocket() ? 'a socket' : 'a device';
        throw new ToolError(`${this.shownAs}: its git directory's ${nameOf(shown, special)} is ${kind}, not a regular file; the repository is refused`, 'not_a_repository');
      }
    }
    const links = listings.flatMap(({ folder, shown, entries }) =>
      entries
        .filter((entry) => entry.isSymbolicLink())
        .map((entry) => ({ path: join(folder, entry.name), shown: nameOf(shown, entry) }))
        .sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0)),
    );
    for (const link of links) await this.inside(link.path, `its git directory's ${link.shown} (a symlink)`);
  }

  /** Objects borrowed from elsewhere (objects/info/alternates) would be read from outside the roots. `objectsDir` is a real path. */
  async checkAlternates(objectsDir: string, depth: number): Promise<void> {
    if (depth > MAX_ALTERNATE_DEPTH) return;
    const file = join(objectsDir, 'info', 'alternates');
    const listed = await this.readPart(file);
    if (listed === undefined) return;
    for (const bytes of alternateEntries(listed)) {
      if (!isUtf8(bytes) || bytes.includes(0)) throw new ToolError(`${this.shownAs}: ${file} names an object store that is not UTF-8, so it cannot be checked; the repository is refused`, 'not_a_repository');
      // As git: a relative entry from the real object store, then `.` and `..` taken away as text.
      const target = resolve(objectsDir, bytes.toString('utf8'));
      if (!(await isFolder(target))) continue;
      await this.checkAlternates(await this.inside(target, 'an object store it borrows from (objects/info/alternates)'), depth + 1);
    }
  }
}

/**
 * Finds the repository that holds `start`: `.git` there or in a folder above it (never above its
 * root), or `start` itself when it is a bare repository. Every part git will read must resolve
 * inside the roots: a `.git` that is a symlink or a `gitdir:` pointer to elsewhere, a linked
 * worktree's common directory, symlinked objects, packs, refs or reflogs, and borrowed object
 * stores included. The files that name those parts are read as git reads them.
 */
export async function findRepository(roots: Roots, start: ConfinedPath, shownAs: string): Promise<RepositoryLayout> {
  const finder = new RepositoryFinder(roots, shownAs);
  if (!(await isFolder(start))) throw new ToolError(`${shownAs} is not a folder; give the repository's folder`, 'not_a_repository');
  const root = roots.rootOf(start)!;
  for (let folder: string = start; ; folder = dirname(folder)) {
    const gitDir = await finder.gitDirAt(folder);
    const found = gitDir ? { workTree: folder, gitDir } : (await finder.looksLikeGitDir(folder)) ? { workTree: undefined, gitDir: folder } : undefined;
    if (found) {
      const commonDir = await finder.commonDirOf(found.gitDir);
      await finder.checkSymlinks(found.gitDir, commonDir);
      const objects = await realpath(join(commonDir, 'objects')).catch(() => undefined);
      if (objects !== undefined) await finder.checkAlternates(objects, 0);
      return { ...found, commonDir };
    }
    if (folder === root || dirname(folder) === folder) break;
  }
  throw new ToolError(`${shownAs} is not in a git repository: there is no .git in it or in the folders above it up to the root ${root}`, 'not_a_repository');
}
