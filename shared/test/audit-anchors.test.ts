import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { encodeHead, HEAD_RECORD_BYTES, headSignatureValid, signHead, verifyAuditFile, verifyAuditFolder } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const LOG_MODULE = fileURLToPath(new URL('../dist/audit/log.js', import.meta.url));

let ws: TempWorkspace;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  ws?.cleanup();
});

/**
 * A short-lived process that appends through the core's AuditLog: `before` entries, then (with a
 * barrier) waits until `barrier` marker files exist so that a batch surely runs at once, then
 * `after` more. Resolves with the file it wrote.
 */
function writer(file: string, options: { before: number; after?: number; barrier?: { dir: string; count: number } }): Promise<string> {
  const script = `
    const { AuditLog } = await import(${JSON.stringify(LOG_MODULE)});
    const fs = await import('node:fs');
    const log = AuditLog.at(${JSON.stringify(file)});
    const entry = (i) => ({ server: 'fs', tool: 'fs:read_file', caller: 'pid' + process.pid, args: { i }, decision: 'allow', outcome: 'ok', duration_ms: 0, bytes_out: 0 });
    for (let i = 0; i < ${options.before}; i++) log.append(entry(i));
    const barrier = ${JSON.stringify(options.barrier ?? null)};
    if (barrier) {
      fs.writeFileSync(barrier.dir + '/ready.' + process.pid, '');
      while (fs.readdirSync(barrier.dir).filter((name) => name.startsWith('ready.')).length < barrier.count) await new Promise((r) => setTimeout(r, 10));
    }
    for (let i = 0; i < ${options.after ?? 0}; i++) log.append(entry(100 + i));
    process.stdout.write(log.file);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let written = '';
    child.stdout!.on('data', (chunk: Buffer) => (written += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(written) : reject(new Error(`writer exited ${code}`))));
  });
}

const chainFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.jsonl')).sort();
const records = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown> & { seq: number; hash: string; prev: string });

describe('chains of short-lived processes', () => {
  it('stay as many as the writers that ever ran at once: a new process adopts a chain whose owner died', async () => {
    ws = tempWorkspace();
    const dir = join(ws.root, 'audit');
    const file = join(dir, 'fs.jsonl');
    const batches = 4;
    const atOnce = 3;
    for (let batch = 0; batch < batches; batch++) {
      const barrier = join(ws.root, `barrier-${batch}`);
      mkdirSync(barrier);
      const written = await Promise.all(Array.from({ length: atOnce }, () => writer(file, { before: 2, after: 2, barrier: { dir: barrier, count: atOnce } })));
      expect(new Set(written).size).toBe(atOnce);
      expect(chainFiles(dir)).toHaveLength(atOnce);
    }
    const files = chainFiles(dir);
    expect(files[files.length - 1]).toBe('fs.jsonl');
    const calls = files.flatMap((name) => records(join(dir, name)).filter((record) => record['tool'] === 'fs:read_file'));
    expect(calls).toHaveLength(batches * atOnce * 4);
    // Each process's entries stay together in one chain: no two writers interleaved.
    for (const name of files) {
      const callers = records(join(dir, name)).flatMap((record) => (typeof record['caller'] === 'string' ? [record['caller']] : []));
      const runs = callers.filter((caller, i) => caller !== callers[i - 1]);
      expect(new Set(runs).size, name).toBe(runs.length);
    }
    const report = verifyAuditFolder(dir);
    expect(report.exitCode).toBe(0);
    expect(report.lines.map((line) => line.replace(/: \d+ entries/, ': N entries'))).toEqual(files.map((name) => `OK ${join(dir, name)}: N entries, chain intact`));
    expect(readdirSync(dir).filter((name) => name.endsWith('.owner'))).toEqual([]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.head')).sort()).toEqual(files.map((name) => `${name}.head`).sort());
  });

  it('anchor the other chains of the namespace when they open, and a lone chain holds calls only', async () => {
    ws = tempWorkspace();
    const dir = join(ws.root, 'audit');
    const file = join(dir, 'fs.jsonl');
    await writer(file, { before: 2 });
    await writer(file, { before: 1 });
    expect(records(file).map((record) => record['kind'] ?? record['tool'])).toEqual(['fs:read_file', 'fs:read_file', 'fs:read_file']);
    writeFileSync(`${file}.owner`, String(process.pid));
    const second = await writer(file, { before: 1 });
    expect(records(second).map((record) => record['kind'] ?? record['tool'])).toEqual(['anchor', 'fs:read_file']);
    expect(records(second)[0]).toMatchObject({ chains: { 'fs.jsonl': { seq: 3, hash: records(file)[2]!.hash } } });
    // Another namespace's chains are not its concern.
    expect(existsSync(join(dir, 'git.jsonl'))).toBe(false);
  });

  it('does not adopt a chain an older writer (no owner file) is still appending to, and adopts it once that writer is gone', async () => {
    ws = tempWorkspace();
    const dir = join(ws.root, 'audit');
    const file = join(dir, 'fs.jsonl');
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(sleeper);
    const made = await writer(join(dir, 'tmp.jsonl'), { before: 2 });
    const theirs = join(dir, `fs.${sleeper.pid}.jsonl`);
    renameSync(made, theirs);
    renameSync(`${made}.head`, `${theirs}.head`);
    writeFileSync(`${file}.owner`, String(process.pid));
    const mine = await writer(file, { before: 1 });
    expect(mine).not.toBe(theirs);
    expect(records(theirs)).toHaveLength(2);
    writeFileSync(`${mine}.owner`, String(process.pid));
    sleeper.kill('SIGKILL');
    await new Promise((resolve) => sleeper.once('exit', resolve));
    expect(await writer(file, { before: 1 })).toBe(theirs);
  });
});

describe('reopening a chain', () => {
  const setUp = async (count: number) => {
    ws = tempWorkspace();
    const file = join(ws.root, 'audit', 'fs.jsonl');
    await writer(file, { before: count });
    return file;
  };
  /** The head record as it stood before the last line: a writer that died between its two writes. */
  const headBeforeLastLine = (file: string) => {
    const all = records(file);
    const before = all[all.length - 2]!;
    const size = readFileSync(file, 'utf8').trimEnd().split('\n').slice(0, -1).join('\n').length + 1;
    writeFileSync(`${file}.head`, encodeHead({ v: 1, seq: before.seq, hash: before.hash, size }));
  };

  it('keeps the head record one fixed-size record, rewritten in place', async () => {
    const file = await setUp(3);
    expect(statSync(`${file}.head`).size).toBe(HEAD_RECORD_BYTES);
    expect(readFileSync(`${file}.head`, 'utf8')).toBe(`${JSON.stringify({ v: 1, seq: 3, hash: records(file)[2]!.hash, size: statSync(file).size })}`.padEnd(HEAD_RECORD_BYTES - 1) + '\n');
  });

  it('fits a signed head record of a huge chain in its fixed size, and checks the signature over chain, seq, hash and size', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const head = { v: 1 as const, seq: 10 ** 12, hash: 'a'.repeat(64), size: 10 ** 15 };
    const signed = { ...head, sig: signHead(privateKey, 'fs.jsonl', head) };
    expect(encodeHead(signed)).toHaveLength(HEAD_RECORD_BYTES);
    expect(headSignatureValid(publicKey, 'fs.jsonl', signed)).toBe(true);
    expect(headSignatureValid(publicKey, 'fs.1.jsonl', signed)).toBe(false);
    for (const changed of [{ seq: head.seq - 1 }, { hash: 'b'.repeat(64) }, { size: head.size - 1 }]) expect(headSignatureValid(publicKey, 'fs.jsonl', { ...signed, ...changed })).toBe(false);
    expect(headSignatureValid(generateKeyPairSync('ed25519').publicKey, 'fs.jsonl', signed)).toBe(false);
  });

  it('repairs a head one entry behind when the writer is gone, and says so until then', async () => {
    const file = await setUp(4);
    headBeforeLastLine(file);
    expect(verifyAuditFile(file)).toEqual({
      ok: false,
      entries: 4,
      problem: 'the log ends at seq 4 but its head says 3 (entries were appended by something other than its writer, or its writer died between writing an entry and its head)',
    });
    // While the owner lives it is between its two writes, for an instant.
    writeFileSync(`${file}.owner`, String(process.pid));
    expect(verifyAuditFile(file)).toEqual({ ok: true, entries: 4 });
    writeFileSync(`${file}.owner`, '999999999');
    expect(await writer(file, { before: 1 })).toBe(file);
    expect(verifyAuditFile(file)).toEqual({ ok: true, entries: 5 });
  });

  it('ends a last record that lost only its newline and goes on in the same file', async () => {
    const file = await setUp(3);
    headBeforeLastLine(file);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, -1));
    expect(await writer(file, { before: 1 })).toBe(file);
    expect(records(file).map((record) => record.seq)).toEqual([1, 2, 3, 4]);
    expect(verifyAuditFile(file)).toEqual({ ok: true, entries: 4 });
  });

  it('refuses a torn line whose closing record does not match it, and a second torn line', async () => {
    const file = await setUp(2);
    appendFileSync(file, '{"v":1,"seq":3,"tim');
    await writer(file, { before: 1 });
    const text = readFileSync(file, 'utf8');
    expect(verifyAuditFile(file)).toEqual({ ok: true, entries: 4, notes: ['line 3 is a torn write of 19 bytes, closed by the torn record on line 4'] });
    writeFileSync(file, text.replace('"seq":3,"tim\n', '"seq":3,"tiM\n'));
    expect(verifyAuditFile(file)).toEqual({ ok: false, entries: 2, line: 3, problem: 'not valid JSON' });
    writeFileSync(file, text.replace(/"torn_bytes":19/, '"torn_bytes":18'));
    expect(verifyAuditFile(file)).toMatchObject({ ok: false, line: 3, problem: 'not valid JSON' });
    // A torn line in the middle with nothing closing it is an edit, not a crash.
    const lines = text.split('\n');
    writeFileSync(file, [...lines.slice(0, 3), ...lines.slice(4)].join('\n'));
    expect(verifyAuditFile(file)).toEqual({ ok: false, entries: 2, line: 3, problem: 'not valid JSON' });
  });
});
