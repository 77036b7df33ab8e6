import { randomBytes } from 'node:crypto';
import { constants, promises as fsp, type Stats } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ToolError } from '../errors.js';
import { formatBytes } from '../limits/truncate.js';
import { makeFoldersSafely } from '../paths/files.js';
import { moveEntry } from '../paths/move.js';
import type { ConfinedPath, Roots } from '../paths/roots.js';
import { InFlight } from '../paths/temp-names.js';
import { processAlive } from '../processes.js';
import { entriesInside, lstatIfExists, measureEntry, type EntrySummary } from '../paths/tree.js';
import { TRASH_ID, trashManifestSchema, type TrashManifest } from './manifest.js';
import type { TrashPolicy } from './policy.js';

const MANIFEST = 'manifest.json';
const ENTRY = 'entry';
const MAX_MANIFEST_BYTES = 64 * 1024;
/** Removed folders are renamed to this prefix first, so a concurrent restore never sees half of one. */
const PURGING = '.purge-';
/** A slot is filled under this prefix (with the pid of its maker) and renamed to its id with its manifest in it. */
const STAGING = '.new-';
/** The journal of hidden files writers create in the roots (see InFlight). */
const IN_FLIGHT = '.in-flight';
/** A trash folder without its entry is left alone this long: another process may be filling it. */
const INCOMPLETE_GRACE_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** After a kept version, a full purge runs at most this often unless the trash may have grown past max_bytes. */
const KEPT_PURGE_INTERVAL_MS = 30_000;
const READ_BATCH = 64;

export interface TrashOptions {
  /** The policy file that sets `trash:`, named in messages. */
  readonly policySource?: string;
  /** The clock; tests move it. */
  readonly now?: () => Date;
}

export interface TrashListing {
  /** Restorable entries, newest first. */
  readonly entries: readonly TrashManifest[];
  /** Bytes of all restorable entries. */
  readonly bytes: number;
  /** Folders of the trash that cannot be restored, each said in one line. */
  readonly problems: readonly string[];
}

export interface PurgeResult {
  /** Entries removed, oldest first. */
  readonly removed: readonly TrashManifest[];
  readonly freedBytes: number;
  /** What the trash holds afterwards. */
  readonly kept: number;
  readonly keptBytes: number;
}

export interface RestoreResult {
  readonly manifest: TrashManifest;
  readonly path: ConfinedPath;
  /** The path as the roots show it. */
  readonly shownAs: string;
}

/** One folder of the trash as found on disk. */
type Slot =
  | { readonly state: 'complete' | 'incomplete'; readonly id: string; readonly manifest: TrashManifest; readonly entry?: Stats }
  | { readonly state: 'unreadable'; readonly id: string; readonly problem: string; readonly hasEntry: boolean; readonly mtimeMs: number };

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** Whether the process that wrote this manifest is gone (a manifest of an older version, without a pid, never is). */
function ownerDead(manifest: TrashManifest): boolean {
  return manifest.pid !== undefined && manifest.host === hostname() && manifest.pid !== process.pid && !processAlive(manifest.pid);
}

function newId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

/**
 * Deleted entries, kept recoverable: each is moved (never copied and left, never removed) into
 * `<controlDir>/trash/<id>/entry` beside a manifest saying where it came from. Tools cannot
 * write into the control-plane folder, so nothing in the trash can be changed through them.
 */
export class Trash {
  readonly folder: string;
  /** The journal of hidden files (temp and lock files) that writes create in the roots; purge() sweeps it. */
  readonly inFlight: InFlight;
  private readonly now: () => Date;
  /** When this object last purged and what the trash held then, plus what it has kept since: see purgeIfDue(). */
  private lastPurge: { readonly at: number; readonly keptBytes: number } | undefined;
  private keptSince = 0;

  constructor(
    controlDir: string,
    private readonly policy: TrashPolicy,
    private readonly options: TrashOptions = {},
  ) {
    this.folder = join(controlDir, 'trash');
    this.inFlight = new InFlight(join(this.folder, IN_FLIGHT));
    this.now = options.now ?? (() => new Date());
  }

  private setting(key: keyof TrashPolicy): string {
    return `trash.${key}${this.options.policySource ? ` in ${this.options.policySource}` : ''}`;
  }

  /** Creates the trash when needed; returns its real path, which moves in and out use (they pin folders by it). */
  private async ensureFolder(): Promise<string> {
    await fsp.mkdir(this.folder, { recursive: true, mode: 0o700 });
    const stat = await fsp.lstat(this.folder);
    if (!stat.isDirectory()) throw new ToolError(`the trash ${this.folder} is not a folder; nothing was deleted`);
    return fsp.realpath(this.folder);
  }

  /**
   * Moves the entry at `path` (measured as `summary`) into the trash. An entry larger than the
   * trash may hold is refused, since keeping it would mean purging it at once.
   */
  async put(path: ConfinedPath, shownAs: string, summary: EntrySummary): Promise<TrashManifest> {
    if (summary.bytes > this.policy.max_bytes) {
      throw new ToolError(
        `${shownAs} holds ${formatBytes(summary.bytes)}, more than the trash may keep (${this.setting('max_bytes')}: ${formatBytes(this.policy.max_bytes)}), so it could not be restored; it was left in place`,
        'too_large',
      );
    }
    const { manifest, slot } = await this.createSlot(path, shownAs, { kind: summary.kind, bytes: summary.bytes, entries: entriesInside(summary) }, 'deleted');
    try {
      // The manifest comes first: a crash after it leaves a slot without an entry, which purge
      // clears, and the entry still where it was. The other order could leave an entry nobody can place.
      await moveEntry(path, join(slot, ENTRY), summary.kind, { from: shownAs, to: `the trash entry ${manifest.id}` });
    } catch (error) {
      await fsp.rm(slot, { recursive: true, force: true });
      if (error instanceof ToolError) throw error;
      throw new ToolError(`${shownAs} could not be moved to the trash: ${(error as Error).message}; it was left in place`);
    }
    return manifest;
  }

  /**
   * Makes a slot holding only its manifest: filled under a staging name that carries this pid,
   * then renamed to its id, so a crash leaves either nothing under an id or a complete manifest
   * (and a staging folder of a dead process, which purge clears).
   */
  private async createSlot(
    path: string,
    shownAs: string,
    what: Pick<TrashManifest, 'kind' | 'bytes' | 'entries'>,
    reason: 'deleted' | 'replaced',
  ): Promise<{ manifest: TrashManifest; slot: string }> {
    const folder = await this.ensureFolder();
    const deletedAt = this.now();
    const staging = join(folder, `${STAGING}${process.pid}-${randomBytes(4).toString('hex')}`);
    await fsp.mkdir(staging, { mode: 0o700 });
    try {
      for (let attempt = 0; ; attempt++) {
        const id = newId(deletedAt);
        const manifest: TrashManifest = { id, original: path, shown_as: shownAs, ...what, deleted_at: deletedAt.toISOString(), reason, pid: process.pid, host: hostname() };
        await fsp.writeFile(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
        try {
          await fsp.rename(staging, join(folder, id));
          return { manifest, slot: join(folder, id) };
        } catch (error) {
          if (!['EEXIST', 'ENOTEMPTY'].includes(code(error) ?? '') || attempt >= 4) throw error;
        }
      }
    } catch (error) {
      await fsp.rm(staging, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Keeps `bytes`, the content of the file at `path` (as `stat` described it) that a write is
   * about to replace, as a file entry of its own: written and synced inside the slot, its mode
   * and times those of the file. Called before the new content is put in place, so the old one is
   * in the trash first; a write that then fails takes it out again with discard(). (A link of the
   * file itself would be cheaper, but gives it a second link for the whole write, and every other
   * writer refuses a file with two links.)
   */
  async keep(path: ConfinedPath, shownAs: string, bytes: Uint8Array, stat: Stats): Promise<TrashManifest> {
    if (bytes.length > this.policy.max_bytes) {
      throw new ToolError(
        `the current content of ${shownAs} (${formatBytes(bytes.length)}) is more than the trash may keep (${this.setting('max_bytes')}: ${formatBytes(this.policy.max_bytes)}), so replacing it could not be undone; nothing was written. Raise ${this.setting('max_bytes')} to allow it.`,
        'too_large',
      );
    }
    let made: { manifest: TrashManifest; slot: string };
    try {
      made = await this.createSlot(path, shownAs, { kind: 'file', bytes: bytes.length, entries: 0 }, 'replaced');
    } catch (error) {
      throw new ToolError(`the current content of ${shownAs} could not be kept in the trash (${(error as Error).message}); nothing was written`, 'write_failed');
    }
    const partial = join(made.slot, `${ENTRY}.partial`);
    try {
      const handle = await fsp.open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        await handle.writeFile(bytes);
        await handle.chmod(stat.mode & 0o7777);
        await handle.utimes(stat.atime, stat.mtime);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fsp.rename(partial, join(made.slot, ENTRY));
    } catch (error) {
      await fsp.rm(made.slot, { recursive: true, force: true });
      throw new ToolError(`the current content of ${shownAs} could not be kept in the trash (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); nothing was written`, 'write_failed');
    }
    return made.manifest;
  }

  /** Takes a kept version out again, when the write it was kept for did not happen. */
  async discard(id: string): Promise<void> {
    if (TRASH_ID.test(id)) await this.remove(id);
  }

  private async readSlot(id: string): Promise<Slot | undefined> {
    const slot = join(this.folder, id);
    const entry = await lstatIfExists(join(slot, ENTRY));
    const hasEntry = entry !== undefined;
    const unreadable = async (problem: string): Promise<Slot> => ({ state: 'unreadable', id, problem, hasEntry, mtimeMs: (await fsp.lstat(slot)).mtimeMs });
    try {
      const stat = await lstatIfExists(join(slot, MANIFEST));
      if (!stat) return await unreadable('no manifest.json');
      if (!stat.isFile() || stat.size > MAX_MANIFEST_BYTES) return await unreadable('manifest.json is not a small file');
      const parsed = trashManifestSchema.safeParse(JSON.parse(await fsp.readFile(join(slot, MANIFEST), 'utf8')));
      if (!parsed.success || parsed.data.id !== id) return await unreadable('manifest.json does not describe this entry');
      return { state: hasEntry ? 'complete' : 'incomplete', id, manifest: parsed.data, ...(entry ? { entry } : {}) };
    } catch (error) {
      if (code(error) === 'ENOENT') return undefined;
      return unreadable(`manifest.json cannot be read (${(error as Error).message})`);
    }
  }

  private async scan(): Promise<{ slots: Slot[]; leftovers: string[] }> {
    let names: string[];
    try {
      names = await fsp.readdir(this.folder);
    } catch (error) {
      if (code(error) === 'ENOENT') return { slots: [], leftovers: [] };
      throw error;
    }
    const slots: Slot[] = [];
    const ids = names.filter((name) => TRASH_ID.test(name));
    for (let start = 0; start < ids.length; start += READ_BATCH) {
      const read = await Promise.all(ids.slice(start, start + READ_BATCH).map((id) => this.readSlot(id)));
      for (const slot of read) if (slot) slots.push(slot);
    }
    const deadStaging = (name: string) => {
      if (!name.startsWith(STAGING)) return false;
      const pid = Number(/^\.new-(\d+)-/.exec(name)?.[1]);
      return Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid);
    };
    return { slots, leftovers: names.filter((name) => name.startsWith(PURGING) || deadStaging(name)) };
  }

  /** What the trash holds, newest first, and the folders in it that cannot be restored. */
  async list(): Promise<TrashListing> {
    const { slots } = await this.scan();
    const entries = slots.flatMap((slot) => (slot.state === 'complete' ? [slot.manifest] : [])).sort(newestFirst);
    const problems = slots.flatMap((slot) => {
      if (slot.state === 'unreadable') return [`${slot.id}: ${slot.problem}${slot.hasEntry ? `; its entry is kept in ${join(this.folder, slot.id)}` : ''}`];
      if (slot.state === 'incomplete') return [`${slot.id}: ${slot.manifest.shown_as} was never moved in (an interrupted delete); purge clears it`];
      return [];
    });
    return { entries, bytes: sumBytes(entries), problems };
  }

  /** Removes a folder of the trash: renamed aside first, so it vanishes at once for everyone else. */
  private async remove(name: string): Promise<boolean> {
    const aside = join(this.folder, `${PURGING}${name}-${randomBytes(4).toString('hex')}`);
    try {
      await fsp.rename(join(this.folder, name), aside);
    } catch (error) {
      if (code(error) === 'ENOENT') return false;
      throw error;
    }
    await fsp.rm(aside, { recursive: true, force: true });
    return true;
  }

  /**
   * Applies the retention policy: entries older than `retention_days` go, then the oldest until
   * the trash is within `max_bytes`. `keep` (the entry just deleted) is never purged. Folders of
   * interrupted deletes go once they are an hour old; an unreadable manifest beside an entry is
   * left for a human.
   */
  async purge(options: { readonly keep?: string } = {}): Promise<PurgeResult> {
    const started = this.now().getTime();
    const result = await this.purgeNow(options);
    this.lastPurge = { at: started, keptBytes: result.keptBytes };
    this.keptSince = 0;
    return result;
  }

  /**
   * The purge after a kept version (`manifest`, just kept): a full purge reads every manifest, and
   * a file edited hundreds of times would pay for all of them on every edit. So it runs when the
   * trash, as the last purge left it plus what was kept since, may be over max_bytes, when
   * retention_days is 0, or when the last purge is KEPT_PURGE_INTERVAL_MS old; otherwise nothing
   * is due and it returns undefined.
   */
  async purgeIfDue(manifest: TrashManifest): Promise<PurgeResult | undefined> {
    this.keptSince += manifest.bytes;
    const last = this.lastPurge;
    const due = !last || this.policy.retention_days === 0 || last.keptBytes + this.keptSince > this.policy.max_bytes || this.now().getTime() - last.at > KEPT_PURGE_INTERVAL_MS;
    return due ? this.purge({ keep: manifest.id }) : undefined;
  }

  private async purgeNow(options: { readonly keep?: string }): Promise<PurgeResult> {
    await this.inFlight.sweep();
    const { slots, leftovers } = await this.scan();
    const now = this.now().getTime();
    for (const name of leftovers) await fsp.rm(join(this.folder, name), { recursive: true, force: true });
    const gone = new Set<string>();
    for (const slot of slots) {
      const stale =
        (slot.state === 'incomplete' && (ownerDead(slot.manifest) || now - Date.parse(slot.manifest.deleted_at) > INCOMPLETE_GRACE_MS)) ||
        (slot.state === 'unreadable' && !slot.hasEntry && now - slot.mtimeMs > INCOMPLETE_GRACE_MS) ||
        (slot.state === 'complete' && (await this.interruptedDelete(slot.manifest, slot.entry)));
      if (stale && (await this.remove(slot.id))) gone.add(slot.id);
    }
    const oldestFirst = slots.flatMap((slot) => (slot.state === 'complete' && !gone.has(slot.id) ? [slot.manifest] : [])).sort(newestFirst).reverse();
    const cutoff = now - this.policy.retention_days * DAY_MS;
    const removed: TrashManifest[] = [];
    let total = sumBytes(oldestFirst);
    for (const manifest of oldestFirst) {
      if (manifest.id === options.keep) continue;
      const expired = Date.parse(manifest.deleted_at) < cutoff;
      if (!expired && total <= this.policy.max_bytes) continue;
      if (await this.remove(manifest.id)) removed.push(manifest);
      total -= manifest.bytes;
    }
    return { removed, freedBytes: sumBytes(removed), kept: oldestFirst.length - removed.length, keptBytes: total };
  }

  /**
   * A delete killed between the link() of a file into the trash and the unlink() of its old name
   * left the same file in both places (two links, so every edit of it is refused): the delete
   * did not happen, and the trash's name is the one to drop. (A kept version is a copy with one
   * link, so it never matches.)
   */
  private async interruptedDelete(manifest: TrashManifest, entry: Stats | undefined): Promise<boolean> {
    if (manifest.kind !== 'file' || !entry || entry.nlink < 2 || !ownerDead(manifest)) return false;
    const original = await lstatIfExists(manifest.original).catch(() => undefined);
    return original !== undefined && original.dev === entry.dev && original.ino === entry.ino;
  }

  /**
   * Puts entry `id` back at its original path, or at `to`. Nothing is ever overwritten: a path
   * that exists now is refused, naming it. The place must be inside `roots` and outside their
   * protected set, like any write; missing parent folders are created.
   */
  async restore(id: string, roots: Roots, options: { readonly to?: string } = {}): Promise<RestoreResult> {
    if (!TRASH_ID.test(id)) throw new ToolError(`${id} is not a trash id (they look like 20260512-143012-3fa9c1d2; bulkhead trash list shows them)`, 'not_found');
    const slot = await this.readSlot(id);
    if (!slot) throw new ToolError(`there is no ${id} in the trash ${this.folder} (bulkhead trash list shows what there is)`, 'not_found');
    if (slot.state === 'unreadable') throw new ToolError(`${id} in the trash cannot be restored: ${slot.problem}`);
    if (slot.state === 'incomplete') throw new ToolError(`${id} in the trash holds nothing: the delete of ${slot.manifest.shown_as} was interrupted, so it is still where it was`);
    const { manifest } = slot;
    const input = options.to ?? manifest.original;
    const path = await roots.confineEntry(input);
    const shownAs = roots.display(path);
    const existing = await lstatIfExists(path);
    if (existing) {
      throw new ToolError(`cannot restore ${id}: ${shownAs} exists now (${existing.isDirectory() ? 'a folder' : existing.isSymbolicLink() ? 'a symlink' : 'a file'}); nothing was restored. Move it away first, or restore to another path.`, 'exists');
    }
    const stored = join(await fsp.realpath(this.folder), id, ENTRY);
    await measureEntry(stored, `${id} in the trash`, {
      visit: (inside) => {
        const there = join(path, relative(stored, inside));
        roots.checkProtected(roots.display(there), there, 'write');
      },
    }).catch((error: unknown) => {
      if (error instanceof ToolError && error.code === 'protected') throw new ToolError(`cannot restore ${id} to ${shownAs}: inside it, ${error.message}; nothing was restored`, 'protected');
      throw error;
    });
    await makeFoldersSafely(roots, dirname(path) as ConfinedPath, shownAs);
    if ((await roots.confineEntry(input)) !== path) throw new ToolError(`${shownAs} changed while its folders were being created; nothing was restored`, 'conflict');
    await moveEntry(stored, path, manifest.kind, { from: `${id} in the trash`, to: shownAs }, { inFlight: this.inFlight });
    await fsp.rm(join(this.folder, id), { recursive: true, force: true });
    return { manifest, path, shownAs };
  }
}

function newestFirst(a: TrashManifest, b: TrashManifest): number {
  return a.deleted_at === b.deleted_at ? (a.id < b.id ? 1 : -1) : a.deleted_at < b.deleted_at ? 1 : -1;
}

function sumBytes(entries: readonly TrashManifest[]): number {
  return entries.reduce((sum, entry) => sum + entry.bytes, 0);
}
