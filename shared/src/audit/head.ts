import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Every record is written over the last at offset 0 with the same length: one pwrite per append
 * (a write + rename cost about 80 times as much), and no reader ever sees two records mixed.
 */
export const HEAD_RECORD_BYTES = 256;

/** Where a chain is anchored: its last seq and hash, and the file's size after that line. */
export const headRecordSchema = z.strictObject({
  v: z.literal(1),
  seq: z.number().int().nonnegative(),
  hash: z.string(),
  size: z.number().int().nonnegative(),
});

export type HeadRecord = z.output<typeof headRecordSchema>;

export function headFileOf(chainFile: string): string {
  return `${chainFile}.head`;
}

export function encodeHead(head: HeadRecord): Buffer {
  const record = Buffer.alloc(HEAD_RECORD_BYTES, ' ');
  record.write(JSON.stringify({ v: 1, seq: head.seq, hash: head.hash, size: head.size }));
  record.write('\n', HEAD_RECORD_BYTES - 1);
  return record;
}

export type HeadReading = { readonly state: 'found'; readonly head: HeadRecord } | { readonly state: 'missing' } | { readonly state: 'invalid'; readonly problem: string };

export function readHeadRecord(chainFile: string): HeadReading {
  let text: string;
  try {
    text = readFileSync(headFileOf(chainFile), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { state: 'invalid', problem: 'not valid JSON' };
  }
  const parsed = headRecordSchema.safeParse(raw);
  return parsed.success ? { state: 'found', head: parsed.data } : { state: 'invalid', problem: parsed.error.issues[0]?.message ?? 'not a head record' };
}
