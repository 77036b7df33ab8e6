import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalStore } from '@bulkhead/core';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

let fsw: FsWriteHarness;
afterEach(async () => fsw?.close());

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const ID = /\d{8}-\d{6}-[0-9a-f]{8}/;

function trashIds(): string[] {
  const folder = join(fsw.controlDir, 'trash');
  return existsSync(folder) ? readdirSync(folder).filter((name) => ID.test(name)).sort() : [];
}

function trashIdOf(text: string): string {
  const id = / in the trash as (\S+?)[.;]/.exec(text)?.[1];
  if (!id) throw new Error(`no trash id in: ${text}`);
  return id;
}

function manifestOf(id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(fsw.controlDir, 'trash', id, 'manifest.json'), 'utf8')) as Record<string, unknown>;
}

describe('create_directory', () => {
  it('creates a folder with its missing parents, and says so', async () => {
    fsw = await startFsWrite();
    expect(await fsw.call('create_directory', { path: 'a/b/c' })).toEqual({ isError: false, text: 'Created 3 folders: a, a/b, a/b/c' });
    expect(statSync(fsw.ws.path('a/b/c')).isDirectory()).toBe(true);
    expect(await fsw.call('create_directory', { path: 'a/b/d' })).toEqual({ isError: false, text: 'Created folder a/b/d' });
  });

  it('answers "No change needed" for a folder that exists', async () => {
    fsw = await startFsWrite();
    fsw.ws.mkdir('src');
    expect(await fsw.call('create_directory', { path: 'src' })).toEqual({ isError: false, text: 'No change needed: src already exists (a folder)' });
  });

  it('refuses when a file or a symlink is there', async () => {
    fsw = await startFsWrite({ 'notes.txt': 'x\n' });
    fsw.ws.mkdir('real');
    symlinkSync('real', fsw.ws.path('link'));
    expect(await fsw.call('create_directory', { path: 'notes.txt' })).toEqual({ isError: true, text: 'notes.txt exists and is a file, not a folder; no folder was created' });
    expect(await fsw.call('create_directory', { path: 'link' })).toEqual({ isError: true, text: 'link is a symlink (-> real); it is not followed, so no folder was created' });
    expect(await fsw.call('create_directory', { path: 'notes.txt/sub' })).toEqual({ isError: true, text: 'cannot create notes.txt/sub: notes.txt is not a folder (a file or a symlink is there)' });
    expect(await fsw.call('create_directory', { path: 'link/sub' })).toEqual({ isError: false, text: 'Created folder real/sub' });
  });

  it('lists the folders on dry_run and creates none', async () => {
    fsw = await startFsWrite();
    expect(await fsw.call('create_directory', { path: 'x/y', dry_run: true })).toEqual({ isError: false, text: 'Dry run: would create 2 folders: x, x/y; nothing was created.' });
    expect(existsSync(fsw.ws.path('x'))).toBe(false);
  });

  it('refuses the protected set and the control-plane folder', async () => {
    fsw = await startFsWrite();
    expect(await fsw.call('create_directory', { path: '.git/hooks' })).toEqual({ isError: true, text: '.git/hooks is in the protected set (`.git/`); tools never write there' });
    expect(await fsw.call('create_directory', { path: '.bulkhead/trash/x' })).toEqual({ isError: true, text: `.bulkhead/trash/x is inside the control-plane folder ${fsw.controlDir}; tools never write there` });
  });
});

describe('delete_path', () => {
  it('moves a text file to the trash, shows the removed lines and how to restore it', async () => {
    fsw = await startFsWrite({ 'notes/todo.md': '# Todo\n- ship\n' });
    const result = await fsw.call('delete_path', { path: 'notes/todo.md' });
    const id = trashIdOf(result.text);
    expect(result).toEqual({
      isError: false,
      text: [
        `Deleted notes/todo.md (file, 14 B): it is in the trash as ${id}. Restore it with: bulkhead trash restore ${id}`,
        '```diff',
        '--- a/notes/todo.md',
        '+++ /dev/null',
        '@@ -1,2 +0,0 @@',
        '-# Todo',
        '-- ship',
        '```',
      ].join('\n'),
    });
    expect(existsSync(fsw.ws.path('notes/todo.md'))).toBe(false);
    expect(readFileSync(join(fsw.controlDir, 'trash', id, 'entry'), 'utf8')).toBe('# Todo\n- ship\n');
    expect(manifestOf(id)).toEqual({
      id,
      original: fsw.ws.path('notes/todo.md'),
      shown_as: 'notes/todo.md',
      kind: 'file',
      bytes: 14,
      entries: 0,
      deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      reason: 'deleted',
      pid: process.pid,
      host: hostname(),
    });
  });

  it('summarises binary and large files instead of showing them', async () => {
    fsw = await startFsWrite({ 'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), 'big.txt': 'x'.repeat(300 * 1024) });
    expect((await fsw.call('delete_path', { path: 'logo.png' })).text).toMatch(/^Deleted logo\.png \(file, 7 B\): .*\n\(content not shown: 7 B, not UTF-8 text\)$/);
    expect((await fsw.call('delete_path', { path: 'big.txt' })).text).toMatch(/^Deleted big\.txt \(file, 300\.0 KiB\): .*\n\(content not shown: 300\.0 KiB\)$/);
  });

  it('bounds the removed lines by diff_max_lines', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
    fsw = await startFsWrite({ 'long.txt': `${lines.join('\n')}\n` }, { policy: { limits: { diff_max_lines: 10 } } });
    const shown = (await fsw.call('delete_path', { path: 'long.txt' })).text.split('\n');
    expect(shown.slice(1)).toEqual(['```diff', '--- a/long.txt', '+++ /dev/null', '@@ -1,100 +0,0 @@', ...lines.slice(0, 7).map((line) => `-${line}`), '… 93 more diff lines not shown (+0 −100 lines in all)', '```']);
  });

  it('deletes a symlink itself, never its target', async () => {
    fsw = await startFsWrite({ 'target.txt': 'kept\n' });
    symlinkSync('target.txt', fsw.ws.path('link.txt'));
    const result = await fsw.call('delete_path', { path: 'link.txt' });
    expect(result.text).toBe(`Deleted link.txt (symlink -> target.txt): it is in the trash as ${trashIdOf(result.text)}. Restore it with: bulkhead trash restore ${trashIdOf(result.text)}`);
    expect(existsSync(fsw.ws.path('link.txt'))).toBe(false);
    expect(readFileSync(fsw.ws.path('target.txt'), 'utf8')).toBe('kept\n');
    expect(readlinkSync(join(fsw.controlDir, 'trash', trashIdOf(result.text), 'entry'))).toBe('target.txt');
  });

  it('deletes a dangling symlink that points outside the roots, as a link', async () => {
    fsw = await startFsWrite();
    symlinkSync('/nonexistent/elsewhere', fsw.ws.path('dangling'));
    const result = await fsw.call('delete_path', { path: 'dangling' });
    expect(result.text).toMatch(/^Deleted dangling \(symlink -> \/nonexistent\/elsewhere\): it is in the trash as /);
    expect(existsSync(fsw.ws.path('dangling'))).toBe(false);
  });

  it('needs recursive for a folder that is not empty, and counts what it holds', async () => {
    fsw = await startFsWrite({ 'build/a.js': 'a\n', 'build/sub/b.js': 'bb\n' });
    fsw.ws.mkdir('empty');
    expect(await fsw.call('delete_path', { path: 'build' })).toEqual({
      isError: true,
      text: 'build is a folder: 2 files, 1 folder, 5 B; pass recursive: true to delete it with everything in it (it goes to the trash and can be restored). Nothing was deleted.',
    });
    expect(existsSync(fsw.ws.path('build/sub/b.js'))).toBe(true);
    expect((await fsw.call('delete_path', { path: 'empty' })).text).toMatch(/^Deleted empty \(empty folder\): it is in the trash as /);
    const result = await fsw.call('delete_path', { path: 'build', recursive: true });
    expect(result.text).toMatch(/^Deleted build \(folder: 2 files, 1 folder, 5 B\): it is in the trash as /);
    expect(manifestOf(trashIdOf(result.text))).toMatchObject({ kind: 'folder', bytes: 5, entries: 3 });
    expect(readFileSync(join(fsw.controlDir, 'trash', trashIdOf(result.text), 'entry/sub/b.js'), 'utf8')).toBe('bb\n');
  });

  it('refuses a folder holding anything protected, naming the first such path', async () => {
    fsw = await startFsWrite({ 'app/src/a.ts': 'a\n', 'app/.env': 'SECRET=1\n', 'repo/.git/HEAD': 'ref\n' });
    expect(await fsw.call('delete_path', { path: 'app', recursive: true })).toEqual({
      isError: true,
      text: 'cannot delete app: inside it, app/.env is in the protected set (`.env*`); tools never write there; nothing was deleted',
    });
    expect(await fsw.call('delete_path', { path: 'repo', recursive: true })).toEqual({
      isError: true,
      text: 'cannot delete repo: inside it, repo/.git is in the protected set (`.git/`); tools never write there; nothing was deleted',
    });
    expect(existsSync(fsw.ws.path('app/.env'))).toBe(true);
    expect(trashIds()).toEqual([]);
  });

  it('refuses protected entries, the control-plane folder and a folder holding it', async () => {
    fsw = await startFsWrite({ '.env': 'S=1\n', 'id_rsa': 'k\n' });
    expect(await fsw.call('delete_path', { path: '.env' })).toEqual({ isError: true, text: '.env is in the protected set (`.env*`); tools never write there' });
    expect(await fsw.call('delete_path', { path: '.bulkhead', recursive: true })).toEqual({ isError: true, text: `.bulkhead is inside the control-plane folder ${fsw.controlDir}; tools never write there` });
    expect(await fsw.call('delete_path', { path: '.bulkhead/permissions.yaml' })).toEqual({
      isError: true,
      text: `.bulkhead/permissions.yaml is inside the control-plane folder ${fsw.controlDir}; tools never write there`,
    });
    expect(await fsw.call('delete_path', { path: '.' })).toEqual({ isError: true, text: '. is a root folder itself; give a path inside it' });
  });

  it('refuses a missing path', async () => {
    fsw = await startFsWrite();
    expect(await fsw.call('delete_path', { path: 'nope.txt' })).toEqual({ isError: true, text: 'nope.txt does not exist' });
  });

  it('checks expected_sha256, and only for files', async () => {
    fsw = await startFsWrite({ 'a.txt': 'now\n', 'dir/x': 'x\n' });
    expect(await fsw.call('delete_path', { path: 'a.txt', expected_sha256: sha('then\n') })).toEqual({
      isError: true,
      text: `a.txt has changed: its sha256 is ${sha('now\n')}, not the expected_sha256 ${sha('then\n')}. Nothing was deleted; read it again and retry.`,
    });
    expect(await fsw.call('delete_path', { path: 'dir', recursive: true, expected_sha256: sha('x\n') })).toEqual({
      isError: true,
      text: 'expected_sha256 applies to a file, and dir is a folder; nothing was deleted',
    });
    expect((await fsw.call('delete_path', { path: 'a.txt', expected_sha256: sha('now\n') })).isError).toBe(false);
  });

  it('says what it would delete on dry_run and deletes nothing', async () => {
    fsw = await startFsWrite({ 'a.txt': 'one\n' });
    expect(await fsw.call('delete_path', { path: 'a.txt', dry_run: true })).toEqual({
      isError: false,
      text: 'Dry run: would delete a.txt (file, 4 B) by moving it to the trash; nothing was deleted.\n```diff\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n```',
    });
    expect(existsSync(fsw.ws.path('a.txt'))).toBe(true);
    expect(trashIds()).toEqual([]);
  });

  it('refuses an entry larger than the trash may keep, and leaves it in place', async () => {
    fsw = await startFsWrite({ 'big.bin': Buffer.alloc(2048) }, { policy: { trash: { max_bytes: 1024 } } });
    expect(await fsw.call('delete_path', { path: 'big.bin' })).toEqual({
      isError: true,
      text: 'big.bin holds 2.0 KiB, more than the trash may keep (trash.max_bytes in fs_write_policy.yaml: 1.0 KiB), so it could not be restored; it was left in place',
    });
    expect(statSync(fsw.ws.path('big.bin')).size).toBe(2048);
  });

  it('purges older entries past the retention policy after a delete, never the one just deleted', async () => {
    fsw = await startFsWrite({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { policy: { trash: { retention_days: 0 } } });
    const first = trashIdOf((await fsw.call('delete_path', { path: 'a.txt' })).text);
    expect(trashIds()).toEqual([first]);
    const second = await fsw.call('delete_path', { path: 'b.txt' });
    expect(second.text.split('\n')[1]).toBe('The trash purged 1 older entry (2 B) under its retention policy.');
    expect(trashIds()).toEqual([trashIdOf(second.text)]);
  });

  it('gives concurrent deletes distinct ids', async () => {
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `${i}\n`]));
    fsw = await startFsWrite(files);
    const results = await Promise.all(Object.keys(files).map((path) => fsw.call('delete_path', { path })));
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(new Set(results.map((result) => trashIdOf(result.text))).size).toBe(20);
    expect(trashIds()).toHaveLength(20);
  });
});

describe('move_path', () => {
  it('renames a file, creating missing folders, and keeps it byte-identical', async () => {
    fsw = await startFsWrite({ 'a.txt': 'content\n' });
    const before = lstatSync(fsw.ws.path('a.txt'));
    expect(await fsw.call('move_path', { source: 'a.txt', destination: 'docs/old/a.txt' })).toEqual({ isError: false, text: 'Moved a.txt to docs/old/a.txt (file, 8 B)' });
    expect(existsSync(fsw.ws.path('a.txt'))).toBe(false);
    const after = lstatSync(fsw.ws.path('docs/old/a.txt'));
    expect([after.ino, after.mode, after.mtimeMs]).toEqual([before.ino, before.mode, before.mtimeMs]);
  });

  it('moves a folder with what it holds', async () => {
    fsw = await startFsWrite({ 'src/a.ts': 'a\n', 'src/lib/b.ts': 'b\n' });
    expect(await fsw.call('move_path', { source: 'src', destination: 'lib' })).toEqual({ isError: false, text: 'Moved src to lib (folder: 2 files, 1 folder, 4 B)' });
    expect(readFileSync(fsw.ws.path('lib/lib/b.ts'), 'utf8')).toBe('b\n');
  });

  it('moves a symlink itself, not its target', async () => {
    fsw = await startFsWrite({ 'data/real.txt': 'real\n' });
    symlinkSync('data/real.txt', fsw.ws.path('link'));
    expect(await fsw.call('move_path', { source: 'link', destination: 'link2' })).toEqual({ isError: false, text: 'Moved link to link2 (symlink -> data/real.txt)' });
    expect(readlinkSync(fsw.ws.path('link2'))).toBe('data/real.txt');
    expect(readFileSync(fsw.ws.path('data/real.txt'), 'utf8')).toBe('real\n');
  });

  it('never replaces an existing destination without overwrite, naming it', async () => {
    fsw = await startFsWrite({ 'a.txt': 'new\n', 'b.txt': 'old\n', 'dir/x': 'x\n' });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: 'b.txt' })).toEqual({
      isError: true,
      text: 'b.txt already exists (file, 4 B); nothing was moved. Pass overwrite: true to replace it (what is there goes to the trash and can be restored), or choose another destination.',
    });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: 'dir' })).toEqual({
      isError: true,
      text: 'dir already exists (folder: 1 file, 2 B); nothing was moved. Pass overwrite: true to replace it (what is there goes to the trash and can be restored), or choose another destination.',
    });
    expect(readFileSync(fsw.ws.path('b.txt'), 'utf8')).toBe('old\n');
  });

  it('with overwrite, puts the replaced destination in the trash first', async () => {
    fsw = await startFsWrite({ 'a.txt': 'new\n', 'b.txt': 'old\n' });
    const result = await fsw.call('move_path', { source: 'a.txt', destination: 'b.txt', overwrite: true });
    const id = trashIdOf(result.text);
    expect(result).toEqual({ isError: false, text: `Moved a.txt to b.txt (file, 4 B); the file, 4 B that was at b.txt is in the trash as ${id}. Restore it with: bulkhead trash restore ${id}` });
    expect(readFileSync(fsw.ws.path('b.txt'), 'utf8')).toBe('new\n');
    expect(readFileSync(join(fsw.controlDir, 'trash', id, 'entry'), 'utf8')).toBe('old\n');
  });

  it('says what it would do on dry_run and moves nothing', async () => {
    fsw = await startFsWrite({ 'a.txt': 'new\n', 'b.txt': 'old\n' });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: 'b.txt', overwrite: true, dry_run: true })).toEqual({
      isError: false,
      text: 'Dry run: would move a.txt to b.txt (file, 4 B), replacing b.txt (file, 4 B), which would go to the trash; nothing was moved.',
    });
    expect(readFileSync(fsw.ws.path('b.txt'), 'utf8')).toBe('old\n');
    expect(trashIds()).toEqual([]);
  });

  it('refuses moves into, out of and with the protected set', async () => {
    fsw = await startFsWrite({ 'a.txt': 'a\n', 'config/.env.local': 'S=1\n', 'config/app.json': '{}\n', '.git/config': '[core]\n' });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: '.git/hooks/pre-commit' })).toEqual({
      isError: true,
      text: '.git/hooks/pre-commit is in the protected set (`.git/`); tools never write there',
    });
    expect(await fsw.call('move_path', { source: '.git/config', destination: 'config.txt' })).toEqual({ isError: true, text: '.git/config is in the protected set (`.git/`); tools never write there' });
    expect(await fsw.call('move_path', { source: 'config', destination: 'settings' })).toEqual({
      isError: true,
      text: 'cannot move config: inside it, config/.env.local is in the protected set (`.env*`); tools never write there; nothing was moved',
    });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: '.bulkhead/permissions.yaml' })).toEqual({
      isError: true,
      text: `.bulkhead/permissions.yaml is inside the control-plane folder ${fsw.controlDir}; tools never write there`,
    });
    expect(readFileSync(fsw.ws.path('config/app.json'), 'utf8')).toBe('{}\n');
  });

  it('refuses a move that would put something under a protected path of the policy', async () => {
    fsw = await startFsWrite({ 'drafts/prod.yaml': 'x: 1\n' }, { policy: { protect: ['deploy/prod.yaml'] } });
    expect(await fsw.call('move_path', { source: 'drafts', destination: 'deploy' })).toEqual({
      isError: true,
      text: 'cannot move drafts: inside it, deploy/prod.yaml is in the protected set (`deploy/prod.yaml` in protect of fs_write_policy.yaml); tools never write there; nothing was moved',
    });
    expect(existsSync(fsw.ws.path('drafts/prod.yaml'))).toBe(true);
  });

  it('refuses to replace a destination that holds something protected', async () => {
    fsw = await startFsWrite({ 'a/x': 'x\n', 'b/.ssh/config': 'Host *\n' });
    expect(await fsw.call('move_path', { source: 'a', destination: 'b', overwrite: true })).toEqual({
      isError: true,
      text: 'cannot replace b: inside it, b/.ssh is in the protected set (`.ssh/`); tools never write there; nothing was moved',
    });
  });

  it('refuses a folder moved into itself or onto a folder that holds it', async () => {
    fsw = await startFsWrite({ 'a/b/c.txt': 'c\n' });
    expect(await fsw.call('move_path', { source: 'a', destination: 'a/b/a' })).toEqual({ isError: true, text: 'cannot move a into itself (a/b/a is inside it); nothing was moved' });
    expect(await fsw.call('move_path', { source: 'a/b', destination: 'a', overwrite: true })).toEqual({ isError: true, text: 'cannot move a/b to a, a folder that holds it; nothing was moved' });
    expect(await fsw.call('move_path', { source: 'a', destination: './a' })).toEqual({ isError: false, text: 'No change needed: a and a are the same path' });
  });

  it('refuses a missing source and paths outside the roots', async () => {
    fsw = await startFsWrite({ 'a.txt': 'a\n' });
    expect(await fsw.call('move_path', { source: 'gone.txt', destination: 'b.txt' })).toEqual({ isError: true, text: 'gone.txt does not exist' });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: '../a.txt' })).toEqual({
      isError: true,
      text: `../a.txt is outside the allowed roots (${fsw.ws.root}); give a path inside them`,
    });
  });

  it('checks expected_sha256 of the source', async () => {
    fsw = await startFsWrite({ 'a.txt': 'now\n' });
    expect(await fsw.call('move_path', { source: 'a.txt', destination: 'b.txt', expected_sha256: sha('then\n') })).toEqual({
      isError: true,
      text: `a.txt has changed: its sha256 is ${sha('now\n')}, not the expected_sha256 ${sha('then\n')}. Nothing was moved; read it again and retry.`,
    });
    expect(existsSync(fsw.ws.path('a.txt'))).toBe(true);
  });

  it('never lets a bare path rule allow a move, since a move names two paths', async () => {
    fsw = await startFsWrite({ 'src/a.txt': 'a\n' }, { permissions: 'allow:\n  - fs_write:move_path(src/**)\napproval_wait_ms: 0\n' });
    const file = join(fsw.controlDir, 'permissions.yaml');
    const asked = await fsw.call('move_path', { source: 'src/a.txt', destination: 'src/b.txt' });
    expect(asked.isError).toBe(true);
    expect(asked.text).toMatch(/^fs_write:move_path is waiting for a human's approval \(approval [a-z2-9]{8}\); nothing was run yet\. /);
    expect(new ApprovalStore(fsw.controlDir).pending().map((approval) => approval.reason)).toEqual([`fs_write:move_path is medium risk and autonomy is supervised (the default; ${file} does not set autonomy)`]);
    expect(existsSync(fsw.ws.path('src/a.txt'))).toBe(true);
  });

  it('is allowed by a rule on source= or destination=', async () => {
    fsw = await startFsWrite({ 'src/a.txt': 'a\n' }, { permissions: 'allow:\n  - fs_write:move_path(source=src/**)\n' });
    expect(await fsw.call('move_path', { source: 'src/a.txt', destination: 'src/b.txt' })).toEqual({ isError: false, text: 'Moved src/a.txt to src/b.txt (file, 2 B)' });
  });

  it('moves a file that has another hard link, keeping both names of the content apart', async () => {
    fsw = await startFsWrite({ 'a.txt': 'shared\n' });
    mkdirSync(fsw.ws.path('keep'));
    writeFileSync(fsw.ws.path('keep/.placeholder'), '');
    const { linkSync } = await import('node:fs');
    linkSync(fsw.ws.path('a.txt'), fsw.ws.path('keep/other.txt'));
    expect(await fsw.call('move_path', { source: 'a.txt', destination: 'keep/other.txt' })).toEqual({
      isError: true,
      text: 'keep/other.txt already exists (file, 7 B); nothing was moved. Pass overwrite: true to replace it (what is there goes to the trash and can be restored), or choose another destination.',
    });
    expect((await fsw.call('move_path', { source: 'a.txt', destination: 'moved.txt' })).isError).toBe(false);
    expect(readFileSync(fsw.ws.path('keep/other.txt'), 'utf8')).toBe('shared\n');
  });
});
