import { join } from 'node:path';

/** Where audit files live inside the control-plane folder. */
export function auditFile(controlDir: string, server: string): string {
  return join(controlDir, 'audit', `${server}.jsonl`);
}

/**
 * The Ed25519 private key that signs receipts (PKCS#8 PEM, mode 0600). A `keys/receipt.key`
 * beside it is the HMAC key of version 1 receipts, which nothing reads any more.
 */
export function receiptPrivateKeyFile(controlDir: string): string {
  return join(controlDir, 'keys', 'receipt-signing.key');
}

/** Its public half (SPKI PEM), what a third party verifies receipts with. */
export function receiptPublicKeyFile(controlDir: string): string {
  return join(controlDir, 'keys', 'receipt.pub');
}
