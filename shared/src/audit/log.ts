import { processAlive } from '../processes.js';
import { closeSync, constants, fstatSync, ftruncateSync, linkSync, mkdirSync, openSync, readFileSync, readSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson, entryHash, GENESIS_HASH, sha256 } from './chain.js';
import type { AuditEntry, AuditRecord } from './entry.js';

const TAIL_WINDOW = 256 * 1024;

/** Reads the last complete line of a file, looking back from 4 KiB up to 256 KiB. */
function lastLine(fd: number, size: number): string | undefined {
  for (let window = 4096; ; window *= 4) {
    const length = Math.min(size, window);
    const buffer = Buffer.allocUnsafe(length);
    readSync(fd, buffer, 0, length, size - length);
    const text = buffer.toString('utf8').replace(/\n+$/, '');
    const start = text.lastIndexOf('\n');
    if (start !== -1 || length === size || window >= TAIL_WINDOW) return text.slice(start + 1) || undefined;
  }
}

/** The chain's head from the file's last line; genesis for an empty file, undefined for a corrupt one. */
function readHead(fd: number): { hash: string; seq: number } | undefined {
  const tail = lastLine(fd, fstatSync(fd).size);
  if (!tail) return { hash: GENESIS_HASH, seq: 0 };
  try {
    const last = JSON.parse(tail) as Partial<AuditEntry>;
    if (typeof last.hash === 'string' && typeof last.seq === 'number') return { hash: last.hash, seq: last.seq };
  } catch {
    // not JSON: treated as corrupt below
  }
  return undefined;
}

const owned = new Set<string>();
let releaseHookInstalled = false;

/**
 * Claims `file` for this process with an owner file holding its pid, taking over from a dead
 * owner. Returns false when a live process owns it.
 */
function claim(file: string): boolean {
  const owner = `${file}.owner`;
  const mine = `${owner}.${process.pid}.tmp`;
  for (let attempt = 0; attempt < 3; attempt++) {
    // The pid is written first and the owner file appears with it in one link: nobody reads it half-written.
    writeFileSync(mine, String(process.pid), { mode: 0o600 });
    try {
      linkSync(mine, owner);
      owned.add(owner);
      installReleaseHook();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(mine);
    }
    const holder = readHolder(owner);
    if (holder === process.pid) return true;
    if (holder === undefined || processAlive(holder)) return false;
    // Take over from a dead owner only if the file still names it.
    if (readHolder(owner) === holder) {
      try {
        unlinkSync(owner);
      } catch {
        // another process took it over first
      }
    }
  }
  return false;
}

function readHolder(owner: string): number | undefined {
  try {
    const pid = Number(readFileSync(owner, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function installReleaseHook(): void {
  if (releaseHookInstalled) return;
  releaseHookInstalled = true;
  process.on('exit', () => {
    for (const path of owned) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
  });
}

/**
 * An append-only, hash-chained JSON-lines file with one writer. The first process to log for a
 * namespace owns `<namespace>.jsonl`; another process that runs at the same time writes its own
 * chain to `<namespace>.<pid>.jsonl` beside it. So an append is one `write` on a descriptor kept
 * open, with no lock, and no two writers ever interleave in one chain.
 */
export class AuditLog {
  private static readonly shared = new Map<string, AuditLog>();

  /** The one log of this process for `file`: two writers in one process would fork the chain. */
  static at(file: string): AuditLog {
    let log = AuditLog.shared.get(file);
    if (!log) {
      log = new AuditLog(file);
      AuditLog.shared.set(file, log);
    }
    return log;
  }

  private fd: number | undefined;
  /** Size of the file after our last complete line: where a torn write is cut back to. */
  private size = 0;
  private head: { hash: string; seq: number } = { hash: GENESIS_HASH, seq: 0 };
  /** The file this process writes: the requested one, or its own beside it. */
  file: string;

  constructor(readonly requestedFile: string) {
    this.file = requestedFile;
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    // Made on the first append, not when a server starts: a server that answered no call leaves
    // no audit folder behind (`bulkhead tools` in an empty folder keeps it empty).
    mkdirSync(dirname(this.requestedFile), { recursive: true, mode: 0o700 });
    if (!claim(this.requestedFile)) this.file = this.requestedFile.replace(/\.jsonl$/, `.${process.pid}.jsonl`);
    let fd = openSync(this.file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o600);
    const head = readHead(fd);
    if (head) this.head = head;
    else {
      // The last line is not an entry (a torn write, or tampering): the verifier will report that
      // file, and calls go on being audited in a fresh chain beside it.
      closeSync(fd);
      this.file = this.requestedFile.replace(/\.jsonl$/, `.${Date.now()}.jsonl`);
      fd = openSync(this.file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, 0o600);
    }
    this.fd = fd;
    this.size = fstatSync(fd).size;
    return fd;
  }

  /**
   * Appends one entry, or throws with nothing appended: a failed or short write (a full disk) is
   * cut back and the file reopened on the next append, so the chain on disk stays whole.
   */
  append(record: AuditRecord, time: Date = new Date()): AuditEntry {
    const fd = this.open();
    const prev = this.head.hash;
    const seq = this.head.seq + 1;
    const canonicalArgs = canonicalJson(record.args);
    const body = {
      v: 1 as const,
      seq,
      time: time.toISOString(),
      ...record,
      args_sha256: sha256(canonicalArgs),
      prev,
    };
    const entry: AuditEntry = { ...body, hash: entryHash(prev, body, canonicalArgs) };
    const line = Buffer.from(`${JSON.stringify(entry)}\n`);
    let written = 0;
    try {
      written = writeSync(fd, line);
    } catch (error) {
      this.abandonDescriptor(fd);
      throw new Error(`cannot append to the audit log ${this.file}: ${(error as Error).message}`);
    }
    if (written !== line.length) {
      this.abandonDescriptor(fd);
      throw new Error(`cannot append to the audit log ${this.file}: only ${written} of ${line.length} bytes were written (is the disk full?)`);
    }
    this.size += written;
    this.head = { hash: entry.hash, seq };
    return entry;
  }

  private abandonDescriptor(fd: number): void {
    try {
      ftruncateSync(fd, this.size);
    } catch {
      // a torn line left behind starts a fresh chain on reopening
    }
    closeSync(fd);
    this.fd = undefined;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
