import { open, lstat, realpath, stat } from 'node:fs/promises';
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
/** git follows alternates this deep (object-file.c); deeper ones are not read by git either. */
const MAX_ALTERNATE_DEPTH = 5;

/** The start of a small file the repository controls; never blocks on a FIFO, never reads a huge file whole. */
async function readSmallFile(path: string): Promise<string | undefined> {
  let handle;
  try {
    const info = await lstat(path);
    if (!info.isFile()) return undefined;
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(SMALL_FILE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** A folder laid out like a git directory (what git's is_git_directory checks). */
async function looksLikeGitDir(path: string): Promise<boolean> {
  const head = await lstat(join(path, 'HEAD')).catch(() => undefined);
  if (!head || !(head.isFile() || head.isSymbolicLink())) return false;
  const common = (await readSmallFile(join(path, 'commondir')))?.trim();
  const base = common ? resolve(path, common) : path;
  return (await isFolder(join(base, 'objects'))) && (await isFolder(join(base, 'refs')));
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

  /** The git directory that `<folder>/.git` names, when there is one. */
  async gitDirAt(folder: string): Promise<string | undefined> {
    const dotGit = join(folder, '.git');
    const info = await lstat(dotGit).catch(() => undefined);
    if (!info) return undefined;
    if (info.isFile()) {
      const pointer = /^gitdir: *(.+?)\s*$/m.exec((await readSmallFile(dotGit)) ?? '')?.[1];
      if (!pointer) throw new ToolError(`${this.shownAs}: ${dotGit} is a file but not a "gitdir: …" pointer; the repository is broken`, 'not_a_repository');
      return this.inside(resolve(folder, pointer), 'its git directory (named by .git)');
    }
    return this.inside(dotGit, 'its git directory (.git)');
  }

  async commonDirOf(gitDir: string): Promise<string> {
    const common = (await readSmallFile(join(gitDir, 'commondir')))?.trim();
    return common ? this.inside(resolve(gitDir, common), 'its common git directory (named by commondir)') : gitDir;
  }

  /** Objects borrowed from elsewhere (objects/info/alternates) would be read from outside the roots. */
  async checkAlternates(objectsDir: string, depth: number): Promise<void> {
    if (depth > MAX_ALTERNATE_DEPTH) return;
    const listed = await readSmallFile(join(objectsDir, 'info', 'alternates'));
    if (listed === undefined) return;
    for (const line of listed.split('\n')) {
      const entry = line.trim();
      if (entry === '' || entry.startsWith('#')) continue;
      const target = resolve(objectsDir, entry.replace(/^"(.*)"$/, '$1'));
      if (!(await isFolder(target))) continue;
      await this.checkAlternates(await this.inside(target, 'an object store it borrows from (objects/info/alternates)'), depth + 1);
    }
  }
}

/**
 * Finds the repository that holds `start`: `.git` there or in a folder above it (never above its
 * root), or `start` itself when it is a bare repository. Every part git will read must resolve
 * inside the roots: a `.git` that is a symlink or a `gitdir:` pointer to elsewhere, a linked
 * worktree's common directory and borrowed object stores included.
 */
export async function findRepository(roots: Roots, start: ConfinedPath, shownAs: string): Promise<RepositoryLayout> {
  const finder = new RepositoryFinder(roots, shownAs);
  if (!(await isFolder(start))) throw new ToolError(`${shownAs} is not a folder; give the repository's folder`, 'not_a_repository');
  const root = roots.rootOf(start)!;
  for (let folder: string = start; ; folder = dirname(folder)) {
    const gitDir = await finder.gitDirAt(folder);
    const found = gitDir ? { workTree: folder, gitDir } : (await looksLikeGitDir(folder)) ? { workTree: undefined, gitDir: folder } : undefined;
    if (found) {
      const commonDir = await finder.commonDirOf(found.gitDir);
      await finder.checkAlternates(join(commonDir, 'objects'), 1);
      return { ...found, commonDir };
    }
    if (folder === root || dirname(folder) === folder) break;
  }
  throw new ToolError(`${shownAs} is not in a git repository: there is no .git in it or in the folders above it up to the root ${root}`, 'not_a_repository');
}
