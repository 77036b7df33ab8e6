import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditEntry } from './entry.js';

export interface Receipt {
  readonly v: 1;
  readonly server: string;
  readonly tool: string;
  readonly seq: number;
  readonly time: string;
  readonly entry_hash: string;
  readonly signature: string;
}

/** Reads the HMAC key, creating it (mode 0600, exclusively) on first use. */
export function loadReceiptKey(file: string): Buffer {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, randomBytes(32).toString('hex'));
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

function sign(key: Buffer, fields: Omit<Receipt, 'signature'>): string {
  return createHmac('sha256', key).update(`${fields.v}|${fields.server}|${fields.tool}|${fields.seq}|${fields.time}|${fields.entry_hash}`).digest('hex');
}

export function issueReceipt(key: Buffer, entry: AuditEntry): Receipt {
  const fields = { v: 1 as const, server: entry.server, tool: entry.tool, seq: entry.seq, time: entry.time, entry_hash: entry.hash };
  return { ...fields, signature: sign(key, fields) };
}

export function verifyReceipt(key: Buffer, receipt: Receipt): boolean {
  const { signature, ...fields } = receipt;
  const expected = Buffer.from(sign(key, fields), 'hex');
  const given = Buffer.from(signature, 'hex');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
