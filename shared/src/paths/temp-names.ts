import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { processAlive } from '../processes.js';

/** `name` cut to at most 200 bytes, so a hidden name made from it stays within the 255-byte limit. */
export function stemOf(name: string): string {
  let stem = '';
  for (const char of name) {
    if (Buffer.byteLength(stem) + Buffer.byteLength(char) > 200) break;
    stem += char;
  }
  return stem;
}

/**
 * A fresh hidden name beside `name`, for content that appears under the real name only when
 * whole. It carries the pid of the process that made it, so a leftover of a process killed
 * meanwhile can be told from a temp file a live writer is still filling.
 */
export function tempName(name: string): string {
  return `.${stemOf(name)}.bulkhead-${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
}

/** The pid a temp name made by tempName() carries, or undefined for any other name. */
export function tempNameOwner(name: string): number | undefined {
  const match = /\.bulkhead-(\d{1,10})-[0-9a-f]{12}\.tmp$/.exec(name);
  return match && name.startsWith('.') ? Number(match[1]) : undefined;
}

/** Whether `candidate` is a temp name tempName() made for `name`. */
export function isTempNameOf(candidate: string, name: string): boolean {
  return candidate.startsWith(`.${stemOf(name)}.bulkhead-`) && tempNameOwner(candidate) !== undefined;
}

/** The lock file beside `name` that writers hold while they check it and replace it. */
export function lockName(name: string): string {
  return `.${stemOf(name)}.bulkhead-lock`;
}

/** What one in-flight record says: who made which hidden file. */
interface InFlightRecord {
  readonly pid: number;
  readonly host: string;
  readonly path: string;
  /** For a move of a file by link() then unlink(): the new name; `path` is the old one. */
  readonly linkedTo?: string;
}

/** Releases an in-flight record once its hidden file is gone. */
export type InFlightRelease = () => Promise<void>;

const NO_RELEASE: InFlightRelease = async () => undefined;
/** An empty lock file this old is stale (the same age as REPLACE_LOCK_STALE_MS of the writers). */
const EMPTY_LOCK_STALE_MS = 2000;

/**
 * A journal of the hidden files writers create inside the roots (temp files, lock files): one
 * small record per file, in a folder tools cannot write (the control-plane folder), made before
 * the file and removed after it. A process killed with `kill -9` leaves its records behind, and
 * `sweep()` (run when a server starts) removes the files they name once their process is dead,
 * without walking the roots. Records are best effort: a journal that cannot be written never
 * stops a write.
 */
export class InFlight {
  private ready: Promise<boolean> | undefined;

  constructor(readonly folder: string) {}

  private ensure(): Promise<boolean> {
    this.ready ??= fsp.mkdir(this.folder, { recursive: true, mode: 0o700 }).then(
      () => true,
      () => ((this.ready = undefined), false),
    );
    return this.ready;
  }

  /**
   * Records that this process is about to create the hidden file at `path` (a real path), or,
   * with `linkedTo`, to give the file at `path` that second name and then drop `path`.
   */
  async track(path: string, linkedTo?: string): Promise<InFlightRelease> {
    if (!(await this.ensure())) return NO_RELEASE;
    const record = join(this.folder, `${process.pid}-${randomBytes(6).toString('hex')}.json`);
    const body: InFlightRecord = { pid: process.pid, host: hostname(), path, ...(linkedTo === undefined ? {} : { linkedTo }) };
    try {
      await fsp.writeFile(record, JSON.stringify(body), { flag: 'wx', mode: 0o600 });
    } catch {
      this.ready = undefined;
      return NO_RELEASE;
    }
    return () => fsp.rm(record, { force: true });
  }

  /**
   * Removes the hidden files of dead processes of this host and their records. A temp file goes
   * (whether or not its content was linked into place: the real name keeps it); a lock file goes
   * only if it still names the dead process. Returns the paths removed.
   */
  async sweep(): Promise<string[]> {
    let names: string[];
    try {
      names = await fsp.readdir(this.folder);
    } catch {
      return [];
    }
    const removed: string[] = [];
    const host = hostname();
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const record = join(this.folder, name);
      let parsed: InFlightRecord;
      try {
        parsed = JSON.parse(await fsp.readFile(record, 'utf8')) as InFlightRecord;
      } catch {
        // Killed between creating its record and writing it: the record names nothing yet (it is
        // made before the file it records), so it goes once the pid in its name is dead.
        const pid = Number(/^(\d+)-/.exec(name)?.[1]);
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid)) await fsp.rm(record, { force: true });
        continue;
      }
      if (typeof parsed.pid !== 'number' || typeof parsed.path !== 'string' || parsed.host !== host) continue;
      if (parsed.pid === process.pid || processAlive(parsed.pid)) continue;
      const file = basename(parsed.path);
      if (typeof parsed.linkedTo === 'string') {
        // A move killed between link() and unlink(): both names are the same file (and it has no
        // third name), so dropping the old one finishes the move.
        const [from, to] = await Promise.all([fsp.lstat(parsed.path).catch(() => undefined), fsp.lstat(parsed.linkedTo).catch(() => undefined)]);
        if (from?.isFile() && to && from.dev === to.dev && from.ino === to.ino && from.nlink === 2) await fsp.unlink(parsed.path).then(() => removed.push(parsed.path), () => undefined);
      } else if (tempNameOwner(file) === parsed.pid) {
        const stat = await fsp.lstat(parsed.path).catch(() => undefined);
        if (stat?.isFile()) await fsp.unlink(parsed.path).then(() => removed.push(parsed.path), () => undefined);
        else if (stat?.isDirectory()) await fsp.rm(parsed.path, { recursive: true, force: true }).then(() => removed.push(parsed.path), () => undefined);
      } else if (file.endsWith('.bulkhead-lock')) {
        const holder = await fsp.readFile(parsed.path, 'utf8').catch(() => undefined);
        // Empty: killed between creating the lock and writing its pid; writers take over such a lock
        // once it is 2 s old, so it is ours to remove from then on.
        const emptyAndStale = holder === '' && Date.now() - ((await fsp.lstat(parsed.path).catch(() => undefined))?.mtimeMs ?? Date.now()) > EMPTY_LOCK_STALE_MS;
        // Kept for a later sweep until then.
        if (holder === '' && !emptyAndStale) continue;
        if ((holder !== undefined && holder.trim() === String(parsed.pid)) || emptyAndStale) await fsp.unlink(parsed.path).then(() => removed.push(parsed.path), () => undefined);
      }
      await fsp.rm(record, { force: true });
    }
    return removed;
  }
}
