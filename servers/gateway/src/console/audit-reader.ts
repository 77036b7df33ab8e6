import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { auditEntrySchema, receiptPublicKeyFile } from '@bulkhead/core';
import { auditVerify } from '../commands/audit-verify.js';

/** How much of the end of each chain file is read: a huge log costs no more than this. */
export const TAIL_BYTES = 512 * 1024;
/** The newest records taken from each chain. */
export const TAIL_RECORDS = 300;

/** An audited call as the Activity page shows it (approval is written by gates that held the call for a human). */
const callRecordSchema = auditEntrySchema.extend({
  approval: z.object({ id: z.string(), by: z.string().optional() }).optional(),
});

export type CallRecord = z.output<typeof callRecordSchema> & { readonly chain: string };

/** The chain files of the audit folder: `<namespace>.jsonl` and the siblings other processes wrote. */
export function chainFiles(auditDir: string): string[] {
  try {
    return readdirSync(auditDir)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()
      .map((name) => join(auditDir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * The last `TAIL_RECORDS` call records of one chain, oldest first, read from at most the last
 * `TAIL_BYTES`: the first line of the window is dropped when the window starts mid-file (it may be
 * cut), and the log's own records (torn, anchor) and lines that are no call record are skipped.
 */
export function tailRecords(file: string): CallRecord[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.allocUnsafe(length);
    const read = readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.subarray(0, read).toString('utf8').split('\n');
    if (length < size) lines.shift();
    const chain = basename(file);
    const records: CallRecord[] = [];
    for (const line of lines.filter((candidate) => candidate !== '').slice(-TAIL_RECORDS)) {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        continue;
      }
      const parsed = callRecordSchema.safeParse(raw);
      if (parsed.success) records.push({ ...parsed.data, chain });
    }
    return records;
  } finally {
    closeSync(fd);
  }
}

/** The newest calls of every chain, newest first. */
export function recentCalls(auditDir: string): CallRecord[] {
  return chainFiles(auditDir)
    .flatMap(tailRecords)
    .sort((a, b) => (a.time === b.time ? b.seq - a.seq : a.time < b.time ? 1 : -1));
}

/** A chain's verification as the verifier reported it. */
export interface ChainStatus {
  readonly chain: string;
  readonly verified: boolean;
  /** The verifier's line: `OK … N entries, chain intact` or `FAIL … line N: problem`. */
  readonly report: string;
}

export interface FolderStatus {
  readonly chains: readonly ChainStatus[];
  /** Lines about no chain file in the folder (a chain deleted with its head left behind, say). */
  readonly other: readonly string[];
}

/**
 * What `bulkhead audit verify` reports for the folder, verified again only when a file of it (or
 * the receipt key) changed size or modification time: a reload does not walk an unchanged log.
 */
export class ChainVerifier {
  private cached: { readonly fingerprint: string; readonly status: FolderStatus } | undefined;

  constructor(private readonly controlDir: string) {}

  private fingerprint(auditDir: string): string {
    let names: string[];
    try {
      names = readdirSync(auditDir).sort();
    } catch {
      names = [];
    }
    const files = [...names.map((name) => join(auditDir, name)), receiptPublicKeyFile(this.controlDir)];
    return files
      .map((file) => {
        try {
          const stat = statSync(file);
          return `${file}:${stat.size}:${stat.mtimeMs}`;
        } catch {
          return `${file}:-`;
        }
      })
      .join('\n');
  }

  status(): FolderStatus {
    const auditDir = join(this.controlDir, 'audit');
    const fingerprint = this.fingerprint(auditDir);
    if (this.cached?.fingerprint === fingerprint) return this.cached.status;
    const files = chainFiles(auditDir);
    const report = files.length > 0 ? auditVerify(this.controlDir, []).lines : [];
    const chains = files.map((file): ChainStatus => {
      const line = report.find((candidate) => candidate.startsWith(`OK ${file}:`) || candidate.startsWith(`FAIL ${file}:`) || candidate.startsWith(`FAIL ${file} line `));
      return { chain: basename(file), verified: line?.startsWith('OK ') === true, report: line ?? `FAIL ${file}: the verifier did not report it` };
    });
    const other = report.filter((line) => !files.some((file) => line.startsWith(`OK ${file}:`) || line.startsWith(`FAIL ${file}:`) || line.startsWith(`FAIL ${file} line `)));
    const status = { chains, other };
    this.cached = { fingerprint, status };
    return status;
  }
}
