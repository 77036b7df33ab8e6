import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openConfinedFile, Roots, SECRET_GLOBS, verifyAuditFile, type AuditEntry } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { startFs, type FsHarness } from './helpers.js';

describe('bad input to read_file: each refused exactly, and the server keeps serving', () => {
  let fs: FsHarness;
  let root: string;
  let evil: string;
  let outside: string;
  beforeAll(async () => {
    fs = await startFs({
      'a.txt': 'hello\n',
      '.env': 'SECRET=1\n',
      'id_rsa': '-----BEGIN OPENSSH PRIVATE KEY-----\n',
      'x.pem': '-----BEGIN CERTIFICATE-----\n',
      '.ssh/config': 'Host *\n',
      'sub/inside.txt': 'inside\n',
      '．．/secret': 'a folder literally named with two fullwidth dots\n',
    });
    root = fs.ws.root;
    // Siblings of the root: one whose name starts with the root's name, one plainly outside.
    evil = `${root}_evil`;
    outside = `${root}_out`;
    mkdirSync(evil);
    writeFileSync(join(evil, 'secret.txt'), 'evil secret\n');
    mkdirSync(outside);
    writeFileSync(join(outside, 'o.txt'), 'outside\n');
    symlinkSync(join(outside, 'o.txt'), fs.ws.path('file-link'));
    symlinkSync(outside, fs.ws.path('dir-link'));
    symlinkSync(fs.ws.path('nope.txt'), fs.ws.path('dangling'));
    symlinkSync(join(outside, 'gone.txt'), fs.ws.path('dangling-out'));
    symlinkSync('.env', fs.ws.path('notes.txt'));
    const fd = openSync(fs.ws.path('huge.bin'), 'w');
    ftruncateSync(fd, 5 * 1024 ** 3); // sparse
    closeSync(fd);
  });
  afterAll(async () => {
    await fs.close();
    rmSync(evil, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect(await fs.read('a.txt')).toMatchObject({ isError: false, text: '     1\thello' });
  });

  const outsideRoots = (input: string) => `${input} is outside the allowed roots (${root}); give a path inside them`;
  const refused = async (args: Record<string, unknown>, text: string) => {
    expect(await fs.call('read_file', args)).toEqual({ isError: true, text, content: [{ type: 'text', text }] });
  };

  it('refuses .. out of the root', async () => {
    await refused({ path: '../x' }, outsideRoots('../x'));
    await refused({ path: 'sub/../../x' }, outsideRoots('sub/../../x'));
  });

  it('refuses an absolute path outside the root', async () => {
    await refused({ path: '/etc/passwd' }, outsideRoots('/etc/passwd'));
  });

  it('does not expand ~', async () => {
    const text = `"~" is not expanded: give a path relative to the root (${root}) or an absolute path inside it`;
    await refused({ path: '~/x' }, text);
    await refused({ path: '~' }, text);
    await refused({ path: '~root/.bashrc' }, text);
  });

  it('refuses a sibling folder whose name starts with the root name', async () => {
    const relative = `../${basename(evil)}/secret.txt`;
    await refused({ path: relative }, outsideRoots(relative));
    await refused({ path: join(evil, 'secret.txt') }, outsideRoots(join(evil, 'secret.txt')));
  });

  it('refuses a symlinked file that points outside', async () => {
    await refused({ path: 'file-link' }, `file-link resolves through a symlink to ${outside}/o.txt, which is outside the allowed roots (${root})`);
  });

  it('refuses a file read through a symlinked folder that points outside', async () => {
    await refused({ path: 'dir-link/o.txt' }, `dir-link/o.txt resolves through a symlink to ${outside}/o.txt, which is outside the allowed roots (${root})`);
  });

  it('refuses a dangling symlink rather than following it', async () => {
    await refused({ path: 'dangling' }, `${root}/dangling is a dangling symlink (-> ${root}/nope.txt); it is refused rather than followed`);
    await refused({ path: 'dangling-out' }, `${root}/dangling-out is a dangling symlink (-> ${outside}/gone.txt); it is refused rather than followed`);
  });

  it('refuses NUL bytes in a path', async () => {
    await refused({ path: 'a.txt\0.png' }, 'path contains a NUL byte; remove it');
  });

  it('refuses a 10,000-character path and an over-long name', async () => {
    await refused({ path: 'a'.repeat(10_000) }, 'path is 10000 characters long; the limit is 4096');
    await refused({ path: `sub/${'n'.repeat(300)}` }, 'a path component is 300 bytes long; the limit is 255');
  });

  it('treats Unicode look-alikes of . and / as literal names that do not escape', async () => {
    await refused({ path: '．．/x' }, `${root}/．．/x does not exist`); // U+FF0E fullwidth full stops
    await refused({ path: '..／x' }, `${root}/..／x does not exist`); // U+FF0F fullwidth solidus: one name, not a separator
    await refused({ path: '\u2024\u2024/x' }, `${root}/\u2024\u2024/x does not exist`); // U+2024 one dot leader
    await refused({ path: '．．/．．/secret.txt' }, `${root}/．．/．．/secret.txt does not exist`);
    // The look-alike is an ordinary folder name inside the root:
    expect((await fs.read('．．/secret')).text).toBe('     1\ta folder literally named with two fullwidth dots');
  });

  it('refuses secret files by the deny_read globs', async () => {
    const secret = (path: string, glob: string) => `${path} is a protected secret (matches \`${glob}\` in deny_read of fs_policy.yaml); it cannot be read`;
    await refused({ path: '.env' }, secret('.env', '.env*'));
    await refused({ path: 'id_rsa' }, secret('id_rsa', 'id_rsa*'));
    await refused({ path: 'x.pem' }, secret('x.pem', '*.pem'));
    await refused({ path: '.ssh/config' }, secret('.ssh/config', '.ssh/'));
    await refused({ path: fs.ws.path('.env') }, secret(fs.ws.path('.env'), '.env*'));
    // A harmless-looking symlink to a secret is judged by what it points at.
    await refused({ path: 'notes.txt' }, secret('notes.txt', '.env*'));
  });

  it('refuses arguments of the wrong type, missing or unknown arguments', async () => {
    await refused({ path: 5 }, 'Invalid arguments for fs:read_file: `path`: Invalid input: expected string, received number');
    await refused({}, 'Invalid arguments for fs:read_file: `path` is required (string)');
    await refused({ path: 'a.txt', offset: 'x' }, 'Invalid arguments for fs:read_file: `offset`: Invalid input: expected number, received string');
    await refused({ path: 'a.txt', offset: 0 }, 'Invalid arguments for fs:read_file: `offset`: offset counts from 1; use a negative number to count from the end');
    await refused({ path: 'a.txt', offset: 1.5 }, 'Invalid arguments for fs:read_file: `offset`: Invalid input: expected int, received number');
    await refused({ path: 'a.txt', limit: 0 }, 'Invalid arguments for fs:read_file: `limit`: Too small: expected number to be >=1');
    await refused({ path: 'a.txt', bogus: 1 }, 'Invalid arguments for fs:read_file: unknown argument `bogus`');
    await refused({ path: 'a.txt', bogus: 1, extra: 2 }, 'Invalid arguments for fs:read_file: unknown arguments `bogus`, `extra`');
    await refused({ path: '' }, 'path is empty: give a path relative to the root, or "." for the root itself');
  });

  it('gives a 5 GB sparse file a binary marker', async () => {
    expect(await fs.read('huge.bin')).toMatchObject({
      isError: false,
      text: '[binary file huge.bin: 5.0 GiB, detected type: unknown binary (contains NUL bytes); its bytes are not shown]',
    });
  });

  it('refuses the same bad input in grep, glob_files and list_files', async () => {
    expect(await fs.call('grep', { pattern: 'x', path: '../' })).toMatchObject({ isError: true, text: outsideRoots('../') });
    expect(await fs.call('grep', { pattern: 'x', path: 'dir-link' })).toMatchObject({
      isError: true,
      text: `dir-link resolves through a symlink to ${outside}, which is outside the allowed roots (${root})`,
    });
    expect(await fs.call('grep', { pattern: 1 })).toMatchObject({ isError: true, text: 'Invalid arguments for fs:grep: `pattern`: Invalid input: expected string, received number' });
    expect(await fs.call('grep', { pattern: 'x', output_mode: 'lines' })).toMatchObject({
      isError: true,
      text: 'Invalid arguments for fs:grep: `output_mode`: Invalid option: expected one of "content"|"files_with_matches"|"count"',
    });
    expect(await fs.call('glob_files', {})).toMatchObject({ isError: true, text: 'Invalid arguments for fs:glob_files: `pattern` is required (string)' });
    expect(await fs.call('glob_files', { pattern: '*', path: `../${basename(evil)}` })).toMatchObject({ isError: true, text: outsideRoots(`../${basename(evil)}`) });
    expect(await fs.call('list_files', { path: '~' })).toMatchObject({
      isError: true,
      text: `"~" is not expanded: give a path relative to the root (${root}) or an absolute path inside it`,
    });
    expect(await fs.call('list_files', { path: 'dir\0' })).toMatchObject({ isError: true, text: 'path contains a NUL byte; remove it' });
    expect(await fs.call('list_files', { depth: 'deep' })).toMatchObject({
      isError: true,
      text: 'Invalid arguments for fs:list_files: `depth`: Invalid input: expected number, received string',
    });
  });
});

describe('a symlink swapped between the check and the read', () => {
  let ws: TempWorkspace;
  let outside: TempWorkspace;
  let roots: Roots;
  beforeAll(() => {
    ws = tempWorkspace({ 'inside.txt': 'inside\n', 'sub/f.txt': 'sub inside\n' });
    outside = tempWorkspace({ 'o.txt': 'outside\n', 'f.txt': 'outside f\n' });
    roots = new Roots([ws.root], { controlDir: ws.path('.bulkhead'), denyRead: SECRET_GLOBS });
  });
  afterAll(() => {
    ws.cleanup();
    outside.cleanup();
  });

  it('reads the target that was checked when a symlink is re-pointed outside afterwards', async () => {
    symlinkSync('inside.txt', ws.path('link'));
    const confined = await roots.confine('link', 'read');
    expect(confined).toBe(ws.path('inside.txt'));
    rmSync(ws.path('link'));
    symlinkSync(outside.path('o.txt'), ws.path('link'));
    const opened = await openConfinedFile(roots, confined, 'link');
    try {
      expect(opened.real).toBe(ws.path('inside.txt'));
      expect((await opened.handle.readFile()).toString()).toBe('inside\n');
    } finally {
      await opened.handle.close();
    }
  });

  it('refuses when the checked file itself is swapped for a symlink to outside', async () => {
    ws.write('swapped.txt', 'inside\n');
    const confined = await roots.confine('swapped.txt', 'read');
    rmSync(ws.path('swapped.txt'));
    symlinkSync(outside.path('o.txt'), ws.path('swapped.txt'));
    await expect(openConfinedFile(roots, confined, 'swapped.txt')).rejects.toMatchObject({
      name: 'ToolError',
      code: 'outside_roots',
      message: 'swapped.txt changed into a symlink while it was being opened; nothing was read',
    });
  });

  it('refuses when a parent folder is swapped for a symlink to outside', async () => {
    const confined = await roots.confine('sub/f.txt', 'read');
    rmSync(ws.path('sub'), { recursive: true });
    symlinkSync(outside.root, ws.path('sub'));
    await expect(openConfinedFile(roots, confined, 'sub/f.txt')).rejects.toMatchObject({
      name: 'ToolError',
      code: 'outside_roots',
      message: 'sub/f.txt changed while it was being opened and now points outside the allowed roots; nothing was read',
    });
  });

  it('refuses when a file is swapped for a folder after the check', async () => {
    ws.write('plain.txt', 'plain\n');
    const confined = await roots.confine('plain.txt', 'read');
    rmSync(ws.path('plain.txt'));
    mkdirSync(ws.path('plain.txt'));
    await expect(openConfinedFile(roots, confined, 'plain.txt')).rejects.toMatchObject({
      name: 'ToolError',
      message: 'plain.txt is a folder; only regular files can be read (use list_files for folders)',
    });
  });
});

describe('disabled tools and servers', () => {
  it('does not list or run a tool its policy disables', async () => {
    const fs = await startFs({ 'a.txt': 'x\n' }, { policy: { tools: { grep: { enabled: false } } } });
    try {
      expect((await fs.client.listTools()).tools.map((tool) => tool.name)).toEqual(['read_file', 'glob_files', 'list_files']);
      await expect(fs.client.callTool({ name: 'grep', arguments: { pattern: 'x' } })).rejects.toThrow('MCP error -32602: Unknown tool grep. Available tools: read_file, glob_files, list_files.');
      expect(await fs.read('a.txt')).toMatchObject({ isError: false, text: '     1\tx' });
    } finally {
      await fs.close();
    }
  });

  it('registers no tool at all when the server is disabled', async () => {
    const fs = await startFs({ 'a.txt': 'x\n' }, { policy: { enabled: false } });
    try {
      expect((await fs.client.listTools()).tools).toEqual([]);
      await expect(fs.read('a.txt')).rejects.toThrow('MCP error -32602: Unknown tool read_file. Available tools: none (this server is disabled by its policy).');
    } finally {
      await fs.close();
    }
  });
});

describe('audit', () => {
  it('writes one verifiable line per call, with denials and errors', async () => {
    const fs = await startFs({ 'a.txt': 'hello\n' }, { permissions: 'autonomy: supervised\ndeny:\n  - fs:grep\n' });
    try {
      const calls: [string, Record<string, unknown>][] = [
        ['read_file', { path: 'a.txt' }],
        ['read_file', { path: '../escape' }],
        ['grep', { pattern: 'hello' }],
        ['list_files', {}],
        ['read_file', { path: 7 }],
        ['glob_files', { pattern: '*.txt' }],
      ];
      const results = [];
      for (const [name, args] of calls) results.push(await fs.call(name, args));
      const permissionsFile = join(fs.controlDir, 'permissions.yaml');
      expect(results[2]).toMatchObject({
        isError: true,
        text: `Permission denied: fs:grep is denied by ${permissionsFile} line 3 (\`fs:grep\`). Nothing was run. To allow it: remove or narrow that deny entry.`,
      });

      const file = join(fs.controlDir, 'audit', 'fs.jsonl');
      expect(verifyAuditFile(file)).toEqual({ ok: true, entries: calls.length });
      const entries = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as AuditEntry);
      expect(entries.map((entry) => [entry.seq, entry.tool, entry.decision, entry.outcome])).toEqual([
        [1, 'fs:read_file', 'allow', 'ok'],
        [2, 'fs:read_file', 'allow', 'error'],
        [3, 'fs:grep', 'deny', 'denied'],
        [4, 'fs:list_files', 'allow', 'ok'],
        [5, 'fs:read_file', 'none', 'error'],
        [6, 'fs:glob_files', 'allow', 'ok'],
      ]);
      expect(entries.map((entry) => entry.args)).toEqual(calls.map(([, args]) => args));
      expect(entries[1]!.error).toBe(`../escape is outside the allowed roots (${fs.ws.root}); give a path inside them`);
      expect(entries[2]!.error).toBe(results[2]!.text);
      expect(entries[0]!.bytes_out).toBe(Buffer.byteLength('     1\thello'));
      expect(entries.every((entry) => entry.server === 'fs' && entry.caller === 'bulkhead-test/1.0.0')).toBe(true);

      // The verifier notices an edited line, so the check above can fail.
      const lines = readFileSync(file, 'utf8').split('\n');
      lines[1] = lines[1]!.replace('"outcome":"error"', '"outcome":"ok"');
      writeFileSync(file, lines.join('\n'));
      expect(verifyAuditFile(file)).toMatchObject({ ok: false, line: 2, problem: 'content does not match its hash (the line was edited)' });
    } finally {
      await fs.close();
    }
  });
});
