import { sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { canonicalJson } from './chain.js';

/**
 * Every record is written over the last at offset 0 with the same length: one pwrite per append
 * (a write + rename cost about 80 times as much), and no reader ever sees two records mixed.
 */
export const HEAD_RECORD_BYTES = 256;

/**
 * Where a chain is anchored: its last seq and hash, and the file's size after that line. With
 * receipts on, `sig` is the receipt key's Ed25519 signature (base64) over `headSignedBytes`.
 */
export const headRecordSchema = z.strictObject({
  v: z.literal(1),
  seq: z.number().int().nonnegative(),
  hash: z.string(),
  size: z.number().int().nonnegative(),
  sig: z.string().optional(),
});

export type HeadRecord = z.output<typeof headRecordSchema>;

export function headFileOf(chainFile: string): string {
  return `${chainFile}.head`;
}

export function encodeHead(head: HeadRecord): Buffer {
  return encodeHeadInto(Buffer.allocUnsafe(HEAD_RECORD_BYTES), head);
}

/** `encodeHead` into a buffer kept for it: the writer rewrites the head after every append. */
export function encodeHeadInto(record: Buffer, head: HeadRecord): Buffer {
  const text = `{"v":1,"seq":${head.seq},"hash":${JSON.stringify(head.hash)},"size":${head.size}${head.sig !== undefined ? `,"sig":${JSON.stringify(head.sig)}` : ''}}`;
  const length = record.write(text, 0, 'utf8');
  if (length !== Buffer.byteLength(text) || length >= HEAD_RECORD_BYTES) throw new Error(`a head record of ${Buffer.byteLength(text)} bytes does not fit in ${HEAD_RECORD_BYTES}`);
  record.fill(0x20, length, HEAD_RECORD_BYTES - 1);
  record[HEAD_RECORD_BYTES - 1] = 0x0a;
  return record;
}

/**
 * What a head record's signature covers: the canonical JSON of the chain's file name and the
 * record's fields but `sig`, so a head cannot be moved to another chain or another state.
 */
export function headSignedBytes(chain: string, head: Omit<HeadRecord, 'sig'>): Buffer {
  return Buffer.from(canonicalJson({ v: 1, chain, seq: head.seq, hash: head.hash, size: head.size }), 'utf8');
}

export function signHead(privateKey: KeyObject, chain: string, head: Omit<HeadRecord, 'sig'>): string {
  return sign(null, headSignedBytes(chain, head), privateKey).toString('base64');
}

export function headSignatureValid(publicKey: KeyObject, chain: string, head: HeadRecord): boolean {
  return head.sig !== undefined && verify(null, headSignedBytes(chain, head), publicKey, Buffer.from(head.sig, 'base64'));
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
