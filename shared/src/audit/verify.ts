import { createHash, type KeyObject } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { processAlive } from '../processes.js';
import { entryHash, GENESIS_HASH } from './chain.js';
import { anchorRecordSchema, auditEntrySchema, tornRecordSchema } from './entry.js';
import { headFileOf, headSignatureValid, readHeadRecord, type HeadReading } from './head.js';
import { anchorsEntries, readHolder } from './log.js';

export interface VerifyResult {
  readonly ok: boolean;
  readonly entries: number;
  /** 1-based line of the first problem. */
  readonly line?: number;
  readonly problem?: string;
  /** What was found and accepted (a torn write closed by its record, say); only when there is some. */
  readonly notes?: readonly string[];
}

/** An `anchor` record's view of another chain: it stood at `seq` with `hash` when the record was written. */
interface Anchor {
  readonly line: number;
  readonly chain: string;
  readonly seq: number;
  readonly hash: string;
}

/** What walking a chain found: its verdict, and what the head and anchor checks need. */
interface Walk {
  readonly result: VerifyResult;
  /** The hash of each record, by seq - 1. */
  readonly hashes: readonly string[];
  /** The file's size after each record's line, by seq - 1. */
  readonly ends: readonly number[];
  readonly anchors: readonly Anchor[];
  /** An unterminated last line that is not a record: a writer that died mid-write, if the head agrees. */
  readonly unclosedTorn?: { readonly line: number; readonly bytes: number };
}

const NEWLINE = 0x0a;

function splitLines(bytes: Buffer): { text: Buffer; end: number; terminated: boolean }[] {
  const lines: { text: Buffer; end: number; terminated: boolean }[] = [];
  let start = 0;
  while (start < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline + 1;
    lines.push({ text: bytes.subarray(start, newline === -1 ? bytes.length : newline), end, terminated: newline !== -1 });
    start = end;
  }
  return lines;
}

type Parsed = { record: Record<string, unknown> & { seq: number; prev: string; hash: string }; kind: 'entry' | 'torn' | 'anchor' } | { problem: string };

function parseRecord(text: Buffer): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text.toString('utf8'));
  } catch {
    return { problem: 'not valid JSON' };
  }
  const kind = (raw as { kind?: unknown } | null)?.kind;
  const schema = kind === 'torn' ? tornRecordSchema : kind === 'anchor' ? anchorRecordSchema : auditEntrySchema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { problem: `not an audit entry (${parsed.error.issues[0]?.message})` };
  return { record: parsed.data, kind: kind === 'torn' ? 'torn' : kind === 'anchor' ? 'anchor' : 'entry' };
}

const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Walks the chain and stops at the first line that was edited, removed, inserted or reordered.
 * The one line that may be no record is a torn write: either closed by the `torn` record right
 * after it (whose length and hash are those bytes'), or the unterminated last line.
 */
function walkChain(bytes: Buffer): Walk {
  const lines = splitLines(bytes);
  const hashes: string[] = [];
  const ends: number[] = [];
  const anchors: Anchor[] = [];
  const notes: string[] = [];
  let prev = GENESIS_HASH;
  const fail = (line: number, problem: string): Walk => ({ result: { ok: false, entries: hashes.length, line, problem }, hashes, ends, anchors });
  for (let index = 0; index < lines.length; index++) {
    const lineNo = index + 1;
    const { text, terminated } = lines[index]!;
    let parsed = parseRecord(text);
    if ('problem' in parsed) {
      const next = lines[index + 1];
      const closing = next ? parseRecord(next.text) : undefined;
      if (closing && 'record' in closing && closing.kind === 'torn' && closing.record['torn_bytes'] === text.length && closing.record['torn_sha256'] === sha256Hex(text)) {
        notes.push(`line ${lineNo} is a torn write of ${text.length} bytes, closed by the torn record on line ${lineNo + 1}`);
        index++;
        parsed = closing;
      } else if (!terminated && index === lines.length - 1) {
        return { result: { ok: true, entries: hashes.length, ...(notes.length ? { notes } : {}) }, hashes, ends, anchors, unclosedTorn: { line: lineNo, bytes: text.length } };
      } else return fail(lineNo, parsed.problem);
    }
    const at = index + 1;
    const { hash, ...body } = parsed.record;
    const expectedSeq = hashes.length + 1;
    if (body.seq !== expectedSeq) return fail(at, `sequence ${body.seq} where ${expectedSeq} was expected (a line was removed, inserted or reordered)`);
    if (body.prev !== prev) return fail(at, 'does not chain to the line before it');
    if (entryHash(prev, body) !== hash) return fail(at, 'content does not match its hash (the line was edited)');
    if (parsed.kind === 'anchor') {
      for (const [chain, head] of Object.entries(body['chains'] as Record<string, { seq: number; hash: string }>)) anchors.push({ line: at, chain, ...head });
    }
    prev = hash;
    hashes.push(hash);
    ends.push(lines[index]!.end);
  }
  return { result: { ok: true, entries: hashes.length, ...(notes.length ? { notes } : {}) }, hashes, ends, anchors };
}

/** The chain alone, without its head record: a torn last line that no record closes is a failure here. */
export function verifyAuditText(text: string): VerifyResult {
  const walk = walkChain(Buffer.from(text));
  return walk.unclosedTorn ? { ok: false, entries: walk.result.entries, line: walk.unclosedTorn.line, problem: 'not valid JSON' } : walk.result;
}

function sameReading(a: HeadReading, b: HeadReading): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The file and its head record, read so that they agree with each other while a writer appends:
 * head, file, head again, until the two head readings are the same.
 */
function readChain(file: string): { bytes: Buffer; reading: HeadReading } {
  let reading = readHeadRecord(file);
  for (let attempt = 0; ; attempt++) {
    const bytes = readFileSync(file);
    const again = readHeadRecord(file);
    if (sameReading(reading, again) || attempt === 4) return { bytes, reading: again };
    reading = again;
  }
}

function ownerAlive(file: string): boolean {
  const pid = readHolder(`${file}.owner`);
  return pid !== undefined && processAlive(pid);
}

const failed = (walk: Walk, problem: string): VerifyResult => ({ ok: false, entries: walk.result.entries, problem });

/** How head records' signatures are checked. */
export interface HeadKeyOptions {
  /** The receipt public key: a head record that carries a signature must be signed by it. */
  readonly publicKey?: KeyObject;
  /** Every head record must carry a valid signature (the key came from outside the folder). */
  readonly requireSignedHeads?: boolean;
}

/** The problem with a head record's signature, if any. */
function signatureProblem(file: string, reading: HeadReading & { state: 'found' }, options: HeadKeyOptions): string | undefined {
  const name = basename(headFileOf(file));
  if (reading.head.sig === undefined) return options.requireSignedHeads ? `its head record ${name} is not signed (with receipts: true in audit.yaml every head record is)` : undefined;
  if (options.publicKey && !headSignatureValid(options.publicKey, basename(file), reading.head)) return `its head record ${name} has a signature the receipt key did not make (the head was rewritten, or signed by another key)`;
  return undefined;
}

/** The chain checked against its head record: lines cut from its end, or appended past it, are found. */
function checkHead(file: string, bytes: Buffer, walk: Walk, reading: HeadReading, options: HeadKeyOptions): VerifyResult {
  if (!walk.result.ok) return walk.result;
  const last = walk.result.entries;
  const notes = [...(walk.result.notes ?? [])];
  if (reading.state === 'missing') {
    return bytes.length === 0 ? walk.result : failed(walk, 'no head record (written by an older version, or removed)');
  }
  if (reading.state === 'invalid') return failed(walk, `its head record ${basename(headFileOf(file))} is not valid (${reading.problem})`);
  const unsigned = signatureProblem(file, reading, options);
  if (unsigned) return failed(walk, unsigned);
  const head = reading.head;
  if (bytes.length === 0 && head.seq > 0) return failed(walk, `the file is empty but its head says ${head.seq} (lines were removed from the end)`);
  if (last < head.seq) return failed(walk, `the log ends at seq ${last} but its head says ${head.seq} (lines were removed from the end)`);
  const hashAtHead = head.seq === 0 ? GENESIS_HASH : walk.hashes[head.seq - 1];
  if (hashAtHead !== head.hash) return failed(walk, `entry ${head.seq} does not match its head record (the log was rewritten)`);
  const sizeAtHead = head.seq === 0 ? 0 : walk.ends[head.seq - 1]!;
  if (sizeAtHead !== head.size) return failed(walk, `the first ${head.seq} entries take ${sizeAtHead} bytes but its head says ${head.size} (the log was rewritten)`);
  // A live writer is between its two writes for an instant; anything more was appended by someone else.
  if (last > head.seq && !(last === head.seq + 1 && ownerAlive(file))) {
    return failed(walk, `the log ends at seq ${last} but its head says ${head.seq} (entries were appended by something other than its writer, or its writer died between writing an entry and its head)`);
  }
  if (walk.unclosedTorn) {
    if (last !== head.seq) return { ok: false, entries: last, line: walk.unclosedTorn.line, problem: 'not valid JSON' };
    notes.push(`line ${walk.unclosedTorn.line} holds ${walk.unclosedTorn.bytes} bytes of a torn write after entry ${last}, from a writer that died mid-write; the next writer closes it with a torn record`);
  }
  return { ok: true, entries: last, ...(notes.length ? { notes } : {}) };
}

interface FileCheck {
  readonly result: VerifyResult;
  readonly walk?: Walk;
}

function checkFile(file: string, options: HeadKeyOptions): FileCheck {
  const { bytes, reading } = readChain(file);
  const walk = walkChain(bytes);
  return { result: checkHead(file, bytes, walk, reading, options), walk };
}

/** The chain of one file checked against its head record. */
export function verifyAuditFile(file: string, options: HeadKeyOptions = {}): VerifyResult {
  return checkFile(file, options).result;
}

/** What a verify command prints, one line per file, and its exit code: 1 when any chain is broken. */
export interface AuditReport {
  readonly lines: string[];
  readonly exitCode: number;
  /** How many files were checked; 0 when the folder holds no audit log yet. */
  readonly checked: number;
}

/**
 * The first anchor another chain holds for `name` that the chain does not bear out, as a
 * problem; undefined when every anchor agrees (or the chain is already broken on its own).
 */
function anchorProblem(name: string, walk: Walk | undefined, anchorsByChain: ReadonlyMap<string, readonly (Anchor & { from: string })[]>): string | undefined {
  for (const anchor of anchorsByChain.get(name) ?? []) {
    const where = `${anchor.from} line ${anchor.line}`;
    if (!walk) return `the file is missing but ${where} anchored it at seq ${anchor.seq} (the log and its head were deleted)`;
    if (!walk.result.ok) return undefined;
    if (walk.result.entries < anchor.seq) return `the log ends at seq ${walk.result.entries} but ${where} anchored it at seq ${anchor.seq} (lines were removed from the end)`;
    if (anchor.seq > 0 && walk.hashes[anchor.seq - 1] !== anchor.hash) return `entry ${anchor.seq} is not the one ${where} anchored (the log was rewritten)`;
  }
  return undefined;
}

function reportLine(file: string, result: VerifyResult): string {
  if (!result.ok) return result.line === undefined ? `FAIL ${file}: ${result.problem}` : `FAIL ${file} line ${result.line}: ${result.problem}`;
  const notes = result.notes?.length ? ` (note: ${result.notes.join('; ')})` : '';
  return `OK ${file}: ${result.entries} ${result.entries === 1 ? 'entry' : 'entries'}, chain intact${notes}`;
}

/**
 * Checks `files`, or every chain in `dir` when none is named: each `*.jsonl` against its head
 * record, a head record whose chain is gone, and the anchors the chains hold for each other. A
 * folder that does not exist yet is no failure: it is made by the first audited call, so a
 * server that answered none has none, and the report says so in one line.
 */
export function verifyAuditFolder(dir: string, files: readonly string[] = [], options: HeadKeyOptions = {}): AuditReport {
  let targets = files;
  let orphanHeads: string[] = [];
  const wholeFolder = targets.length === 0;
  if (wholeFolder) {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const chains = new Set(names.filter((name) => name.endsWith('.jsonl')));
    // The head of a chain that never held an entry (made, then its file removed) anchors nothing.
    orphanHeads = names
      .filter((name) => name.endsWith('.jsonl.head') && !chains.has(name.slice(0, -'.head'.length)))
      .map((name) => join(dir, name.slice(0, -'.head'.length)))
      .filter((file) => anchorsEntries(readHeadRecord(file)));
    targets = [...chains].sort().map((name) => join(dir, name));
    if (targets.length === 0 && orphanHeads.length === 0) return { lines: [`no audit logs in ${dir} yet: no call has been audited`], exitCode: 0, checked: 0 };
  }
  const checks = new Map<string, FileCheck>();
  for (const file of targets) {
    try {
      checks.set(file, checkFile(file, options));
    } catch (error) {
      checks.set(file, { result: { ok: false, entries: 0, problem: `cannot be read (${(error as Error).message})` } });
    }
  }
  const anchorsByChain = new Map<string, (Anchor & { from: string })[]>();
  if (wholeFolder) {
    for (const [file, check] of checks) {
      for (const anchor of check.walk?.anchors ?? []) anchorsByChain.set(anchor.chain, [...(anchorsByChain.get(anchor.chain) ?? []), { ...anchor, from: basename(file) }]);
    }
  }
  const lines: string[] = [];
  let failedAny = false;
  for (const [file, check] of checks) {
    const problem = check.result.ok ? anchorProblem(basename(file), check.walk, anchorsByChain) : undefined;
    const result = problem ? { ok: false, entries: check.result.entries, problem } : check.result;
    failedAny ||= !result.ok;
    lines.push(reportLine(file, result));
  }
  const missing = new Set(orphanHeads);
  for (const name of anchorsByChain.keys()) if (!checks.has(join(dir, name))) missing.add(join(dir, name));
  for (const file of [...missing].sort()) {
    const reading = readHeadRecord(file);
    const headName = basename(headFileOf(file));
    const problem =
      reading.state === 'found'
        ? (signatureProblem(file, reading, options) ?? `the file is missing but its head ${headName} says ${reading.head.seq} (the log was deleted)`)
        : reading.state === 'invalid'
          ? `the file is missing and its head record ${headName} is not valid (${reading.problem})`
          : anchorProblem(basename(file), undefined, anchorsByChain);
    if (!problem) continue;
    failedAny = true;
    lines.push(`FAIL ${file}: ${problem}`);
  }
  return { lines, exitCode: failedAny ? 1 : 0, checked: targets.length + missing.size };
}

/**
 * The hash of the record at `seq` in a chain file, walking the chain up to it: `problem` (and
 * its line) when the chain breaks first, no hash when the chain ends before `seq`.
 */
export function chainRecordHash(file: string, seq: number): { hash?: string; entries: number; line?: number; problem?: string } {
  const walk = walkChain(readFileSync(file));
  const hash = walk.hashes[seq - 1];
  if (hash !== undefined) return { hash, entries: walk.result.entries };
  return walk.result.ok ? { entries: walk.result.entries } : { entries: walk.result.entries, line: walk.result.line!, problem: walk.result.problem! };
}
