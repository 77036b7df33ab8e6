import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { AuditLog, canonicalJson, entryHash, GENESIS_HASH, issueReceipt, loadReceiptSigner, redactArguments, REDACTED, sha256, verifyAuditFile, verifyAuditText, verifyReceipt, type AuditRecord } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let ws: TempWorkspace;
afterEach(() => ws?.cleanup());

const record = (tool: string, outcome: AuditRecord['outcome'] = 'ok'): AuditRecord => ({
  server: 'fs',
  tool,
  caller: 'test',
  args: { path: 'a.txt' },
  decision: 'allow',
  outcome,
  duration_ms: 1,
  bytes_out: 10,
});

function logWith(count: number): { file: string; lines: string[] } {
  ws = tempWorkspace();
  const file = join(ws.root, 'audit', 'fs.jsonl');
  const log = new AuditLog(file);
  for (let i = 0; i < count; i++) log.append(record(`fs:tool_${i}`));
  return { file, lines: readFileSync(file, 'utf8').trimEnd().split('\n') };
}

describe('audit chain', () => {
  it('appends one chained JSON line per call', () => {
    const { file, lines } = logWith(3);
    expect(lines).toHaveLength(3);
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(entries[1].prev).toBe(entries[0].hash);
    expect(entries[0].prev).toBe('0'.repeat(64));
    expect(verifyAuditFile(file)).toEqual({ ok: true, entries: 3 });
  });

  it('detects an edited line', () => {
    const { lines } = logWith(3);
    lines[1] = lines[1]!.replace('"outcome":"ok"', '"outcome":"error"');
    expect(verifyAuditText(lines.join('\n'))).toEqual({ ok: false, entries: 1, line: 2, problem: 'content does not match its hash (the line was edited)' });
  });

  it('detects a removed line', () => {
    const { lines } = logWith(3);
    lines.splice(1, 1);
    expect(verifyAuditText(lines.join('\n'))).toEqual({
      ok: false,
      entries: 1,
      line: 2,
      problem: 'sequence 3 where 2 was expected (a line was removed, inserted or reordered)',
    });
  });

  it('detects reordered lines', () => {
    const { lines } = logWith(3);
    [lines[1], lines[2]] = [lines[2]!, lines[1]!];
    expect(verifyAuditText(lines.join('\n')).line).toBe(2);
  });

  it('detects a rewritten line whose hash was recomputed but whose chain was not', () => {
    const { lines } = logWith(2);
    const forged = JSON.parse(lines[0]!);
    forged.seq = 1;
    forged.prev = 'f'.repeat(64);
    lines[0] = JSON.stringify(forged);
    expect(verifyAuditText(lines.join('\n'))).toMatchObject({ ok: false, line: 1, problem: 'does not chain to the line before it' });
  });

  it('detects a truncated head (the first line removed)', () => {
    const { lines } = logWith(3);
    expect(verifyAuditText(lines.slice(1).join('\n')).problem).toBe('sequence 2 where 1 was expected (a line was removed, inserted or reordered)');
  });

  it('gives each of several processes appending at once its own unbroken chain', async () => {
    ws = tempWorkspace();
    const dir = join(ws.root, 'audit');
    const file = join(dir, 'shared.jsonl');
    const logModule = fileURLToPath(new URL('../dist/audit/log.js', import.meta.url));
    const writer = `
      const { AuditLog } = await import(${JSON.stringify(logModule)});
      const log = AuditLog.at(${JSON.stringify(file)});
      for (let i = 0; i < 50; i++) {
        log.append({ server: 'p' + process.pid, tool: 'x:y', caller: 't', args: { i }, decision: 'allow', outcome: 'ok', duration_ms: 0, bytes_out: 0 });
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    `;
    await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', writer], { stdio: 'inherit' });
            child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
          }),
      ),
    );
    const files = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
    expect(files).toContain('shared.jsonl');
    expect(files.every((name) => /^shared(\.\d+)?\.jsonl$/.test(name))).toBe(true);
    const results = files.map((name) => verifyAuditFile(join(dir, name)));
    expect(results.every((result) => result.ok)).toBe(true);
    const calls = files.flatMap((name) => readFileSync(join(dir, name), 'utf8').trimEnd().split('\n').filter((line) => line.includes('"tool":"x:y"')));
    expect(calls).toHaveLength(200);
    expect(readdirSync(dir).filter((name) => name.endsWith('.owner'))).toEqual([]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.head')).sort()).toEqual(files.map((name) => `${name}.head`).sort());
  });

  it('makes its folder with the first append, not when it is opened', () => {
    ws = tempWorkspace();
    const file = join(ws.root, 'control', 'audit', 'fs.jsonl');
    const log = new AuditLog(file);
    expect(existsSync(join(ws.root, 'control'))).toBe(false);
    log.append(record('fs:read_file'));
    expect(verifyAuditFile(file)).toEqual({ ok: true, entries: 1 });
    log.close();
  });

  it('keeps auditing in a fresh chain when the log has no head record (an older version wrote it, or it was cut)', () => {
    ws = tempWorkspace({ 'audit/fs.jsonl': '{"v":1,"seq":1,"trunc' });
    const file = join(ws.root, 'audit', 'fs.jsonl');
    const log = new AuditLog(file);
    log.append(record('fs:read_file'));
    expect(log.file).toBe(join(ws.root, 'audit', `fs.${process.pid}.jsonl`));
    expect(verifyAuditFile(log.file)).toEqual({ ok: true, entries: 1 });
    expect(readFileSync(file, 'utf8')).toBe('{"v":1,"seq":1,"trunc');
    expect(verifyAuditFile(file)).toEqual({ ok: false, entries: 0, problem: 'no head record (written by an older version, or removed)' });
    log.close();
  });

  it('takes over the file of an owner that died', () => {
    ws = tempWorkspace({ 'audit/fs.jsonl.owner': '999999999' });
    const file = join(ws.root, 'audit', 'fs.jsonl');
    const log = new AuditLog(file);
    log.append(record('fs:read_file'));
    expect(log.file).toBe(file);
    expect(readFileSync(`${file}.owner`, 'utf8')).toBe(String(process.pid));
  });
});

describe('redaction', () => {
  it('redacts secret-looking keys and values and cuts long strings', () => {
    const redacted = redactArguments({
      path: 'a.txt',
      api_key: 'abc',
      nested: { Authorization: 'Bearer xyz', note: 'token is ghp_abcdefghijklmnopqrstuvwxyz0123456789' },
      url: 'https://user:hunter2@example.test/x',
      command: 'curl -H "Authorization: Bearer abcdefghijkl" x',
      big: 'x'.repeat(1000),
      custom_field: 'hide me',
    }, ['custom']) as Record<string, unknown>;
    expect(redacted).toEqual({
      path: 'a.txt',
      api_key: REDACTED,
      nested: { Authorization: REDACTED, note: `token is ${REDACTED}` },
      url: `https://user:${REDACTED}@example.test/x`,
      command: `curl -H "Authorization: ${REDACTED}" x`,
      big: `${'x'.repeat(256)}…(1000 chars)`,
      custom_field: REDACTED,
    });
  });

  it('scans only the preview of a huge argument, and still redacts a secret that starts in it', () => {
    const key = `-----BEGIN RSA PRIVATE KEY-----\n${'A'.repeat(20_000)}\n-----END RSA PRIVATE KEY-----`;
    const huge = `${'x'.repeat(100)}${key}${'y'.repeat(5_000_000)}`;
    expect(redactArguments({ content: huge })).toEqual({ content: `${'x'.repeat(100)}${REDACTED}…(${huge.length} chars)` });
    const token = `${'z'.repeat(239)} ghp_abcdefghijklmnopqrstuvwxyz0123456789 ${'y'.repeat(100_000)}`;
    expect(redactArguments({ content: token })).toEqual({ content: `${'z'.repeat(239)} ${REDACTED} ${'y'.repeat(5)}…(${token.length} chars)` });
  });

  it('redacts private keys and cloud credentials inside text', () => {
    const text = 'key: -----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY----- id AKIAABCDEFGHIJKLMNOP';
    expect(redactArguments({ content: text })).toEqual({ content: `key: ${REDACTED} id ${REDACTED}` });
  });
});

describe('receipts', () => {
  const signerIn = (root: string, name = 'receipt') => loadReceiptSigner(join(root, 'keys', `${name}-signing.key`), join(root, 'keys', `${name}.pub`));

  it('signs an entry with Ed25519 and rejects a tampered receipt or another key', () => {
    ws = tempWorkspace();
    const log = new AuditLog(join(ws.root, 'audit', 'fs.jsonl'));
    const entry = log.append(record('fs:read_file'));
    const signer = signerIn(ws.root);
    const receipt = issueReceipt(signer, entry, log.file);
    expect(receipt).toMatchObject({ v: 2, alg: 'Ed25519', key: signer.fingerprint, server: 'fs', tool: 'fs:read_file', chain: 'fs.jsonl', seq: 1, entry_hash: entry.hash });
    expect(verifyReceipt(signer, receipt)).toBe(true);
    for (const tampered of [{ tool: 'fs:grep' }, { seq: 2 }, { chain: 'fs.1.jsonl' }, { time: new Date(0).toISOString() }, { entry_hash: 'f'.repeat(64) }, { server: 'git' }]) {
      expect(verifyReceipt(signer, { ...receipt, ...tampered }), JSON.stringify(tampered)).toBe(false);
    }
    expect(verifyReceipt(signerIn(ws.root, 'other'), receipt)).toBe(false);
    log.close();
  });

  it('creates the key pair once, the private key private to its owner, the public key beside it', () => {
    ws = tempWorkspace();
    const first = signerIn(ws.root);
    expect(signerIn(ws.root).fingerprint).toBe(first.fingerprint);
    expect(first.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(statSync(join(ws.root, 'keys', 'receipt-signing.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(ws.root, 'keys', 'receipt.pub'), 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=]+\n-----END PUBLIC KEY-----\n$/);
    expect(readdirSync(join(ws.root, 'keys')).sort()).toEqual(['receipt-signing.key', 'receipt.pub']);
  });

  it('gives processes that make the key at once one key between them', async () => {
    ws = tempWorkspace();
    const receiptsModule = fileURLToPath(new URL('../dist/audit/receipts.js', import.meta.url));
    const script = `
      const { loadReceiptSigner } = await import(${JSON.stringify(receiptsModule)});
      process.stdout.write(loadReceiptSigner(${JSON.stringify(join(ws.root, 'keys', 'receipt-signing.key'))}, ${JSON.stringify(join(ws.root, 'keys', 'receipt.pub'))}).fingerprint);
    `;
    const fingerprints = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
            let out = '';
            child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
            child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exited ${code}`))));
          }),
      ),
    );
    expect(new Set(fingerprints).size).toBe(1);
    expect(signerIn(ws.root).fingerprint).toBe(fingerprints[0]);
    expect(readdirSync(join(ws.root, 'keys')).sort()).toEqual(['receipt-signing.key', 'receipt.pub']);
  });

  it('can be verified from the documented recipe alone, with node:crypto and the public key file', () => {
    ws = tempWorkspace();
    const log = new AuditLog(join(ws.root, 'audit', 'fs.jsonl'));
    const receipt = issueReceipt(signerIn(ws.root), log.append({ ...record('fs:read_file'), args: { path: 'naïve "quoted" ✓.txt' } }), log.file);
    log.close();
    // docs/security.md: the signed bytes are the UTF-8 of the JSON of every field but `signature`,
    // keys sorted, no whitespace; the signature is base64 Ed25519; `key` is sha256 of the SPKI DER.
    const { signature, ...fields } = JSON.parse(JSON.stringify(receipt)) as Record<string, string | number>;
    const signed = Buffer.from(`{${Object.keys(fields).sort().map((key) => `${JSON.stringify(key)}:${JSON.stringify(fields[key])}`).join(',')}}`, 'utf8');
    const publicKey = createPublicKey(readFileSync(join(ws.root, 'keys', 'receipt.pub'), 'utf8'));
    expect(verify(null, signed, publicKey, Buffer.from(String(signature), 'base64'))).toBe(true);
    expect(verify(null, Buffer.from(signed.toString().replace('"seq":1', '"seq":2')), publicKey, Buffer.from(String(signature), 'base64'))).toBe(false);
    expect(fields['key']).toBe(`sha256:${sha256Der(publicKey.export({ type: 'spki', format: 'der' }))}`);
  });
});

function sha256Der(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex');
}

/** The canonical form as first written (entries, filter, sort, map): what every chain on disk was hashed with. */
function referenceCanonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${referenceCanonical(v)}`).join(',')}}`;
}

describe('canonical JSON', () => {
  const values: unknown[] = [
    null,
    'text with "quotes" and \\ and \u2028',
    42.5,
    true,
    [],
    {},
    [1, undefined, null, [{ b: 1, a: 2 }]],
    { z: 1, a: { y: [3, { d: undefined, c: 'é' }], b: null }, é: 2, Z: 3, _: 4, '10': 5, '9': 6, '': 7, 'a b': 8 },
    { args: { path: 'a.txt', nested: { k: [1, 2, 3] } }, undefinedOnly: undefined },
  ];

  it('is the form every existing chain was hashed with', () => {
    for (const value of values) expect(canonicalJson(value)).toBe(referenceCanonical(value));
  });

  it('hashes an entry the same with or without its canonical arguments given', () => {
    const body = { v: 1, seq: 3, time: '2026-01-01T00:00:00.000Z', ...record('fs:read_file'), args_sha256: sha256('x'), prev: GENESIS_HASH };
    const withError = { ...body, outcome: 'error', error: 'boom' };
    const withStranger = { ...body, extra: { b: 1, a: [2] } };
    for (const b of [body, withError, withStranger]) {
      const expected = sha256(`${GENESIS_HASH}\n${referenceCanonical(b)}`);
      expect(entryHash(GENESIS_HASH, b)).toBe(expected);
      expect(entryHash(GENESIS_HASH, b, canonicalJson(b.args))).toBe(expected);
    }
  });
});
