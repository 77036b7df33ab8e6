import { readFileSync } from 'node:fs';
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
