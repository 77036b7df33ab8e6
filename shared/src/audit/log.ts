import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson, entryHash, GENESIS_HASH, sha256 } from './chain.js';
import type { AuditEntry, AuditRecord } from './entry.js';

const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 5_000;
const TAIL_WINDOW = 256 * 1024;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

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

/**
 * An append-only, hash-chained JSON-lines file. Each append takes a lock file so that several
 * processes sharing one control-plane folder keep a single unbroken chain, and writes its line
 * with one `write` on an O_APPEND descriptor.
 */
export class AuditLog {
  /** The chain's head as this process last wrote it; valid while the file still has that size. */
  private head: { size: number; hash: string; seq: number } | undefined;

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  }

  private readHead(fd: number, size: number): { hash: string; seq: number } {
    if (this.head?.size === size) return this.head;
    const tail = lastLine(fd, size);
    if (!tail) return { hash: GENESIS_HASH, seq: 0 };
    const last = JSON.parse(tail) as Partial<AuditEntry>;
    return { hash: typeof last.hash === 'string' ? last.hash : GENESIS_HASH, seq: typeof last.seq === 'number' ? last.seq : 0 };
  }

  append(record: AuditRecord): AuditEntry {
    return this.withLock(() => {
      const fd = openSync(this.file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o600);
      try {
        const size = fstatSync(fd).size;
        const head = this.readHead(fd, size);
        const prev = head.hash;
        const seq = head.seq + 1;
        const body = {
          v: 1 as const,
          seq,
          time: new Date().toISOString(),
          ...record,
          args_sha256: sha256(canonicalJson(record.args)),
          prev,
        };
        const entry: AuditEntry = { ...body, hash: entryHash(prev, body) };
        const line = `${JSON.stringify(entry)}\n`;
        writeSync(fd, line);
        this.head = { size: size + Buffer.byteLength(line), hash: entry.hash, seq };
        return entry;
      } finally {
        closeSync(fd);
      }
    });
  }

  private withLock<T>(work: () => T): T {
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        try {
          if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock);
        } catch {
          // the holder released it between our two calls
        }
        if (Date.now() > deadline) throw new Error(`audit log ${this.file} stayed locked for ${LOCK_WAIT_MS} ms (${lock})`);
        sleepSync(2);
      }
    }
    try {
      return work();
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // already removed as stale by another process; nothing to undo
      }
    }
  }
}
