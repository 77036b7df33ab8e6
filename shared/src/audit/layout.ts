import { join } from 'node:path';

/** Where audit files live inside the control-plane folder. */
export function auditFile(controlDir: string, server: string): string {
  return join(controlDir, 'audit', `${server}.jsonl`);
}

export function receiptKeyFile(controlDir: string): string {
  return join(controlDir, 'keys', 'receipt.key');
}
