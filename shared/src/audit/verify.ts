import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryHash, GENESIS_HASH } from './chain.js';
import { auditEntrySchema } from './entry.js';

export interface VerifyResult {
  readonly ok: boolean;
  readonly entries: number;
  /** 1-based line of the first problem. */
  readonly line?: number;
  readonly problem?: string;
}

/** Walks the chain and reports the first line that was edited, removed, inserted or reordered. */
export function verifyAuditText(text: string): VerifyResult {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev = GENESIS_HASH;
  let expectedSeq = 1;
  for (const [index, line] of lines.entries()) {
    const lineNo = index + 1;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      return { ok: false, entries: index, line: lineNo, problem: 'not valid JSON' };
    }
    const parsed = auditEntrySchema.safeParse(raw);
    if (!parsed.success) return { ok: false, entries: index, line: lineNo, problem: `not an audit entry (${parsed.error.issues[0]?.message})` };
    const { hash, ...body } = parsed.data;
    if (body.seq !== expectedSeq) {
      return { ok: false, entries: index, line: lineNo, problem: `sequence ${body.seq} where ${expectedSeq} was expected (a line was removed, inserted or reordered)` };
    }
    if (body.prev !== prev) return { ok: false, entries: index, line: lineNo, problem: 'does not chain to the line before it' };
    if (entryHash(prev, body) !== hash) return { ok: false, entries: index, line: lineNo, problem: 'content does not match its hash (the line was edited)' };
    prev = hash;
    expectedSeq++;
  }
  return { ok: true, entries: lines.length };
}

export function verifyAuditFile(file: string): VerifyResult {
  return verifyAuditText(readFileSync(file, 'utf8'));
}

/** What a verify command prints, one line per file, and its exit code: 1 when any chain is broken. */
export interface AuditReport {
  readonly lines: string[];
  readonly exitCode: number;
  /** How many files were checked; 0 when the folder holds no audit log yet. */
  readonly checked: number;
}

/**
 * Checks `files`, or every `*.jsonl` in `dir` when none is named. A folder that does not exist
 * yet is no failure: it is made by the first audited call, so a server that answered none has
 * none, and the report says so in one line.
 */
export function verifyAuditFolder(dir: string, files: readonly string[] = []): AuditReport {
  let targets = files;
  if (targets.length === 0) {
    try {
      targets = readdirSync(dir).filter((name) => name.endsWith('.jsonl')).sort().map((name) => join(dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (targets.length === 0) return { lines: [`no audit logs in ${dir} yet: no call has been audited`], exitCode: 0, checked: 0 };
  }
  let failed = false;
  const lines = targets.map((file) => {
    let result: VerifyResult;
    try {
      result = verifyAuditFile(file);
    } catch (error) {
      failed = true;
      return `FAIL ${file}: cannot be read (${(error as Error).message})`;
    }
    failed ||= !result.ok;
    return result.ok ? `OK ${file}: ${result.entries} entries, chain intact` : `FAIL ${file} line ${result.line}: ${result.problem}`;
  });
  return { lines, exitCode: failed ? 1 : 0, checked: targets.length };
}
