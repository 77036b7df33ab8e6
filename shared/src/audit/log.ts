import { createHash, type KeyObject } from 'node:crypto';
import { processAlive } from '../processes.js';
import { closeSync, constants, existsSync, fstatSync, ftruncateSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { canonicalJson, entryHash, GENESIS_HASH, sha256 } from './chain.js';
import type { AuditEntry, AuditRecord } from './entry.js';
import { encodeHeadInto, HEAD_RECORD_BYTES, headFileOf, readHeadRecord, signHead, type HeadRecord } from './head.js';

const TAIL_WINDOW = 256 * 1024;
const NEWLINE = 0x0a;

/** The last record of a chain as far as resuming it needs: where it stands and what it chains to. */
interface Tip {
  readonly seq: number;
  readonly hash: string;
  readonly prev: string;
}

const GENESIS_TIP: Tip = { seq: 0, hash: GENESIS_HASH, prev: GENESIS_HASH };

/** The end of a chain file: its last whole line, where that line ends, and any bytes after it. */
interface Tail {
  readonly lastLine: string | undefined;
  readonly wholeSize: number;
  readonly trailing: Buffer;
}

/** Reads the end of a file, looking back from 4 KiB up to 256 KiB; undefined when its last line is longer. */
function readTail(fd: number, size: number): Tail | undefined {
  if (size === 0) return { lastLine: undefined, wholeSize: 0, trailing: Buffer.alloc(0) };
  for (let window = 4096; ; window *= 4) {
    const length = Math.min(size, window);
    const buffer = Buffer.allocUnsafe(length);
    readSync(fd, buffer, 0, length, size - length);
    const wholeFile = length === size;
    const lastNewline = buffer.lastIndexOf(NEWLINE);
    if (lastNewline === -1) {
      if (wholeFile) return { lastLine: undefined, wholeSize: 0, trailing: buffer };
    } else {
      // The newline before the last line's; reading on from the file's start when there is none.
      const before = lastNewline > 0 ? buffer.lastIndexOf(NEWLINE, lastNewline - 1) : -1;
      if (before !== -1 || wholeFile) {
        return { lastLine: buffer.subarray(before + 1, lastNewline).toString('utf8'), wholeSize: size - length + lastNewline + 1, trailing: buffer.subarray(lastNewline + 1) };
      }
    }
    if (window >= TAIL_WINDOW) return undefined;
  }
}

function parseTip(line: string): Tip | undefined {
  try {
    const record = JSON.parse(line) as Partial<Tip>;
    if (typeof record.hash === 'string' && typeof record.seq === 'number' && typeof record.prev === 'string') return { seq: record.seq, hash: record.hash, prev: record.prev };
  } catch {
    // not JSON: not a record
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

function release(file: string): void {
  const owner = `${file}.owner`;
  if (!owned.delete(owner)) return;
  try {
    unlinkSync(owner);
  } catch {
    // already gone
  }
}

/** The pid in a chain's owner file, if it has one that names a pid. */
export function readHolder(owner: string): number | undefined {
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

/** `<namespace>.<digits>.jsonl`: the chains beside a namespace's main file (other processes', or fresh ones). */
export function isSiblingChain(mainFile: string, name: string): boolean {
  const namespace = basename(mainFile).replace(/\.jsonl$/, '');
  return name.startsWith(`${namespace}.`) && /^\.\d+\.jsonl$/.test(name.slice(namespace.length));
}

function siblingChains(mainFile: string): string[] {
  const dir = dirname(mainFile);
  return readdirSync(dir)
    .filter((name) => isSiblingChain(mainFile, name))
    .sort()
    .map((name) => join(dir, name));
}

/**
 * A sibling without an owner file named for a live process other than this one: a writer of a
 * version that made no owner files may still be appending to it.
 */
function heldByUnclaimedWriter(file: string): boolean {
  if (existsSync(`${file}.owner`)) return false;
  const pid = Number(/\.(\d+)\.jsonl$/.exec(file)?.[1]);
  return pid !== process.pid && pid < 2 ** 31 && processAlive(pid);
}

/**
 * An append-only, hash-chained JSON-lines file with one writer, anchored by a head record
 * (`<file>.head`: last seq, last hash, size) rewritten in place after every line, so a cut tail
 * is found. The first process to log for a namespace owns `<namespace>.jsonl`; another one that
 * runs at the same time adopts a `<namespace>.<n>.jsonl` whose owner died, or starts its own
 * `<namespace>.<pid>.jsonl`. So an append is two writes on descriptors kept open, with no lock,
 * no two writers ever interleave in one chain, and the files number at most the writers that
 * ever ran at once.
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
  private headFd: number | undefined;
  /** Size of the file after our last complete line: where a torn write is cut back to. */
  private size = 0;
  private head: Tip = GENESIS_TIP;
  private headWriteFailed = false;
  private readonly headRecord = Buffer.allocUnsafe(HEAD_RECORD_BYTES);
  /** The key head records are signed with (the receipt key, when receipts are on); asked for at each write. */
  private headKey: (() => KeyObject | undefined) | undefined;
  /** The file this process writes: the requested one, or one beside it. */
  file: string;

  constructor(readonly requestedFile: string) {
    this.file = requestedFile;
  }

  /**
   * Signs every head record from now on with the key `key` returns (undefined: unsigned), so
   * that a chain cut or rewritten by someone without the key no longer matches a signed head.
   */
  signHeadsWith(key: () => KeyObject | undefined): void {
    this.headKey = key;
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    // Made on the first append, not when a server starts: a server that answered no call leaves
    // no audit folder behind (`bulkhead tools` in an empty folder keeps it empty).
    mkdirSync(dirname(this.requestedFile), { recursive: true, mode: 0o700 });
    const siblings = siblingChains(this.requestedFile);
    for (const candidate of [this.requestedFile, ...siblings]) {
      if (candidate !== this.requestedFile && heldByUnclaimedWriter(candidate)) continue;
      if (!claim(candidate)) continue;
      if (this.resume(candidate, siblings)) return this.fd!;
      // Its end does not match its head (cut, edited, or an older version's log): it is left as
      // it is for the verifier to report, and calls go on being audited elsewhere.
      release(candidate);
    }
    // A name that neither a chain nor a head record left behind has: our pid, or else the time.
    const fresh = [process.pid, Date.now()]
      .map((n) => this.requestedFile.replace(/\.jsonl$/, `.${n}.jsonl`))
      .find((name) => !existsSync(name) && !existsSync(headFileOf(name)) && claim(name));
    if (fresh === undefined || !this.resume(fresh, siblings)) throw new Error(`cannot start a new audit chain beside ${this.requestedFile}`);
    return this.fd!;
  }

  /**
   * Opens `file` to go on with its chain, if its end agrees with its head record. A torn last
   * line (a writer that died mid-write) is closed with a `torn` record; a chain opened while
   * others exist records their heads in an `anchor` record. False when the file is not to be
   * written (nothing was changed then).
   */
  private resume(file: string, siblings: readonly string[]): boolean {
    // A deleted chain whose head record remains is evidence: it is not made again, empty.
    if (!existsSync(file) && anchorsEntries(readHeadRecord(file))) return false;
    const fd = openSync(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o600);
    const size = fstatSync(fd).size;
    const tail = readTail(fd, size);
    const lastWhole = tail?.lastLine === undefined ? (tail ? GENESIS_TIP : undefined) : parseTip(tail.lastLine);
    if (!tail || !lastWhole) {
      closeSync(fd);
      return false;
    }
    let tip = lastWhole;
    let repair: 'none' | 'newline' | 'torn' = 'none';
    if (tail.trailing.length > 0) {
      // A write cut just before its newline leaves a whole record; anything else is torn.
      const whole = parseTip(tail.trailing.toString('utf8'));
      if (whole && whole.seq === lastWhole.seq + 1 && whole.prev === lastWhole.hash) {
        tip = whole;
        repair = 'newline';
      } else repair = 'torn';
    }
    if (!agreesWithHead(readHeadRecord(file), size, tail.wholeSize, lastWhole, repair === 'none')) {
      closeSync(fd);
      return false;
    }
    this.file = file;
    this.fd = fd;
    this.headFd = openSync(headFileOf(file), constants.O_RDWR | constants.O_CREAT, 0o600);
    this.size = size;
    this.head = tip;
    if (repair === 'newline') this.writeRaw(fd, Buffer.from('\n'));
    if (repair === 'torn') {
      this.writeRaw(fd, Buffer.from('\n'));
      this.appendBody({ v: 1, seq: tip.seq + 1, time: new Date().toISOString(), kind: 'torn', torn_bytes: tail.trailing.length, torn_sha256: sha256Bytes(tail.trailing), prev: tip.hash });
    } else this.writeHead();
    const chains = anchorsOf(siblings.concat(this.requestedFile).filter((other) => other !== file));
    if (Object.keys(chains).length > 0) this.appendBody({ v: 1, seq: this.head.seq + 1, time: new Date().toISOString(), kind: 'anchor', chains, prev: this.head.hash });
    return true;
  }

  /**
   * Appends one entry, or throws with nothing appended: a failed or short write (a full disk) is
   * cut back and the file reopened on the next append, so the chain on disk stays whole.
   */
  append(record: AuditRecord, time: Date = new Date()): AuditEntry {
    this.open();
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
    this.writeLine(entry);
    return entry;
  }

  private appendBody(body: Record<string, unknown> & { seq: number; prev: string }): void {
    this.writeLine({ ...body, hash: entryHash(body.prev, body) });
  }

  private writeLine(record: { seq: number; hash: string; prev: string }): void {
    this.writeRaw(this.fd!, Buffer.from(`${JSON.stringify(record)}\n`));
    this.head = { seq: record.seq, hash: record.hash, prev: record.prev };
    this.writeHead();
  }

  private writeRaw(fd: number, bytes: Buffer): void {
    let written = 0;
    try {
      written = writeSync(fd, bytes);
    } catch (error) {
      this.abandonDescriptor(fd);
      throw new Error(`cannot append to the audit log ${this.file}: ${(error as Error).message}`);
    }
    if (written !== bytes.length) {
      this.abandonDescriptor(fd);
      throw new Error(`cannot append to the audit log ${this.file}: only ${written} of ${bytes.length} bytes were written (is the disk full?)`);
    }
    this.size += written;
  }

  /**
   * Rewrites the head record in place. The line is already written when this fails, so the call
   * is not failed for it: the next append writes the whole record again, and until one does the
   * verifier reports the head as behind.
   */
  private writeHead(): void {
    const head = { v: 1 as const, seq: this.head.seq, hash: this.head.hash, size: this.size };
    const key = this.headKey?.();
    const record = encodeHeadInto(this.headRecord, key ? { ...head, sig: signHead(key, basename(this.file), head) } : head);
    try {
      if (writeSync(this.headFd!, record, 0, HEAD_RECORD_BYTES, 0) === HEAD_RECORD_BYTES) {
        this.headWriteFailed = false;
        return;
      }
    } catch {
      // reported below, once
    }
    if (!this.headWriteFailed) process.stderr.write(`bulkhead: cannot update the audit head record ${headFileOf(this.file)}; it is rewritten with the next entry\n`);
    this.headWriteFailed = true;
  }

  private abandonDescriptor(fd: number): void {
    try {
      ftruncateSync(fd, this.size);
    } catch {
      // a torn line left behind is closed with a torn record on reopening
    }
    this.close();
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    if (this.headFd !== undefined) closeSync(this.headFd);
    this.fd = undefined;
    this.headFd = undefined;
  }
}

function sha256Bytes(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Whether a chain's end is where its head record says: at the last whole line, or (only when
 * nothing follows that line) one entry past the head, from a writer that died between its two
 * writes. A file with no head must be empty: anything else was cut, or an older version wrote it.
 */
function agreesWithHead(reading: ReturnType<typeof readHeadRecord>, size: number, wholeSize: number, lastWhole: Tip, endsClean: boolean): boolean {
  if (reading.state === 'missing') return size === 0;
  if (reading.state === 'invalid') return false;
  const head: HeadRecord = reading.head;
  if (head.seq === lastWhole.seq) return head.hash === lastWhole.hash && head.size === wholeSize;
  return endsClean && head.seq === lastWhole.seq - 1 && head.hash === lastWhole.prev;
}

/** Whether a head record says its chain held entries (or cannot be read, which says as much). */
export function anchorsEntries(reading: ReturnType<typeof readHeadRecord>): boolean {
  return reading.state === 'invalid' || (reading.state === 'found' && reading.head.seq > 0);
}

/** The heads of the other chains of a namespace, by file name. */
function anchorsOf(files: readonly string[]): Record<string, { seq: number; hash: string }> {
  const chains: Record<string, { seq: number; hash: string }> = {};
  for (const file of files) {
    const reading = readHeadRecord(file);
    if (reading.state === 'found' && reading.head.seq > 0) chains[basename(file)] = { seq: reading.head.seq, hash: reading.head.hash };
  }
  return chains;
}
