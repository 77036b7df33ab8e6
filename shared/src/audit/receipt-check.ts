import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { keyFingerprint, receiptSchema, verifyReceipt, type Receipt } from './receipts.js';
import { chainRecordHash } from './verify.js';

/** What `audit verify --receipt` prints, one line per check, and its exit code: 1 when one fails. */
export interface ReceiptReport {
  readonly lines: string[];
  readonly exitCode: number;
}

export interface ReceiptCheckOptions {
  readonly publicKey: KeyObject;
  /** Where the key came from, for the messages. */
  readonly keySource: string;
  /** The control-plane folder's audit/: the receipt's entry is looked up there when it exists. */
  readonly auditDir: string;
}

/** The receipt in what a client saved: the receipt itself, its `_meta`, or the whole result. */
function unwrap(value: unknown): unknown {
  const meta = (value as { _meta?: unknown } | null)?._meta ?? value;
  return (meta as Record<string, unknown> | null)?.['bulkhead/receipt'] ?? value;
}

function parseReceiptFile(file: string): { receipt: Receipt } | { problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code ? `cannot be read (${(error as Error).message})` : `not JSON (${(error as Error).message})` };
  }
  const candidate = unwrap(raw);
  if ((candidate as { v?: unknown } | null)?.v === 1) {
    return { problem: 'a version 1 receipt (HMAC-SHA256, which only the secret key of the folder that issued it can check); receipts are version 2 now (Ed25519): the call has to be made again for one' };
  }
  const parsed = receiptSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { problem: `not a bulkhead receipt (${issue?.path.length ? `${issue.path.join('.')}: ` : ''}${issue?.message})` };
  }
  return { receipt: parsed.data };
}

/** The log's side: the chain the receipt names holds an entry at its seq with its hash. */
function checkInLog(receipt: Receipt, auditDir: string): string {
  if (!existsSync(auditDir)) return `SKIP log: no audit folder at ${auditDir}, so the entry was not looked up`;
  const chain = join(auditDir, receipt.chain);
  if (!existsSync(chain)) return `FAIL log: ${chain} does not exist, so the receipt's entry is not in the log`;
  const found = chainRecordHash(chain, receipt.seq);
  if (found.problem !== undefined) return `FAIL log: ${chain} is broken at line ${found.line} before seq ${receipt.seq} (${found.problem})`;
  if (found.hash === undefined) return `FAIL log: ${chain} ends at seq ${found.entries}, before the receipt's entry at seq ${receipt.seq} (lines were removed from the end)`;
  if (found.hash !== receipt.entry_hash) return `FAIL log: entry ${receipt.seq} of ${chain} is not the receipt's entry (another hash: the log was rewritten)`;
  return `OK log: entry ${receipt.seq} of ${chain} is the receipt's entry`;
}

/**
 * Checks a saved receipt offline: its shape, that the given key signed exactly these fields,
 * then, when the audit folder is there, that the log holds the entry it names.
 */
export function checkReceiptFile(file: string, options: ReceiptCheckOptions): ReceiptReport {
  const parsed = parseReceiptFile(file);
  if ('problem' in parsed) return { lines: [`FAIL receipt ${file}: ${parsed.problem}`], exitCode: 1 };
  const { receipt } = parsed;
  const fingerprint = keyFingerprint(options.publicKey);
  if (receipt.key !== fingerprint) return { lines: [`FAIL receipt ${file}: signed by key ${receipt.key}, not by the key of ${options.keySource} (${fingerprint})`], exitCode: 1 };
  if (!verifyReceipt({ publicKey: options.publicKey }, receipt)) {
    return { lines: [`FAIL receipt ${file}: the signature does not match its fields (the receipt was altered, or signed by another key)`], exitCode: 1 };
  }
  const lines = [`OK receipt ${file}: ${receipt.tool} (${receipt.server}), entry ${receipt.seq} of ${receipt.chain} at ${receipt.time}, signed by ${fingerprint}`];
  const log = checkInLog(receipt, options.auditDir);
  lines.push(log);
  return { lines, exitCode: log.startsWith('FAIL') ? 1 : 0 };
}
