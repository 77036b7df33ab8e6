import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { z } from 'zod';
import { canonicalJson } from './chain.js';
import type { AuditEntry } from './entry.js';

/**
 * A receipt for one successful call, as returned in `_meta["bulkhead/receipt"]`. `signature` is
 * Ed25519 (RFC 8032) over the UTF-8 bytes of the canonical JSON of every other field: keys sorted,
 * no whitespace, strings as JSON.stringify writes them. `key` is the SHA-256 of the public key's
 * DER (SPKI) form, `chain` the audit file (in the control-plane folder's audit/) that holds the
 * entry at `seq` whose hash is `entry_hash`.
 */
export const receiptSchema = z.strictObject({
  v: z.literal(2),
  alg: z.literal('Ed25519'),
  key: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  server: z.string(),
  tool: z.string(),
  chain: z.string(),
  seq: z.number().int().positive(),
  time: z.string(),
  entry_hash: z.string().regex(/^[0-9a-f]{64}$/),
  signature: z.string().regex(/^[A-Za-z0-9+/]{86}==$/),
});

export type Receipt = z.output<typeof receiptSchema>;

export interface ReceiptSigner {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** `sha256:` and the hex SHA-256 of the public key's DER (SPKI) bytes. */
  readonly fingerprint: string;
}

export function keyFingerprint(publicKey: KeyObject): string {
  return `sha256:${createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex')}`;
}

/** The bytes a receipt's signature covers: the canonical JSON of all its fields but `signature`. */
export function receiptSignedBytes(receipt: Omit<Receipt, 'signature'> & { signature?: string }): Buffer {
  const { signature: _signature, ...fields } = receipt;
  return Buffer.from(canonicalJson(fields), 'utf8');
}

/**
 * Reads the signing key, creating the pair on first use: the private key (PKCS#8 PEM, mode 0600)
 * appears whole in one link, so two servers starting at once agree on one key; the public key
 * (SPKI PEM) beside it is written, or rewritten, from it by whoever loads it.
 */
export function loadReceiptSigner(privateKeyFile: string, publicKeyFile: string): ReceiptSigner {
  const pem = readIfExists(privateKeyFile) ?? createPrivateKeyFile(privateKeyFile);
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${privateKeyFile} is not an Ed25519 private key`);
  const publicKey = createPublicKey(key);
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  if (readIfExists(publicKeyFile) !== publicPem) {
    const tmp = `${publicKeyFile}.${process.pid}.tmp`;
    writeFileSync(tmp, publicPem, { mode: 0o644 });
    renameSync(tmp, publicKeyFile);
  }
  return { privateKey: key, publicKey, fingerprint: keyFingerprint(publicKey) };
}

/** The public key of a control-plane folder's keys/, if receipts were ever signed there. */
export function folderPublicKey(publicKeyFile: string): KeyObject | undefined {
  const text = readIfExists(publicKeyFile);
  return text === undefined ? undefined : parsePublicKey(text);
}

/** Makes the private key file, or finds the one another process made first; returns its PEM. */
function createPrivateKeyFile(privateKeyFile: string): string {
  mkdirSync(dirname(privateKeyFile), { recursive: true, mode: 0o700 });
  const pending = `${privateKeyFile}.${process.pid}.tmp`;
  writeFileSync(pending, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  try {
    linkSync(pending, privateKeyFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(pending);
  }
  return readFileSync(privateKeyFile, 'utf8');
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A public key from a PEM (SPKI) file or the base64 of its 32 raw bytes. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  const key = trimmed.startsWith('-----BEGIN')
    ? createPublicKey(trimmed)
    : createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(trimmed, 'base64').toString('base64url') }, format: 'jwk' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 public key');
  return key;
}

export function issueReceipt(signer: ReceiptSigner, entry: AuditEntry, chainFile: string): Receipt {
  const fields = { v: 2 as const, alg: 'Ed25519' as const, key: signer.fingerprint, server: entry.server, tool: entry.tool, chain: basename(chainFile), seq: entry.seq, time: entry.time, entry_hash: entry.hash };
  return { ...fields, signature: sign(null, receiptSignedBytes(fields), signer.privateKey).toString('base64') };
}

export function verifyReceipt(signer: Pick<ReceiptSigner, 'publicKey'>, receipt: Receipt): boolean {
  return verify(null, receiptSignedBytes(receipt), signer.publicKey, Buffer.from(receipt.signature, 'base64'));
}
