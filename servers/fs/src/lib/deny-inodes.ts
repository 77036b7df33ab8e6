import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import fg from 'fast-glob';
import { PathGlobSet } from '@bulkhead/core/globs';

export interface InodeStat {
  readonly dev: number;
  readonly ino: number;
  readonly nlink: number;
}

export interface DenyInodeOptions {
  /** How long one index of the roots is trusted. */
  readonly ttlMs?: number;
  /** Most entries walked per root; past it every file with several links is refused. */
  readonly maxEntries?: number;
  /** The globs of `denyRead` that are the control plane's private folders: a link to a file there is refused without naming it. */
  readonly privateRead?: readonly string[];
}

interface Index {
  readonly at: number;
  readonly byInode: ReadonlyMap<string, string>;
  readonly complete: boolean;
}

/**
 * The inodes of the deny_read files in the roots, so that a hard link to `.env` under another
 * name is refused like `.env` itself. Only files with more than one link can be such a second
 * name, so the roots are indexed only when one of those is read, and the index is kept for a few
 * seconds (a deny_read file created within that time is caught by the next index). The index is bounded: in a root with more entries than it holds, every file with
 * several links is refused (the answer says so).
 */
export class DenyInodes {
  private index: Index | undefined;
  private building: Promise<Index> | undefined;
  private readonly deny: PathGlobSet;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly privateRead: PathGlobSet;

  constructor(
    private readonly roots: readonly string[],
    denyRead: readonly string[],
    options: DenyInodeOptions = {},
  ) {
    this.deny = new PathGlobSet(denyRead);
    this.ttlMs = options.ttlMs ?? 5000;
    this.maxEntries = options.maxEntries ?? 500_000;
    this.privateRead = new PathGlobSet(options.privateRead ?? []);
  }

  /**
   * Why a file may not be read because it is also a deny_read file, or undefined. Files with a
   * single link are never looked up.
   */
  async denial(stat: InodeStat): Promise<string | undefined> {
    if (stat.nlink <= 1 || this.deny.sources.length === 0) return undefined;
    const index = await this.current();
    const name = index.byInode.get(`${stat.dev}:${stat.ino}`);
    if (name !== undefined && this.privateRead.match(name) !== undefined) return "it is a hard link to a file in the control-plane folder's keys/ or approvals/";
    if (name !== undefined) return `it is a hard link to ${name}, which deny_read protects`;
    if (!index.complete) return `it has ${stat.nlink} hard links and the roots are too large (over ${this.maxEntries} entries) to prove none of them is a deny_read file`;
    return undefined;
  }

  private async current(): Promise<Index> {
    if (this.index && Date.now() - this.index.at < this.ttlMs) return this.index;
    this.building ??= this.build().finally(() => {
      this.building = undefined;
    });
    this.index = await this.building;
    return this.index;
  }

  private async build(): Promise<Index> {
    const at = Date.now();
    const byInode = new Map<string, string>();
    let complete = true;
    for (const root of this.roots) {
      let seen = 0;
      const denied: string[] = [];
      const stream = fg.stream('**', { cwd: root, dot: true, onlyFiles: true, followSymbolicLinks: false, suppressErrors: true });
      for await (const entry of stream) {
        if (++seen > this.maxEntries) {
          complete = false;
          (stream as unknown as { destroy(): void }).destroy();
          break;
        }
        const relative = String(entry);
        if (this.deny.match(relative) !== undefined) denied.push(relative);
      }
      for (const relative of denied) {
        const stat = await lstat(join(root, relative)).catch(() => undefined);
        // Every deny_read file, also one with a single link now: a link made after the index is
        // built must still be caught while the index is trusted.
        if (stat?.isFile()) byInode.set(`${stat.dev}:${stat.ino}`, relative);
      }
    }
    return { at, byInode, complete };
  }
}
