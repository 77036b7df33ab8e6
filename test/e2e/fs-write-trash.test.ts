import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, text } from './helpers.js';

const FS_WRITE_CLI = fileURLToPath(new URL('../../servers/fs-write/dist/cli.js', import.meta.url));
const run = promisify(execFile);
const ALLOW = { '.bulkhead/permissions.yaml': 'allow:\n  - fs_write\n' };
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 255, 254]);

let ws: TempWorkspace;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

async function bulkhead(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [GATEWAY_CLI, ...args, '--root', ws.root]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function deleteOverStdio(args: Record<string, unknown>): Promise<string> {
  const result = await server!.client.callTool({ name: 'delete_path', arguments: args });
  expect(result.isError).toBeFalsy();
  const id = / in the trash as (\S+?)\./.exec(text(result))?.[1];
  if (!id) throw new Error(`no trash id in ${text(result)}`);
  return id;
}

const trashSlots = () => (existsSync(ws.path('.bulkhead/trash')) ? readdirSync(ws.path('.bulkhead/trash')) : []);

describe('delete_path over stdio, then bulkhead trash', () => {
  it('lists what was deleted and restores it byte-identical, never over an existing path', async () => {
    ws = tempWorkspace({ ...ALLOW, 'assets/logo.png': BINARY, 'old/notes.md': '# old\n', 'old/deep/x.txt': 'x\n' });
    symlinkSync('../assets/logo.png', ws.path('old/logo-link'));
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const logo = await deleteOverStdio({ path: 'assets/logo.png' });
    const old = await deleteOverStdio({ path: 'old', recursive: true });
    expect(existsSync(ws.path('assets/logo.png'))).toBe(false);
    expect(existsSync(ws.path('old'))).toBe(false);

    const listed = await bulkhead('trash', 'list');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`^${old}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  folder +26 B  old$`));
    expect(lines[1]).toMatch(new RegExp(`^${logo}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  file +14 B  assets/logo.png$`));
    expect(lines[2]).toBe(`2 entries, 40 B, in ${ws.path('.bulkhead/trash')} (kept 7 days, at most 1.0 GiB; fs_write_policy.yaml trash:).`);
    expect(lines[3]).toBe('Restore one with: bulkhead trash restore ID [--to PATH]');

    expect(await bulkhead('trash', 'restore', logo)).toEqual({ code: 0, stdout: `Restored ${logo} to ${ws.path('assets/logo.png')} (file, 14 B).\n`, stderr: '' });
    expect(readFileSync(ws.path('assets/logo.png')).equals(BINARY)).toBe(true);
    expect(await bulkhead('trash', 'restore', logo)).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: there is no ${logo} in the trash ${ws.path('.bulkhead/trash')} (bulkhead trash list shows what there is)\n`,
    });

    writeFileSync(ws.path('old'), 'a file took its place\n');
    expect(await bulkhead('trash', 'restore', old)).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: cannot restore ${old}: old exists now (a file); nothing was restored. Move it away first, or restore to another path.\n`,
    });
    expect(readFileSync(ws.path('old'), 'utf8')).toBe('a file took its place\n');
    expect(await bulkhead('trash', 'restore', old, '--to', ws.path('restored/old'))).toEqual({
      code: 0,
      stdout: `Restored ${old} to ${ws.path('restored/old')} (folder: 4 entries, 26 B).\n`,
      stderr: '',
    });
    expect(readFileSync(ws.path('restored/old/deep/x.txt'), 'utf8')).toBe('x\n');
    expect(readlinkSync(ws.path('restored/old/logo-link'))).toBe('../assets/logo.png');
    expect(await bulkhead('trash', 'list')).toEqual({ code: 0, stdout: `The trash is empty (${ws.path('.bulkhead/trash')}).\n`, stderr: '' });
  });

  it('refuses to restore outside the roots or into the protected set', async () => {
    ws = tempWorkspace({ ...ALLOW, 'a.txt': 'a\n' });
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const id = await deleteOverStdio({ path: 'a.txt' });
    expect(await bulkhead('trash', 'restore', id, '--to', '/tmp/escaped.txt')).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: /tmp/escaped.txt is outside the allowed roots (${ws.root}); give a path inside them\n`,
    });
    expect(await bulkhead('trash', 'restore', id, '--to', ws.path('.github/workflows/a.yml'))).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: ${ws.path('.github/workflows/a.yml')} is in the protected set (\`.github/\`); tools never write there\n`,
    });
    expect(await bulkhead('trash', 'restore', '../../etc')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'bulkhead: ../../etc is not a trash id (they look like 20260512-143012-3fa9c1d2; bulkhead trash list shows them)\n',
    });
    expect(existsSync('/tmp/escaped.txt')).toBe(false);
  });

  it('purges by retention: from the CLI, after a delete, and when the server starts', async () => {
    ws = tempWorkspace({ ...ALLOW, 'a.txt': 'aaaa\n', 'b.txt': 'bb\n', 'c.txt': 'c\n' });
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const a = await deleteOverStdio({ path: 'a.txt' });
    expect(await bulkhead('trash', 'purge')).toEqual({ code: 0, stdout: 'Nothing to purge; the trash keeps 1 entry (5 B).\n', stderr: '' });
    writeFileSync(ws.path('.bulkhead/fs_write_policy.yaml'), 'trash:\n  retention_days: 0\n');
    expect(await bulkhead('trash', 'purge')).toEqual({ code: 0, stdout: 'Purged 1 entry (5 B); the trash keeps 0 entries (0 B).\n', stderr: '' });
    expect(trashSlots()).not.toContain(a);

    await server.close();
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const b = await deleteOverStdio({ path: 'b.txt' });
    const result = await server.client.callTool({ name: 'delete_path', arguments: { path: 'c.txt' } });
    expect(text(result).split('\n')[1]).toBe('The trash purged 1 older entry (3 B) under its retention policy.');
    expect(trashSlots()).not.toContain(b);
    expect(trashSlots()).toHaveLength(1);

    await server.close();
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    await expect.poll(trashSlots).toEqual([]);
  });
});

describe('fs_write behind the gateway', () => {
  it('starts from bulkhead.yaml and its tools are found with tool_search', async () => {
    ws = tempWorkspace({ ...ALLOW, '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n  fs_write: {}\n', 'a.txt': 'x\n' });
    const { stdout } = await bulkhead('tools');
    for (const tool of ['create_directory', 'delete_path', 'edit_file', 'move_path', 'multi_edit', 'write_file']) expect(stdout).toContain(`  fs_write__${tool} — `);
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const result = await server.client.callTool({ name: 'call_tool', arguments: { name: 'fs_write__move_path', arguments: { source: 'a.txt', destination: 'b/a.txt' } } });
    expect(text(result)).toBe('Moved a.txt to b/a.txt (file, 2 B)');
    expect(lstatSync(ws.path('b/a.txt')).isFile()).toBe(true);
  });
});

/** The trash id a reply gives for the version it replaced. */
function keptId(reply: string): string {
  const id = /The previous version \([^)]+\) is in the trash as (\S+);/.exec(reply)?.[1];
  if (!id) throw new Error(`no kept version in: ${reply}`);
  return id;
}

describe('a version replaced by an edit comes back with bulkhead trash restore', () => {
  it('over the fs_write server: list shows each replaced version, restore --to brings any one back, never over the file', async () => {
    ws = tempWorkspace({ ...ALLOW, 'src/app.ts': 'export const v = 0;\n' });
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const call = async (name: string, args: Record<string, unknown>) => text(await server!.client.callTool({ name, arguments: args }));
    const first = keptId(await call('edit_file', { path: 'src/app.ts', old_string: 'v = 0', new_string: 'v = 1' }));
    const second = keptId(await call('write_file', { path: 'src/app.ts', content: 'export const v = 2;\n' }));
    const third = keptId(await call('multi_edit', { path: 'src/app.ts', edits: [{ old_string: 'v = 2', new_string: 'v = 3' }] }));

    const listed = await bulkhead('trash', 'list');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual(
      [third, second, first].map((id) => expect.stringMatching(new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  file +20 B  src/app\\.ts \\(replaced version\\)$`))),
    );
    expect(lines[3]).toBe(`3 entries, 60 B, in ${ws.path('.bulkhead/trash')} (kept 7 days, at most 1.0 GiB; fs_write_policy.yaml trash:).`);

    // The file exists, so restore refuses to overwrite it; --to puts the version beside it.
    expect(await bulkhead('trash', 'restore', first)).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: cannot restore ${first}: src/app.ts exists now (a file); nothing was restored. Move it away first, or restore to another path.\n`,
    });
    expect(await bulkhead('trash', 'restore', first, '--to', ws.path('src/app.v0.ts'))).toEqual({ code: 0, stdout: `Restored ${first} to ${ws.path('src/app.v0.ts')} (file, 20 B).\n`, stderr: '' });
    expect(readFileSync(ws.path('src/app.v0.ts'), 'utf8')).toBe('export const v = 0;\n');
    expect(readFileSync(ws.path('src/app.ts'), 'utf8')).toBe('export const v = 3;\n');
    // The control-plane folder stays out of reach: a version cannot be restored into it.
    expect((await bulkhead('trash', 'restore', second, '--to', ws.path('.bulkhead/permissions.yaml.old'))).code).toBe(1);
    expect((await bulkhead('trash', 'list')).stdout.split('\n')[0]).toMatch(new RegExp(`^${third} `));
  });

  it('through the gateway: an edit with call_tool keeps the old version for the CLI', async () => {
    ws = tempWorkspace({ ...ALLOW, '.bulkhead/bulkhead.yaml': 'servers:\n  fs_write: {}\n', 'notes.md': '# old\n' });
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const reply = text(await server.client.callTool({ name: 'call_tool', arguments: { name: 'fs_write__edit_file', arguments: { path: 'notes.md', old_string: 'old', new_string: 'new' } } }));
    const id = keptId(reply);
    expect(reply).toContain(`\`bulkhead trash restore ${id} --to PATH\` brings it back`);
    expect((await bulkhead('trash', 'list')).stdout.split('\n')[0]).toMatch(new RegExp(`^${id}  .*  file +6 B  notes\\.md \\(replaced version\\)$`));
    await server.close();
    server = undefined;
    expect(await bulkhead('trash', 'restore', id, '--to', ws.path('notes.old.md'))).toEqual({ code: 0, stdout: `Restored ${id} to ${ws.path('notes.old.md')} (file, 6 B).\n`, stderr: '' });
    expect(readFileSync(ws.path('notes.old.md'), 'utf8')).toBe('# old\n');
    expect(readFileSync(ws.path('notes.md'), 'utf8')).toBe('# new\n');
  });
});
