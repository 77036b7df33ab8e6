import { constants, fstatSync, promises as fsp, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from '../errors.js';
import { PathGlobSet } from './globs.js';
import { privateControlFolderGlobs, privateControlFolderPaths, privateFolderRefusal, type PrivateControlFolder } from './private-folders.js';
import { WRITE_PROTECTED_GLOBS } from './protected.js';

declare const confinedBrand: unique symbol;
/** An absolute real path proven to lie inside the roots; file helpers accept nothing else. */
export type ConfinedPath = string & { readonly [confinedBrand]: true };

export type PathPurpose = 'read' | 'write';

export const MAX_PATH_CHARS = 4096;
export const MAX_NAME_BYTES = 255;

export interface RootsOptions {
  /** The control-plane folder: writable by nobody through a tool. */
  readonly controlDir: string;
  /** Globs a read may never touch (secrets), relative to each root. */
  readonly denyRead: readonly string[];
  /** Name of the policy file that holds `denyRead`, for error messages. */
  readonly denyReadSource?: string;
  /** Globs added to the protected set for writes (they can add to it, never remove from it). */
  readonly protectWrite?: readonly string[];
  /** Name of the policy file that holds `protectWrite`, for error messages. */
  readonly protectWriteSource?: string;
}

export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The folders a server may touch. `confine` turns untrusted input into a ConfinedPath after
 * resolving every component with realpath, so `..`, symlinks, dangling links and prefix
 * look-alikes (`/root_evil` beside `/root`) cannot escape.
 */
export class Roots {
  readonly real: readonly string[];
  private readonly given: readonly string[];
  private readonly denyRead: PathGlobSet;
  private readonly writeProtected: PathGlobSet;
  private readonly extraProtected: ReadonlySet<string>;
  readonly controlDir: string;
  /** Every absolute form of the control plane's private folders (`keys/`, `approvals/`): no read reaches them, whatever `denyRead` says. */
  private readonly privateFolders: readonly { readonly folder: PrivateControlFolder; readonly path: string }[];

  constructor(
    roots: readonly string[],
    private readonly options: RootsOptions,
  ) {
    if (roots.length === 0) throw new Error('at least one root is required');
    this.given = roots.map((root) => resolve(root));
    this.real = roots.map((root) => {
      const absolute = resolve(root);
      let real: string;
      try {
        real = realpathSync(absolute);
      } catch {
        throw new ToolError(`root ${absolute} does not exist`);
      }
      if (!statSync(real).isDirectory()) throw new ToolError(`root ${absolute} is not a folder`);
      return real;
    });
    this.privateFolders = privateControlFolderPaths(options.controlDir);
    this.denyRead = new PathGlobSet([...options.denyRead, ...privateControlFolderGlobs([...this.real, ...this.given], options.controlDir)]);
    const extra = (options.protectWrite ?? []).filter((glob) => !WRITE_PROTECTED_GLOBS.includes(glob));
    this.writeProtected = new PathGlobSet([...WRITE_PROTECTED_GLOBS, ...extra], { ignoreCase: true });
    this.extraProtected = new Set(extra);
    this.controlDir = resolveControlDir(options.controlDir);
  }

  get primary(): string {
    return this.real[0]!;
  }

  rootOf(real: string): string | undefined {
    return this.real.find((root) => isInside(root, real));
  }

  /** How a confined path is shown to the model: relative to its root when it has one. */
  display(real: string): string {
    const root = this.rootOf(real);
    if (root === undefined) return real;
    const rel = relative(root, real);
    if (root === this.primary) return rel === '' ? '.' : rel;
    return real;
  }

  /** The root-relative form used for glob checks. */
  relativeToRoot(real: string): string {
    const root = this.rootOf(real);
    return root === undefined ? real : relative(root, real);
  }

  private describeRoots(): string {
    return this.real.join(', ');
  }

  private checkShape(input: string): void {
    if (typeof input !== 'string' || input.length === 0) throw new ToolError('path is empty: give a path relative to the root, or "." for the root itself');
    if (input.includes('\0')) throw new ToolError('path contains a NUL byte; remove it');
    if (input.length > MAX_PATH_CHARS) {
      throw new ToolError(`path is ${input.length} characters long; the limit is ${MAX_PATH_CHARS}`);
    }
    for (const part of input.split(/[\\/]/)) {
      if (Buffer.byteLength(part) > MAX_NAME_BYTES) {
        throw new ToolError(`a path component is ${Buffer.byteLength(part)} bytes long; the limit is ${MAX_NAME_BYTES}`);
      }
    }
    if (input === '~' || input.startsWith('~/') || input.startsWith('~\\') || /^~[^/\\]*([/\\]|$)/.test(input)) {
      throw new ToolError(`"~" is not expanded: give a path relative to the root (${this.primary}) or an absolute path inside it`);
    }
  }

  /** `input` made absolute (relative to the first root), refused unless it lies in a root as written. */
  private absoluteInside(input: string): string {
    const absolute = isAbsolute(input) ? resolve(input) : resolve(this.primary, input);
    if (![...this.real, ...this.given].some((root) => isInside(root, absolute))) {
      throw new ToolError(`${input} is outside the allowed roots (${this.describeRoots()}); give a path inside them`, 'outside_roots');
    }
    return absolute;
  }

  /** Resolves `input` (relative to the first root, or absolute) and proves it stays inside. */
  async confine(input: string, purpose: PathPurpose): Promise<ConfinedPath> {
    this.checkShape(input);
    const absolute = this.absoluteInside(input);
    // Before anything is looked up: whether a file in a private folder exists is itself kept from the model.
    if (purpose === 'read') this.checkPrivate(input, absolute);
    const real = await resolveReal(absolute, purpose, (missing) => {
      if (purpose === 'read') this.checkPrivate(input, missing);
    });
    if (!this.rootOf(real)) {
      throw new ToolError(`${input} resolves through a symlink to ${real}, which is outside the allowed roots (${this.describeRoots()})`, 'outside_roots');
    }
    this.checkProtected(input, real, purpose);
    if (purpose === 'write') this.checkWrittenForm(input, absolute);
    return real as ConfinedPath;
  }

  /**
   * A filter for paths found under `folder` by a search that already applied the deny_read globs
   * relative to `folder`. Globs that name a path (`config/prod.yaml`) match differently there than
   * from the root, so those alone are checked again, by the root-relative path.
   */
  searchResultFilter(folder: string): (relativeToFolder: string) => boolean {
    const root = this.rootOf(folder);
    const anchored = this.denyRead.sources.filter((glob) => glob.replace(/\/$/, '').includes('/'));
    if (root === undefined || root === folder || anchored.length === 0) return () => true;
    const prefix = relative(root, folder);
    const check = new PathGlobSet(anchored);
    return (relativeToFolder) => check.match(`${prefix}/${relativeToFolder}`) === undefined;
  }

  /** The private folder of the control plane (`keys`, `approvals`) that holds an absolute path, if any. */
  privateFolderOf(absolute: string): PrivateControlFolder | undefined {
    return this.privateFolders.find((form) => isInside(form.path, absolute))?.folder;
  }

  /**
   * The private folders as deny_read globs anchored at `folder` (a search's own folder, where the
   * root-anchored globs would not match), for search engines: they never open a file there.
   */
  privateGlobsFrom(folder: string): string[] {
    return privateControlFolderGlobs([folder], this.options.controlDir);
  }

  private checkPrivate(input: string, absolute: string): void {
    const folder = this.privateFolderOf(absolute);
    if (folder !== undefined) throw new ToolError(privateFolderRefusal(input, folder), 'protected');
  }

  /** The deny_read glob that keeps a real path from being read, if any. */
  readDenial(real: string): string | undefined {
    return this.denyRead.match(this.relativeToRoot(real));
  }

  /** Refuses secrets for reads, and the whole protected set for writes. */
  checkProtected(input: string, real: string, purpose: PathPurpose): void {
    const rel = this.relativeToRoot(real);
    if (purpose === 'read') {
      this.checkPrivate(input, real);
      const glob = this.readDenial(real);
      if (glob) {
        throw new ToolError(`${input} is a protected secret (matches \`${glob}\` in deny_read${this.options.denyReadSource ? ` of ${this.options.denyReadSource}` : ''}); it cannot be read`, 'protected');
      }
      return;
    }
    // Compared without case as well: on a case-insensitive filesystem `.BULKHEAD/` is the control plane.
    if (isInside(this.controlDir, real) || isInside(this.controlDir.toLowerCase(), real.toLowerCase())) {
      throw new ToolError(`${input} is inside the control-plane folder ${this.controlDir}; tools never write there`, 'protected');
    }
    this.checkWriteGlobs(input, rel);
  }

  private checkWriteGlobs(input: string, relativeToRoot: string): void {
    const glob = this.writeProtected.match(relativeToRoot);
    if (glob) {
      const source = this.extraProtected.has(glob) ? `\`${glob}\` in protect${this.options.protectWriteSource ? ` of ${this.options.protectWriteSource}` : ''}` : `\`${glob}\``;
      throw new ToolError(`${input} is in the protected set (${source}); tools never write there`, 'protected');
    }
  }

  /**
   * The protected set holds for the path as written as well as for the real one: a symlink named
   * `.vscode` or `.git` that points at an ordinary folder is still agent config or git internals
   * to whatever follows it.
   */
  private checkWrittenForm(input: string, absolute: string): void {
    const root = [...this.real, ...this.given].find((candidate) => isInside(candidate, absolute));
    if (root !== undefined) this.checkWriteGlobs(input, relative(root, absolute));
  }

  /**
   * Like `confine` for writing, but the last component is the directory entry itself and is never
   * followed: a symlink there is the thing moved, deleted or refused, never its target. Every
   * folder above it is resolved with realpath and must stay inside the roots.
   */
  async confineEntry(input: string): Promise<ConfinedPath> {
    this.checkShape(input);
    const absolute = this.absoluteInside(input);
    if (this.real.includes(absolute) || this.given.includes(absolute)) {
      throw new ToolError(`${input} is a root folder itself; give a path inside it`, 'outside_roots');
    }
    const entry = join(await resolveReal(dirname(absolute), 'write'), basename(absolute));
    if (!this.rootOf(entry)) {
      throw new ToolError(`${input} resolves through a symlink to ${entry}, which is outside the allowed roots (${this.describeRoots()})`, 'outside_roots');
    }
    this.checkProtected(input, entry, 'write');
    this.checkWrittenForm(input, absolute);
    return entry as ConfinedPath;
  }

  /**
   * Checks an already-opened file descriptor by what the kernel says it points at, so a symlink
   * swapped between `confine` and `open` is caught. Where /proc is missing, the descriptor must be
   * the same file (device and inode) that a fresh realpath of `path` names.
   */
  async verifyOpened(fd: number, path: string, input: string, purpose: PathPurpose): Promise<string> {
    let actual: string;
    try {
      // A readlink of /proc never waits on a disk, so it is done inline rather than on the thread pool.
      actual = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      actual = await fsp.realpath(path);
      const [opened, named] = [fstatSync(fd), await fsp.stat(actual)];
      if (opened.dev !== named.dev || opened.ino !== named.ino) {
        throw new ToolError(`${input} changed while it was being opened; nothing was read`, 'outside_roots');
      }
    }
    if (!this.rootOf(actual)) {
      throw new ToolError(`${input} changed while it was being opened and now points outside the allowed roots; nothing was read`, 'outside_roots');
    }
    this.checkProtected(input, actual, purpose);
    return actual;
  }
}

function resolveControlDir(dir: string): string {
  const absolute = resolve(dir);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return join(realpathSync(dirname(absolute)), absolute.slice(dirname(absolute).length + 1));
    } catch {
      return absolute;
    }
  }
}

/**
 * realpath of the longest existing prefix, with the rest appended. A dangling symlink on the way
 * is refused: following it later could create or read something outside the roots.
 */
async function resolveReal(absolute: string, purpose: PathPurpose, beforeNotFound: (real: string) => void = () => undefined): Promise<string> {
  try {
    return await fsp.realpath(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ToolError(`${absolute} goes through a loop of symlinks (or too many of them); it is refused`, 'symlink_loop');
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new ToolError(`${absolute}: ${(error as Error).message}`);
  }
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const stat = await fsp.lstat(current);
      const base = await fsp.realpath(current).catch(async (error: NodeJS.ErrnoException) => {
        if (!stat.isSymbolicLink()) throw error;
        const target = await fsp.readlink(current).catch(() => {
          throw new ToolError(`${current} changed while the path was being checked (a symlink swapped?); try again`, 'conflict');
        });
        throw new ToolError(`${current} is a dangling symlink (-> ${target}); it is refused rather than followed`, 'dangling_symlink');
      });
      const real = join(base, ...missing.reverse());
      beforeNotFound(real);
      if (purpose === 'read') throw new ToolError(`${absolute} does not exist`, 'not_found');
      return real;
    } catch (error) {
      if (error instanceof ToolError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new ToolError(`${current}: ${(error as Error).message}`);
    }
    const parent = dirname(current);
    if (parent === current) throw new ToolError(`${absolute} does not exist`, 'not_found');
    missing.push(current.slice(parent.length).replace(/^[\\/]/, ''));
    current = parent;
  }
}

export const OPEN_READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
