import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AUDIT_POLICY_FILE,
  auditPolicySchema,
  checkReceiptFile,
  ConfigError,
  folderPublicKey,
  keyFingerprint,
  loadYamlFile,
  parsePublicKey,
  receiptPublicKeyFile,
  verifyAuditFolder,
  type AuditReport,
  type ReceiptReport,
} from '@bulkhead/core';

/**
 * `bulkhead audit verify [FILE...] [--key PUBFILE]`: the hash chain of each named file, or of
 * every log in the control-plane folder's audit/, against its head record. Signed head records
 * are checked with the folder's public key; with --key (a key kept outside the folder) every head
 * record must be signed by it. No logs yet is an answer, not a failure (exit 0, one line): the
 * folder is made by the first audited call.
 */
export function auditVerify(controlDir: string, files: readonly string[], keyFile?: string): AuditReport {
  let options = {};
  if (keyFile !== undefined) {
    const read = readPublicKey(keyFile, `${keyFile} does not exist`);
    if ('problem' in read) return { lines: [`FAIL ${read.problem}`], exitCode: 1, checked: 0 };
    options = { publicKey: read.key, requireSignedHeads: true };
  } else {
    const publicKey = folderPublicKey(receiptPublicKeyFile(controlDir));
    if (publicKey) options = { publicKey };
  }
  const report = verifyAuditFolder(join(controlDir, 'audit'), files, options);
  if (report.checked > 0 || !auditingOff(controlDir)) return report;
  return { ...report, lines: report.lines.map((line) => `${line} (auditing is off: ${AUDIT_POLICY_FILE} has enabled: false)`) };
}

/**
 * Whether audit.yaml turns auditing off, for the hint above only: a broken audit.yaml is reported
 * by the commands that run with it (start, doctor), not by this one.
 */
function auditingOff(controlDir: string): boolean {
  try {
    return !loadYamlFile(controlDir, AUDIT_POLICY_FILE, auditPolicySchema).value.enabled;
  } catch (error) {
    if (error instanceof ConfigError) return false;
    throw error;
  }
}

/** The public key from `file`, or a line saying why there is none. */
function readPublicKey(file: string, missing: string): { key: ReturnType<typeof parsePublicKey> } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code === 'ENOENT' ? missing : `cannot read ${file} (${(error as Error).message})` };
  }
  try {
    return { key: parsePublicKey(text) };
  } catch (error) {
    return { problem: `${file} holds no Ed25519 public key (${(error as Error).message})` };
  }
}

/**
 * `bulkhead audit verify --receipt FILE [--key PUBFILE]`: a receipt checked offline with the
 * given public key, or the folder's; with --key no control-plane folder is needed at all.
 */
export function auditVerifyReceipt(controlDir: string, receiptFile: string, keyFile: string | undefined): ReceiptReport {
  const source = keyFile ?? receiptPublicKeyFile(controlDir);
  const missing = keyFile ? `${keyFile} does not exist` : `no public key at ${source}: pass --key PUBFILE (what \`bulkhead audit key\` printed where the receipt was issued)`;
  const read = readPublicKey(source, missing);
  if ('problem' in read) return { lines: [`FAIL receipt ${receiptFile}: ${read.problem}`], exitCode: 1 };
  return checkReceiptFile(receiptFile, { publicKey: read.key, keySource: source, auditDir: join(controlDir, 'audit') });
}

/** `bulkhead audit key`: the public key receipts are verified with, and its fingerprint. */
export function auditKey(controlDir: string): { text: string; exitCode: number } {
  const file = receiptPublicKeyFile(controlDir);
  const read = readPublicKey(file, `no receipt key in ${join(controlDir, 'keys')} yet: it is made with the first receipt (audit.yaml receipts: true)`);
  if ('problem' in read) return { text: `bulkhead: ${read.problem}\n`, exitCode: 1 };
  const pem = read.key.export({ type: 'spki', format: 'pem' }).toString();
  const raw = Buffer.from(read.key.export({ format: 'jwk' }).x ?? '', 'base64url').toString('base64');
  return { text: `${pem}fingerprint: ${keyFingerprint(read.key)}\nraw: ${raw}\nfile: ${file}\n`, exitCode: 0 };
}
