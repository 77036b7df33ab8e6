import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SANDBOX_HELD_ENTRIES } from '@bulkhead/core';
import type { SandboxSpec } from './types.js';

/**
 * Paths inside the writable roots that the sandbox holds read-only: files and folders that become code or
 * configuration run outside the sandbox later. `existing` are bound read-only over themselves; `placeholders`
 * did not exist: an empty read-only folder is bound there, so nothing can be made at that name (a file cannot
 * be created where a folder is mounted, nor the mount point removed or renamed).
 */
export interface HeldPaths {
  readonly existing: readonly string[];
  readonly placeholders: readonly Placeholder[];
}

/** A missing held path and what to hold its place: an empty file where a file would go (npm, git and yarn read an empty one as nothing), else an empty folder. */
export interface Placeholder {
  readonly path: string;
  readonly kind: 'file' | 'folder';
}

export const NOTHING_HELD: HeldPaths = { existing: [], placeholders: [] };

/** What git runs or obeys from a repository's folder (hooks, configuration, attributes) and where it finds another one. */
const GIT_HELD = ['config', 'config.worktree', 'hooks', 'info', 'commondir', 'gitdir'];
/**
 * Held even when missing, as git sees a repository without them: no hooks, no info, an empty worktree
 * configuration (read once extensions.worktreeConfig is set, as `git sparse-checkout` does).
 */
const GIT_PLACEHOLDERS = new Map<string, Placeholder['kind']>([['hooks', 'folder'], ['info', 'folder'], ['config.worktree', 'file']]);
/** Repositories below a root are looked for this deep (the root itself is depth 0) and in at most this many folders. */
const NESTED_DEPTH = 3;
const NESTED_FOLDERS = 2000;
const NOT_SEARCHED = new Set(['node_modules', '.git']);
/** Top folders a build makes in a project (Gradle's cache): not held while missing, or the build could not run. */
const MADE_BY_BUILDS = new Set(['.gradle']);
/** Submodules inside submodules, this deep. */
const MODULE_DEPTH = 3;

/** Every path to hold for spec's writable roots (none without bubblewrap). Reads the file system; creates nothing. */
export function heldPaths(spec: SandboxSpec, ours: ReadonlySet<string> = made): { existing: string[]; missing: Placeholder[] } {
  const held = new Collector(spec.writable, ours);
  if (spec.kind !== 'bubblewrap') return { existing: [], missing: [] };
  for (const root of spec.writable) {
    // A home folder's entries are made there only if missing; elsewhere an entry is held if it exists. Missing ones
    // are held by an empty folder, which git, npm and yarn pass over as no file (in a home folder git would warn
    // about a folder named .gitconfig: there a file stands in for a file).
    const homes = homeFolders().filter((home) => isInside(home, root));
    for (const entry of SANDBOX_HELD_ENTRIES) {
      const parts = entry.path.split('/');
      held.add(join(root, ...parts), entry.read === 'anywhere' ? 'folder' : null);
      for (const home of homes) held.add(join(home, ...parts), entry.kind);
    }
    // No repository here: no .git folder or pointer file may be made (a later `git` in the root would obey it).
    // An empty folder, which git passes over as no repository (an empty file would be a broken pointer).
    if (lstatSync(join(root, '.git'), { throwIfNoEntry: false }) === undefined) held.add(join(root, '.git'), 'folder');
    for (const repository of repositoriesIn(root)) if (!ours.has(join(repository, '.git'))) held.repository(repository);
  }
  return held.result();
}

class Collector {
  private readonly existing = new Set<string>();
  private readonly missing = new Map<string, Placeholder['kind']>();

  /** `ours`: placeholders of this process, held as a whole (nothing is looked for inside them). */
  constructor(
    private readonly roots: readonly string[],
    private readonly ours: ReadonlySet<string>,
  ) {}

  /**
   * Holds path: itself when it exists (its target when it is a symlink), else its first missing component when
   * `placeholder` (a placeholder for .config/git/config is .config when there is no .config).
   */
  add(path: string, placeholder: Placeholder['kind'] | null, links = 0): void {
    const root = this.roots.find((candidate) => isInside(path, candidate));
    if (root === undefined) return;
    const parts = relative(root, path).split(sep);
    let real = root;
    for (let index = 0; index < parts.length; index += 1) {
      const next = join(real, parts[index]!);
      const stat = lstatSync(next, { throwIfNoEntry: false });
      if (stat === undefined) {
        // Below a symlink the real place may lie outside the roots (read-only already, or in a throwaway tmpfs).
        const last = index === parts.length - 1;
        if (placeholder !== null && this.insideRoots(next) && !(real === root && MADE_BY_BUILDS.has(parts[index]!) && !last)) {
          // A file stands in for a file where anything asks for one (a home folder's .gitconfig); else a folder.
          if (this.missing.get(next) !== 'file') this.missing.set(next, last ? placeholder : 'folder');
        }
        return;
      }
      if (stat.isSymbolicLink()) {
        const target = realOrNull(next);
        if (target === null) {
          // A dangling link: what it points to is held in its place (made there, it would be read through the link).
          const pointed = resolve(dirname(next), readLinkOrEmpty(next), ...parts.slice(index + 1));
          if (links < 8) this.add(pointed, placeholder, links + 1);
          return;
        }
        real = target;
      } else {
        real = next;
      }
      if (this.ours.has(real)) break;
    }
    if (this.insideRoots(real)) this.existing.add(real);
  }

  /** A repository's own parts: a `.git` folder's, or a pointer file's and the folder it points to. */
  repository(worktree: string): void {
    const dotGit = join(worktree, '.git');
    let stat = lstatSync(dotGit, { throwIfNoEntry: false });
    if (stat === undefined) return;
    // A .git that is a symlink: the folder or pointer file it names is the repository's.
    if (stat.isSymbolicLink()) stat = statSync(dotGit, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isFile()) {
      this.add(dotGit, null);
      const gitdir = pointerTarget(dotGit);
      if (gitdir !== null) this.gitFolder(gitdir, 0);
    } else if (stat.isDirectory()) {
      this.gitFolder(dotGit, 0);
    }
  }

  private gitFolder(folder: string, depth: number): void {
    const real = realOrNull(folder);
    if (real === null || !lstatSync(real).isDirectory()) return;
    for (const part of GIT_HELD) this.add(join(real, part), GIT_PLACEHOLDERS.get(part) ?? null);
    // A worktree's folder names the repository whose config and hooks it shares.
    const common = readFirstLine(join(real, 'commondir'));
    if (common !== null && depth === 0) this.gitFolder(resolve(real, common), depth + 1);
    for (const worktree of subfolders(join(real, 'worktrees'))) {
      for (const part of ['config', 'commondir', 'gitdir']) this.add(join(worktree, part), null);
      this.add(join(worktree, 'config.worktree'), 'file');
    }
    if (depth < MODULE_DEPTH) for (const module of gitFoldersUnder(join(real, 'modules'))) this.gitFolder(module, depth + 1);
  }

  private insideRoots(path: string): boolean {
    return this.roots.some((root) => isInside(path, root) && path !== root);
  }

  result(): { existing: string[]; missing: Placeholder[] } {
    return { existing: [...this.existing], missing: [...this.missing].filter(([path]) => !this.existing.has(path)).map(([path, kind]) => ({ path, kind })) };
  }
}

let listedHomes: string[] | undefined;

/** The home folders of this machine's users (from /etc/passwd, read once) and the server user's ($HOME), real paths. */
export function homeFolders(): string[] {
  if (listedHomes === undefined) {
    let passwd = '';
    try {
      passwd = readFileSync('/etc/passwd', 'utf8');
    } catch {
      // None listed.
    }
    listedHomes = realFolders(passwd.split('\n').map((line) => line.split(':')[5] ?? ''));
  }
  return [...new Set([...realFolders([homedir()]), ...listedHomes])];
}

function realFolders(paths: readonly string[]): string[] {
  const real = paths.filter((path) => path.startsWith('/') && path !== '/').map(realOrNull);
  return real.filter((path): path is string => path !== null && path !== '/' && lstatSync(path).isDirectory());
}

/** The root and the folders below it (bounded) that have a `.git` entry. */
function repositoriesIn(root: string): string[] {
  const found: string[] = [];
  let level = [root];
  let budget = NESTED_FOLDERS;
  for (let depth = 0; depth <= NESTED_DEPTH && level.length > 0; depth += 1) {
    const next: string[] = [];
    for (const folder of level) {
      if (budget-- <= 0) return found;
      let entries;
      try {
        entries = readdirSync(folder, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (entry.name === '.git') found.push(folder);
        else if (entry.isDirectory() && !NOT_SEARCHED.has(entry.name)) next.push(join(folder, entry.name));
      }
    }
    level = next;
  }
  return found;
}

/** `.git/modules/<name>` folders, however deep the submodule's name goes (`a/b` is modules/a/b). */
function gitFoldersUnder(folder: string): string[] {
  const found: string[] = [];
  const walk = (current: string, depth: number): void => {
    for (const sub of subfolders(current)) {
      if (lstatSync(join(sub, 'HEAD'), { throwIfNoEntry: false }) !== undefined) found.push(sub);
      else if (depth < 4) walk(sub, depth + 1);
    }
  };
  walk(folder, 0);
  return found;
}

function subfolders(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(folder, entry.name));
  } catch {
    return [];
  }
}

function pointerTarget(file: string): string | null {
  const line = readFirstLine(file);
  const match = line === null ? null : /^gitdir:\s*(.+?)\s*$/.exec(line);
  if (!match) return null;
  return isAbsolute(match[1]!) ? match[1]! : resolve(dirname(file), match[1]!);
}

function readFirstLine(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').split('\n')[0]!.trim();
  } catch {
    return null;
  }
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function readLinkOrEmpty(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}

// ---------------------------------------------------------------------------------------------------------
// Placeholders: empty files and folders made on the host as mount points, removed once no sandbox holds them.

/**
 * Each server with a sandbox running (or one that ended less than SWEEP_AFTER_MS ago) keeps a lease file here,
 * named by its pid, and lists the placeholders it made in `<pid>.made`. Removing a mount point on the host would
 * detach it in a sandbox still running, so placeholders are removed only while no other live server has a lease;
 * a killed server's are removed by the next one to sweep. BULKHEAD_HELD_DIR moves the folder (tests).
 */
let leasesFolder: string | undefined;

/**
 * The lease folder, shared by this user's servers: made 0700, and used only if it is a folder of ours that no one
 * else can write (another user could have made it first in a shared /tmp); otherwise a private one of this process.
 */
function leases(): string {
  if (leasesFolder === undefined) {
    const shared = process.env['BULKHEAD_HELD_DIR'] ?? join(tmpdir(), `bulkhead-held-${process.getuid?.() ?? 'user'}`);
    mkdirSync(shared, { recursive: true, mode: 0o700 });
    const stat = lstatSync(shared);
    const ours = stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o077) === 0;
    leasesFolder = ours ? shared : mkdtempSync(join(tmpdir(), 'bulkhead-held-'));
  }
  return leasesFolder;
}

const leaseFile = (): string => join(leases(), String(process.pid));
const madeFile = (): string => join(leases(), `${process.pid}.made`);
let leased = false;
/** Sandboxes of this process holding each placeholder. */
const holders = new Map<string, number>();
/** Placeholders this process made (or took over) and has not removed. */
const made = new Set<string>();
let empty: string | undefined;

/** An empty file or folder no command can change (the source of every placeholder's bind; kept for the servers to come). */
export function emptySource(kind: Placeholder['kind']): string {
  const folder = join(leases(), 'empty');
  if (empty !== folder || lstatSync(join(folder, kind), { throwIfNoEntry: false }) === undefined) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    if (lstatSync(join(folder, 'folder'), { throwIfNoEntry: false }) === undefined) mkdirSync(join(folder, 'folder'), { mode: 0o555 });
    if (lstatSync(join(folder, 'file'), { throwIfNoEntry: false }) === undefined) writeFileSync(join(folder, 'file'), '', { mode: 0o444 });
    empty = folder;
  }
  return join(folder, kind);
}

/** Resolves spec's held paths and makes the missing ones' placeholders; `release` once the sandbox has ended. */
export function holdPaths(spec: SandboxSpec): { held: HeldPaths; release: () => void } {
  // The lease first: a server sweeping from now on leaves alone what this sandbox is about to bind.
  if (spec.kind === 'bubblewrap' && !leased) {
    writeFileSync(leaseFile(), '');
    leased = true;
  }
  const { existing, missing } = heldPaths(spec);
  // A placeholder this process made is held as one again (bound as missing), however it shows on disk.
  const ours = existing.filter((path) => made.has(path) && isUntouched(path));
  const placeholders = [...missing, ...ours.map((path): Placeholder => ({ path, kind: lstatSync(path).isDirectory() ? 'folder' : 'file' }))];
  if (placeholders.length === 0) return { held: { existing, placeholders: [] }, release: () => {} };
  let added = false;
  for (const { path, kind } of placeholders) {
    holders.set(path, (holders.get(path) ?? 0) + 1);
    try {
      if (kind === 'folder') mkdirSync(path);
      else writeFileSync(path, '', { flag: 'wx' });
      made.add(path);
      added = true;
    } catch {
      // Made meanwhile (by another server's sandbox, or as something real): bound all the same, never removed by us.
    }
  }
  if (added) writeFileSync(madeFile(), [...made].join('\n'));
  clearTimeout(sweepTimer);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    letGo(placeholders.map((placeholder) => placeholder.path));
  };
  return { held: { existing: existing.filter((path) => !ours.includes(path)), placeholders }, release };
}

/** Placeholders stay this long after the last sandbox ends, so commands back to back make none. */
const SWEEP_AFTER_MS = 5000;
let sweepTimer: NodeJS.Timeout | undefined;

function letGo(paths: readonly string[]): void {
  for (const path of paths) {
    const count = (holders.get(path) ?? 1) - 1;
    if (count > 0) holders.set(path, count);
    else holders.delete(path);
  }
  if (holders.size > 0) return;
  clearTimeout(sweepTimer);
  sweepTimer = setTimeout(sweepPlaceholders, SWEEP_AFTER_MS).unref();
}

// Those a sandbox still holds stay, listed in the lease, for the next server to remove.
process.once('exit', () => sweepPlaceholders());

/**
 * Removes the placeholders this process made (and those of servers that died) when no sandbox of this process
 * holds any and no other live server has a lease; runs SWEEP_AFTER_MS after the last sandbox ends.
 */
export function sweepPlaceholders(): void {
  clearTimeout(sweepTimer);
  if (holders.size > 0) return;
  if (leased) {
    rmSync(leaseFile(), { force: true });
    leased = false;
  }
  const folder = leases();
  const names = readdirSync(folder);
  const others = names.filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  const dead = (name: string) => !isAlive(Number(name.split('.')[0]));
  const leftoverLists = names.filter((name) => /^\d+\.made$/.test(name) && name !== `${process.pid}.made` && dead(name));
  if (made.size === 0 && leftoverLists.length === 0) return;
  // Another live server may be binding them: try again later (its lease goes SWEEP_AFTER_MS after its last sandbox).
  if (others.some((name) => !dead(name))) {
    sweepTimer = setTimeout(sweepPlaceholders, SWEEP_AFTER_MS).unref();
    return;
  }
  const leftovers = leftoverLists.flatMap((name) => readLines(join(folder, name)));
  // The latest first: a placeholder made inside an earlier one (by a server that did not know it) goes before it.
  for (const path of [...made, ...leftovers].reverse()) removeIfUntouched(path);
  made.clear();
  for (const name of [...leftoverLists, ...others]) rmSync(join(folder, name), { force: true });
  rmSync(madeFile(), { force: true });
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => line.startsWith('/'));
  } catch {
    return [];
  }
}

/** Only a placeholder as it was made goes: an empty folder or an empty file with one name. */
function removeIfUntouched(path: string): void {
  try {
    if (!isUntouched(path)) return;
    if (lstatSync(path).isDirectory()) rmdirSync(path);
    else rmSync(path);
  } catch {
    // Filled meanwhile, or gone already.
  }
}

function isUntouched(path: string): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) return readdirSync(path).length === 0;
  return stat?.isFile() === true && stat.size === 0 && stat.nlink === 1;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
