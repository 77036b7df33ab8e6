import { execFile, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, entryHash, keyFingerprint } from '@bulkhead/core';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI } from './helpers.js';

const LOG_MODULE = fileURLToPath(new URL('../../shared/dist/audit/log.js', import.meta.url));

/** `bulkhead audit …` as a user runs it: its stdout, stderr and exit code. */
function bulkhead(args: readonly string[], cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [GATEWAY_CLI, ...args], { encoding: 'utf8', ...(cwd ? { cwd } : {}) }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

/**
 * Appends `count` entries to `file` from a process of its own, which exits (and so gives the chain up) when done; with
 * `approval`, every second entry records it, as a call a human approved does.
 */
function appendFromChild(file: string, count: number, approval?: { id: string; by: string }): Promise<string> {
  const script = `
    const { AuditLog } = await import(${JSON.stringify(LOG_MODULE)});
    const log = AuditLog.at(${JSON.stringify(file)});
    const approval = ${JSON.stringify(approval ?? null)};
    for (let i = 0; i < ${count}; i++) log.append({ server: 'fs', tool: 'fs:read_file', caller: 'test', args: { path: 'f' + i + '.txt' }, decision: 'allow', outcome: 'ok', duration_ms: 1, bytes_out: 10, ...(approval && i % 2 === 1 ? { approval } : {}) });
    process.stdout.write(log.file);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let written = '';
    child.stdout.on('data', (chunk: Buffer) => (written += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(written) : reject(new Error(`writer exited ${code}`))));
  });
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').slice(0, -1);
const writeLines = (file: string, kept: readonly string[]) => writeFileSync(file, kept.map((line) => `${line}\n`).join(''));

describe('bulkhead audit verify finds what was done to the files', () => {
  let pristine: string;
  let dir: string;
  let log: string;
  const verify = () => bulkhead(['audit', 'verify', '--config', dir]);

  beforeAll(async () => {
    pristine = mkdtempSync(join(tmpdir(), 'bulkhead-audit-'));
    await appendFromChild(join(pristine, 'audit', 'fs.jsonl'), 20);
  });
  afterAll(() => rmSync(pristine, { recursive: true, force: true }));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const fresh = () => {
    dir = mkdtempSync(join(tmpdir(), 'bulkhead-audit-case-'));
    cpSync(pristine, dir, { recursive: true });
    log = join(dir, 'audit', 'fs.jsonl');
  };

  it('passes the log as written, with its head record', async () => {
    fresh();
    expect(readdirSync(join(dir, 'audit')).sort()).toEqual(['fs.jsonl', 'fs.jsonl.head']);
    expect(JSON.parse(readFileSync(`${log}.head`, 'utf8'))).toEqual({ v: 1, seq: 20, hash: JSON.parse(lines(log)[19]!).hash, size: readFileSync(log).length });
    expect(await verify()).toEqual({ code: 0, stdout: `OK ${log}: 20 entries, chain intact\n`, stderr: '' });
  });

  const cuts: [string, (file: string) => void, string][] = [
    ['the last line deleted', (file) => writeLines(file, lines(file).slice(0, 19)), 'the log ends at seq 19 but its head says 20 (lines were removed from the end)'],
    ['the last 3 lines deleted', (file) => writeLines(file, lines(file).slice(0, 17)), 'the log ends at seq 17 but its head says 20 (lines were removed from the end)'],
    ['every line but the first deleted', (file) => writeLines(file, lines(file).slice(0, 1)), 'the log ends at seq 1 but its head says 20 (lines were removed from the end)'],
    ['the file emptied', (file) => truncateSync(file, 0), 'the file is empty but its head says 20 (lines were removed from the end)'],
    ['the last line cut in the middle', (file) => truncateSync(file, readFileSync(file).length - 40), 'the log ends at seq 19 but its head says 20 (lines were removed from the end)'],
    ['only the last newline removed', (file) => truncateSync(file, readFileSync(file).length - 1), 'the first 20 entries take ' + '' + 'SIZE bytes but its head says HEAD (the log was rewritten)'],
  ];
  for (const [what, cut, problem] of cuts) {
    it(`finds ${what}`, async () => {
      fresh();
      const size = readFileSync(log).length;
      cut(log);
      const expected = problem.replace('SIZE', String(size - 1)).replace('HEAD', String(size));
      expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log}: ${expected}\n`, stderr: '' });
    });
  }

  it('finds the log deleted while its head record stays, and does not write it again', async () => {
    fresh();
    unlinkSync(log);
    const missing = `FAIL ${log}: the file is missing but its head fs.jsonl.head says 20 (the log was deleted)\n`;
    expect(await verify()).toEqual({ code: 1, stdout: missing, stderr: '' });
    // The next writer does not make it again, empty: it audits in a chain beside it.
    const beside = await appendFromChild(log, 1);
    expect(beside).toMatch(/\/fs\.\d+\.jsonl$/);
    expect(await verify()).toEqual({ code: 1, stdout: `OK ${beside}: 2 entries, chain intact\n${missing}`, stderr: '' });
  });

  it('finds the head record deleted, and a head record that is not one', async () => {
    fresh();
    writeFileSync(`${log}.head`, '{"v":1,"seq":"20"}');
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log}: its head record fs.jsonl.head is not valid (Invalid input: expected number, received string)\n`, stderr: '' });
    unlinkSync(`${log}.head`);
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log}: no head record (written by an older version, or removed)\n`, stderr: '' });
    writeFileSync(`${log}.head`, 'garbage');
    unlinkSync(log);
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log}: the file is missing and its head record fs.jsonl.head is not valid (not valid JSON)\n`, stderr: '' });
  });

  it('passes entries with and without an approval, and finds an approval edited, removed or added', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bulkhead-audit-case-'));
    log = join(dir, 'audit', 'fs.jsonl');
    await appendFromChild(log, 4, { id: 'k3m9q2xa', by: 'bulkhead approvals (user alice)' });
    expect(await verify()).toEqual({ code: 0, stdout: `OK ${log}: 4 entries, chain intact\n`, stderr: '' });
    const original = lines(log);
    const entries = original.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.map((entry) => entry['approval'])).toEqual([undefined, { id: 'k3m9q2xa', by: 'bulkhead approvals (user alice)' }, undefined, { id: 'k3m9q2xa', by: 'bulkhead approvals (user alice)' }]);
    const edited = `FAIL ${log} line 2: content does not match its hash (the line was edited)\n`;
    writeLines(log, original.map((line, i) => (i === 1 ? line.replace('alice', 'mallory') : line)));
    expect(await verify()).toEqual({ code: 1, stdout: edited, stderr: '' });
    const { approval: _removed, ...withoutApproval } = entries[1]!;
    writeLines(log, original.map((line, i) => (i === 1 ? JSON.stringify(withoutApproval) : line)));
    expect(await verify()).toEqual({ code: 1, stdout: edited, stderr: '' });
    writeLines(log, original.map((line, i) => (i === 0 ? JSON.stringify({ ...entries[0], approval: { id: 'k3m9q2xa' } }) : line)));
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log} line 1: content does not match its hash (the line was edited)\n`, stderr: '' });
  });

  it('finds an edited middle line, two swapped lines and a removed middle line', async () => {
    fresh();
    const original = lines(log);
    writeLines(log, original.map((line, i) => (i === 9 ? line.replace('"f9.txt"', '"secret.txt"') : line)));
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log} line 10: content does not match its hash (the line was edited)\n`, stderr: '' });
    writeLines(log, original.map((line, i) => (i === 9 ? original[10]! : i === 10 ? original[9]! : line)));
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log} line 10: sequence 11 where 10 was expected (a line was removed, inserted or reordered)\n`, stderr: '' });
    writeLines(log, original.filter((_, i) => i !== 4));
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log} line 5: sequence 6 where 5 was expected (a line was removed, inserted or reordered)\n`, stderr: '' });
  });

  it('finds an appended forged line, whether or not its hash was recomputed', async () => {
    fresh();
    const last = JSON.parse(lines(log)[19]!) as Record<string, unknown> & { hash: string };
    const { hash: _hash, ...body } = { ...last, seq: 21, prev: last.hash, tool: 'fs:grep' };
    appendFileSync(log, `${JSON.stringify({ ...body, hash: last.hash })}\n`);
    expect(await verify()).toEqual({ code: 1, stdout: `FAIL ${log} line 21: content does not match its hash (the line was edited)\n`, stderr: '' });
    truncateSync(log, JSON.parse(readFileSync(`${log}.head`, 'utf8')).size);
    // Chained exactly as the writer would: only the head record, which was not rewritten, tells.
    appendFileSync(log, `${JSON.stringify({ ...body, hash: entryHash(last.hash, body) })}\n`);
    expect(await verify()).toEqual({
      code: 1,
      stdout: `FAIL ${log}: the log ends at seq 21 but its head says 20 (entries were appended by something other than its writer, or its writer died between writing an entry and its head)\n`,
      stderr: '',
    });
  });

  it('closes a torn last line (a writer that died mid-write) with a record, and the chain goes on in the same file', async () => {
    fresh();
    // What a crash mid-append leaves: part of a line after the last whole one, its head record not yet rewritten.
    const torn = '{"v":1,"seq":21,"time":"2026-01-01T00:00:00.000Z","server":"fs","tool":"fs:re\u00e9';
    const tornBytes = Buffer.byteLength(torn) - 1;
    appendFileSync(log, Buffer.from(torn).subarray(0, tornBytes));
    expect(await verify()).toEqual({
      code: 0,
      stdout: `OK ${log}: 20 entries, chain intact (note: line 21 holds ${tornBytes} bytes of a torn write after entry 20, from a writer that died mid-write; the next writer closes it with a torn record)\n`,
      stderr: '',
    });
    expect(await appendFromChild(log, 2)).toBe(log);
    const tornRecord = JSON.parse(lines(log)[21]!) as Record<string, unknown>;
    expect(tornRecord).toMatchObject({ v: 1, seq: 21, kind: 'torn', torn_bytes: tornBytes, prev: JSON.parse(lines(log)[19]!).hash });
    expect(readdirSync(join(dir, 'audit')).filter((name) => name.endsWith('.jsonl'))).toEqual(['fs.jsonl']);
    expect(await verify()).toEqual({
      code: 0,
      stdout: `OK ${log}: 23 entries, chain intact (note: line 21 is a torn write of ${tornBytes} bytes, closed by the torn record on line 22)\n`,
      stderr: '',
    });
  });

  it('does not write over a cut log: calls go on in a chain beside it, which records the cut one', async () => {
    fresh();
    writeLines(log, lines(log).slice(0, 17));
    const beside = await appendFromChild(log, 1);
    expect(beside).toMatch(/\/fs\.\d+\.jsonl$/);
    expect(lines(log)).toHaveLength(17);
    const anchor = JSON.parse(lines(beside)[0]!) as Record<string, unknown>;
    expect(anchor).toMatchObject({ seq: 1, kind: 'anchor', chains: { 'fs.jsonl': { seq: 20 } } });
    expect(await verify()).toEqual({
      code: 1,
      stdout: `OK ${beside}: 2 entries, chain intact\nFAIL ${log}: the log ends at seq 17 but its head says 20 (lines were removed from the end)\n`,
      stderr: '',
    });
  });

  describe('with a second chain, which anchors the first', () => {
    let second: string;
    const withSecondChain = async () => {
      fresh();
      // A live owner of fs.jsonl (this test process) sends the next writer to a chain of its own.
      writeFileSync(`${log}.owner`, String(process.pid));
      second = await appendFromChild(log, 3);
      unlinkSync(`${log}.owner`);
      expect(second).toMatch(/\/fs\.\d+\.jsonl$/);
      expect(JSON.parse(lines(second)[0]!)).toMatchObject({ kind: 'anchor', chains: { 'fs.jsonl': { seq: 20, hash: JSON.parse(lines(log)[19]!).hash } } });
    };
    const name = () => second.slice(second.lastIndexOf('/') + 1);

    it('finds the first chain deleted together with its head record', async () => {
      await withSecondChain();
      unlinkSync(log);
      unlinkSync(`${log}.head`);
      expect(await verify()).toEqual({
        code: 1,
        stdout: `OK ${second}: 4 entries, chain intact\nFAIL ${log}: the file is missing but ${name()} line 1 anchored it at seq 20 (the log and its head were deleted)\n`,
        stderr: '',
      });
    });

    it('finds the first chain cut with its head record rewritten to match', async () => {
      await withSecondChain();
      writeLines(log, lines(log).slice(0, 15));
      const last = JSON.parse(lines(log)[14]!) as { hash: string };
      writeFileSync(`${log}.head`, `${JSON.stringify({ v: 1, seq: 15, hash: last.hash, size: readFileSync(log).length })}\n`);
      expect(await verify()).toEqual({
        code: 1,
        stdout: `OK ${second}: 4 entries, chain intact\nFAIL ${log}: the log ends at seq 15 but ${name()} line 1 anchored it at seq 20 (lines were removed from the end)\n`,
        stderr: '',
      });
    });
  });

  it('cannot find a lone chain deleted with its head record: nothing is left to tell (see docs/security.md)', async () => {
    fresh();
    unlinkSync(log);
    unlinkSync(`${log}.head`);
    expect(await verify()).toEqual({ code: 0, stdout: `no audit logs in ${join(dir, 'audit')} yet: no call has been audited\n`, stderr: '' });
  });
});

describe('bulkhead audit usage', () => {
  const usage = 'usage: bulkhead audit verify [FILE...] | bulkhead audit verify --receipt FILE [--key PUBFILE] | bulkhead audit key';
  for (const [args, message] of [
    [['audit'], usage],
    [['audit', 'sign'], usage],
    [['audit', 'key', 'extra'], usage],
    [['audit', 'key', '--receipt', 'r.json'], usage],
    [['audit', 'verify', '--receipt', 'r.json', 'fs.jsonl'], `--receipt checks one receipt and takes no audit files; ${usage}`],
  ] as const) {
    it(`refuses ${args.join(' ')} with exit 2`, async () => {
      const folder = mkdtempSync(join(tmpdir(), 'bulkhead-audit-usage-'));
      try {
        expect(await bulkhead(args, folder)).toEqual({ code: 2, stdout: '', stderr: `bulkhead: ${message} (see \`bulkhead help audit\`)\n` });
        expect(readdirSync(folder)).toEqual([]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  }
});

describe('receipts anyone can verify', () => {
  let ws: TempWorkspace;
  let elsewhere: string;
  let server: ServerProcess | undefined;
  let receipt: Record<string, unknown>;
  let publicKeyFile: string;

  beforeAll(async () => {
    ws = tempWorkspace({ 'a.txt': 'x\n', '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n', '.bulkhead/audit.yaml': 'receipts: true\n' });
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    await server.client.callTool({ name: 'fs__read_file', arguments: { path: 'a.txt' } });
    const result = await server.client.callTool({ name: 'fs__read_file', arguments: { path: 'a.txt' } });
    const failed = await server.client.callTool({ name: 'fs__read_file', arguments: { path: 'missing.txt' } });
    expect(failed.isError).toBe(true);
    expect(failed._meta?.['bulkhead/receipt']).toBeUndefined();
    receipt = result._meta?.['bulkhead/receipt'] as Record<string, unknown>;
    await server.close();
    server = undefined;
    elsewhere = mkdtempSync(join(tmpdir(), 'bulkhead-receipt-'));
    publicKeyFile = join(elsewhere, 'receipt.pub');
    cpSync(ws.path('.bulkhead/keys/receipt.pub'), publicKeyFile);
  });
  afterAll(async () => {
    await server?.close();
    ws?.cleanup();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  const save = (name: string, value: unknown) => {
    const file = join(elsewhere, name);
    writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };
  const verifyElsewhere = (file: string) => bulkhead(['audit', 'verify', '--receipt', file, '--key', publicKeyFile], elsewhere);

  it('returns a version 2 Ed25519 receipt for the entry of the call', () => {
    expect(receipt).toMatchObject({ v: 2, alg: 'Ed25519', server: 'gateway', tool: 'fs:read_file', chain: 'gateway.jsonl', seq: 2 });
    const entry = JSON.parse(readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8').split('\n')[1]!) as { hash: string; time: string };
    expect(receipt).toMatchObject({ entry_hash: entry.hash, time: entry.time });
  });

  it('prints the public key and its fingerprint with bulkhead audit key', async () => {
    const shown = await bulkhead(['audit', 'key', '--root', ws.root]);
    const pem = readFileSync(publicKeyFile, 'utf8');
    const raw = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64').subarray(-32).toString('base64');
    expect(shown).toEqual({ code: 0, stdout: `${pem}fingerprint: ${receipt['key']}\nraw: ${raw}\nfile: ${ws.path('.bulkhead/keys/receipt.pub')}\n`, stderr: '' });
    expect(await bulkhead(['audit', 'key'], elsewhere)).toEqual({ code: 1, stdout: '', stderr: `bulkhead: no receipt key in ${join(elsewhere, '.bulkhead', 'keys')} yet: it is made with the first receipt (audit.yaml receipts: true)\n` });
  });

  it('verifies a saved receipt in an empty folder with only the public key, and against the log where it was issued', async () => {
    const file = save('receipt.json', receipt);
    const ok = `OK receipt ${file}: fs:read_file (gateway), entry 2 of gateway.jsonl at ${receipt['time']}, signed by ${receipt['key']}\n`;
    expect(await verifyElsewhere(file)).toEqual({ code: 0, stdout: `${ok}SKIP log: no audit folder at ${join(elsewhere, '.bulkhead', 'audit')}, so the entry was not looked up\n`, stderr: '' });
    expect(readdirSync(elsewhere).sort()).toEqual(['receipt.json', 'receipt.pub']);
    // Raw base64 of the 32 key bytes works as well as PEM; so does the whole _meta object.
    const rawKey = save('raw.pub', (await bulkhead(['audit', 'key', '--root', ws.root])).stdout.match(/^raw: (.*)$/m)![1]!);
    const meta = save('meta.json', { 'bulkhead/receipt': receipt });
    expect((await bulkhead(['audit', 'verify', '--receipt', meta, '--key', rawKey], elsewhere)).code).toBe(0);
    const gatewayLog = ws.path('.bulkhead/audit/gateway.jsonl');
    expect(await bulkhead(['audit', 'verify', '--receipt', file, '--root', ws.root])).toEqual({ code: 0, stdout: `${ok}OK log: entry 2 of ${gatewayLog} is the receipt's entry\n`, stderr: '' });
  });

  const hasTools = ['openssl', 'jq', 'base64'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);
  it.skipIf(!hasTools)('verifies with the OpenSSL recipe of docs/security.md, no Bulkhead code involved', () => {
    const file = save('receipt.json', receipt);
    const recipe = [
      `jq -cS 'del(.signature)' ${file} | tr -d '\\n' > signed.bin`,
      `jq -r .signature ${file} | base64 -d > signature.bin`,
      `openssl pkeyutl -verify -pubin -inkey ${publicKeyFile} -rawin -in signed.bin -sigfile signature.bin`,
      `openssl pkey -pubin -in ${publicKeyFile} -outform DER | sha256sum`,
    ].join(' && ');
    const run = spawnSync('sh', ['-c', recipe], { cwd: elsewhere, encoding: 'utf8' });
    expect(run.stdout).toBe(`Signature Verified Successfully\n${String(receipt['key']).slice('sha256:'.length)}  -\n`);
    writeFileSync(file, JSON.stringify({ ...receipt, seq: 1 }));
    expect(spawnSync('sh', ['-c', recipe], { cwd: elsewhere, encoding: 'utf8' }).stdout).toMatch(/^Signature Verification Failure\n/);
  });

  it('refuses a receipt with any field changed', async () => {
    const file = save('receipt.json', receipt);
    for (const [field, value] of Object.entries({ server: 'fs', tool: 'fs:grep', chain: 'gateway.1.jsonl', seq: 1, time: '2026-01-01T00:00:00.000Z', entry_hash: 'a'.repeat(64) })) {
      const tampered = save(`tampered-${field}.json`, { ...receipt, [field]: value });
      expect(await verifyElsewhere(tampered), field).toEqual({ code: 1, stdout: `FAIL receipt ${tampered}: the signature does not match its fields (the receipt was altered, or signed by another key)\n`, stderr: '' });
    }
    const signature = Buffer.from(String(receipt['signature']), 'base64');
    signature.writeUInt8(signature.readUInt8(0) ^ 1, 0);
    const flipped = save('flipped.json', { ...receipt, signature: signature.toString('base64') });
    expect((await verifyElsewhere(flipped)).stdout).toBe(`FAIL receipt ${flipped}: the signature does not match its fields (the receipt was altered, or signed by another key)\n`);
    const otherKey = save('other-key-field.json', { ...receipt, key: `sha256:${'b'.repeat(64)}` });
    expect((await verifyElsewhere(otherKey)).stdout).toBe(`FAIL receipt ${otherKey}: signed by key sha256:${'b'.repeat(64)}, not by the key of ${publicKeyFile} (${receipt['key']})\n`);
    const extra = save('extra.json', { ...receipt, note: 'x' });
    expect((await verifyElsewhere(extra)).stdout).toBe(`FAIL receipt ${extra}: not a bulkhead receipt (Unrecognized key: "note")\n`);
    const noSeq = save('no-seq.json', { ...receipt, seq: undefined });
    expect((await verifyElsewhere(noSeq)).stdout).toBe(`FAIL receipt ${noSeq}: not a bulkhead receipt (seq: Invalid input: expected number, received undefined)\n`);
    const garbage = save('garbage.json', '{"v":2,');
    expect((await verifyElsewhere(garbage)).stdout).toMatch(new RegExp(`^FAIL receipt ${garbage.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: not JSON \\(.+\\)\\n$`));
    expect((await verifyElsewhere(file)).code).toBe(0);
  });

  it('refuses a receipt signed with another key, whether it names that key or ours', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const { signature: _signature, ...fields } = receipt;
    const forge = (key: string) => {
      const body = { ...fields, key };
      return { ...body, signature: sign(null, Buffer.from(canonicalJson(body)), privateKey).toString('base64') };
    };
    const named = save('named.json', forge(keyFingerprint(publicKey)));
    expect(await verifyElsewhere(named)).toEqual({ code: 1, stdout: `FAIL receipt ${named}: signed by key ${keyFingerprint(publicKey)}, not by the key of ${publicKeyFile} (${receipt['key']})\n`, stderr: '' });
    const posing = save('posing.json', forge(String(receipt['key'])));
    expect(await verifyElsewhere(posing)).toEqual({ code: 1, stdout: `FAIL receipt ${posing}: the signature does not match its fields (the receipt was altered, or signed by another key)\n`, stderr: '' });
  });

  it('explains a version 1 (HMAC) receipt', async () => {
    const v1 = save('v1.json', { v: 1, server: 'fs', tool: 'fs:read_file', seq: 1, time: '2026-01-01T00:00:00.000Z', entry_hash: 'a'.repeat(64), signature: 'b'.repeat(64) });
    expect(await verifyElsewhere(v1)).toEqual({
      code: 1,
      stdout: `FAIL receipt ${v1}: a version 1 receipt (HMAC-SHA256, which only the secret key of the folder that issued it can check); receipts are version 2 now (Ed25519): the call has to be made again for one\n`,
      stderr: '',
    });
  });

  it('signs every head record with the receipt key, so a cut with a rewritten head fails against the published key', async () => {
    const gatewayLog = ws.path('.bulkhead/audit/gateway.jsonl');
    const fsLog = ws.path('.bulkhead/audit/fs.jsonl');
    const intact = `OK ${fsLog}: 3 entries, chain intact\nOK ${gatewayLog}: 3 entries, chain intact\n`;
    expect(await bulkhead(['audit', 'verify', '--root', ws.root])).toEqual({ code: 0, stdout: intact, stderr: '' });
    expect(await bulkhead(['audit', 'verify', '--root', ws.root, '--key', publicKeyFile])).toEqual({ code: 0, stdout: intact, stderr: '' });
    const noKey = join(elsewhere, 'nosuch.pub');
    expect(await bulkhead(['audit', 'verify', '--root', ws.root, '--key', noKey])).toEqual({ code: 1, stdout: `FAIL ${noKey} does not exist\n`, stderr: '' });
    const notKey = save('not-a-key.pub', 'hello');
    expect(await bulkhead(['audit', 'verify', '--root', ws.root, '--key', notKey])).toMatchObject({ code: 1, stdout: expect.stringMatching(new RegExp(`^FAIL ${notKey.replace(/[.*+?^$\{\}()|[\]\\/]/g, '\\$&')} holds no Ed25519 public key \\(.+\\)\\n$`)) });
    const head = JSON.parse(readFileSync(`${gatewayLog}.head`, 'utf8')) as { seq: number; hash: string; size: number; sig: string };
    expect(head.sig).toMatch(/^[A-Za-z0-9+/]{86}==$/);
    const original = readFileSync(gatewayLog);
    const originalHead = readFileSync(`${gatewayLog}.head`);
    try {
      // Cut to the first entry, the head rewritten to match: without the key, unsigned or with the old signature.
      const first = readFileSync(gatewayLog, 'utf8').split('\n')[0]!;
      writeFileSync(gatewayLog, `${first}\n`);
      const cutHead = { v: 1, seq: 1, hash: (JSON.parse(first) as { hash: string }).hash, size: Buffer.byteLength(first) + 1 };
      writeFileSync(`${gatewayLog}.head`, JSON.stringify(cutHead));
      const unsigned = `FAIL ${gatewayLog}: its head record gateway.jsonl.head is not signed (with receipts: true in audit.yaml every head record is)\n`;
      expect(await bulkhead(['audit', 'verify', '--root', ws.root, '--key', publicKeyFile])).toEqual({ code: 1, stdout: `OK ${fsLog}: 3 entries, chain intact\n${unsigned}`, stderr: '' });
      // Without a key from outside the folder, an unsigned head that agrees passes: see docs/security.md.
      expect((await bulkhead(['audit', 'verify', '--root', ws.root])).code).toBe(0);
      writeFileSync(`${gatewayLog}.head`, JSON.stringify({ ...cutHead, sig: head.sig }));
      const forged = `FAIL ${gatewayLog}: its head record gateway.jsonl.head has a signature the receipt key did not make (the head was rewritten, or signed by another key)\n`;
      expect(await bulkhead(['audit', 'verify', '--root', ws.root])).toEqual({ code: 1, stdout: `OK ${fsLog}: 3 entries, chain intact\n${forged}`, stderr: '' });
      expect(await bulkhead(['audit', 'verify', '--root', ws.root, '--key', publicKeyFile])).toEqual({ code: 1, stdout: `OK ${fsLog}: 3 entries, chain intact\n${forged}`, stderr: '' });
    } finally {
      writeFileSync(gatewayLog, original);
      writeFileSync(`${gatewayLog}.head`, originalHead);
    }
  });

  it('says where no key is to be found, and finds a receipt whose entry was cut from the log', async () => {
    const file = save('receipt.json', receipt);
    expect(await bulkhead(['audit', 'verify', '--receipt', file], elsewhere)).toEqual({
      code: 1,
      stdout: `FAIL receipt ${file}: no public key at ${join(elsewhere, '.bulkhead', 'keys', 'receipt.pub')}: pass --key PUBFILE (what \`bulkhead audit key\` printed where the receipt was issued)\n`,
      stderr: '',
    });
    const gatewayLog = ws.path('.bulkhead/audit/gateway.jsonl');
    const kept = readFileSync(gatewayLog, 'utf8').split('\n').slice(0, 1);
    writeFileSync(gatewayLog, `${kept.join('\n')}\n`);
    const checked = await bulkhead(['audit', 'verify', '--receipt', file, '--root', ws.root]);
    expect(checked.code).toBe(1);
    expect(checked.stdout.split('\n')[1]).toBe(`FAIL log: ${gatewayLog} ends at seq 1, before the receipt's entry at seq 2 (lines were removed from the end)`);
  });
});
