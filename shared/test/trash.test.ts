import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureEntry, moveEntry, Roots, ToolError, Trash, trashPolicySchema, type ConfinedPath, type TrashPolicy } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let ws: TempWorkspace;
let root: string;
let controlDir: string;
let roots: Roots;
let clock: Date;

beforeEach(() => {
  ws = tempWorkspace({ 'root/notes/todo.md': '# Todo\n', 'root/app/src/a.ts': 'a\n', 'root/app/src/b.ts': 'bb\n', 'outside/x.txt': 'x\n' });
  root = ws.path('root');
  controlDir = join(root, '.bulkhead');
  roots = new Roots([root], { controlDir, denyRead: [] });
  clock = new Date('2026-05-12T14:30:12.000Z');
});
afterEach(() => ws.cleanup());

function trashWith(policy: Partial<TrashPolicy> = {}, dir = controlDir): Trash {
  return new Trash(dir, trashPolicySchema.parse(policy), { policySource: 'fs_write_policy.yaml', now: () => clock });
}

/** Deletes a root-relative path into `trash`, as delete_path does. */
async function trashPath(trash: Trash, relative: string) {
  const entry = await roots.confineEntry(relative);
  return trash.put(entry, relative, await measureEntry(entry, relative));
}

async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return error.message;
  }
  throw new Error('expected a refusal');
}

const later = (days: number) => (clock = new Date(clock.getTime() + days * 24 * 60 * 60 * 1000));

describe('Trash.put and list', () => {
  it('moves an entry in beside a manifest, with an id of the time and random hex', async () => {
    const trash = trashWith();
    const manifest = await trashPath(trash, 'notes/todo.md');
    expect(manifest).toEqual({
      id: expect.stringMatching(/^20260512-143012-[0-9a-f]{8}$/),
      original: join(root, 'notes/todo.md'),
      shown_as: 'notes/todo.md',
      kind: 'file',
      bytes: 7,
      entries: 0,
      deleted_at: '2026-05-12T14:30:12.000Z',
      reason: 'deleted',
      pid: process.pid,
      host: hostname(),
    });
    expect(existsSync(join(root, 'notes/todo.md'))).toBe(false);
    expect(readdirSync(join(controlDir, 'trash', manifest.id)).sort()).toEqual(['entry', 'manifest.json']);
    expect(statSync(join(controlDir, 'trash')).mode & 0o777).toBe(0o700);
    expect(await trash.list()).toEqual({ entries: [manifest], bytes: 7, problems: [] });
  });

  it('lists newest first and counts folders', async () => {
    const trash = trashWith();
    const first = await trashPath(trash, 'notes/todo.md');
    later(1);
    const second = await trashPath(trash, 'app');
    expect(second).toMatchObject({ kind: 'folder', bytes: 5, entries: 3 });
    expect((await trash.list()).entries.map((entry) => entry.id)).toEqual([second.id, first.id]);
  });

  it('gives distinct ids to deletes in the same second', async () => {
    const trash = trashWith();
    for (let i = 0; i < 30; i++) ws.write(`root/many/${i}.txt`, `${i}`);
    const manifests = await Promise.all(Array.from({ length: 30 }, (_, i) => trashPath(trash, `many/${i}.txt`)));
    expect(new Set(manifests.map((manifest) => manifest.id)).size).toBe(30);
    expect((await trash.list()).entries).toHaveLength(30);
  });

  it('refuses an entry larger than max_bytes and leaves it in place', async () => {
    const trash = trashWith({ max_bytes: 4 });
    expect(await refusal(trashPath(trash, 'notes/todo.md'))).toBe(
      'notes/todo.md holds 7 B, more than the trash may keep (trash.max_bytes in fs_write_policy.yaml: 4 B), so it could not be restored; it was left in place',
    );
    expect(readFileSync(join(root, 'notes/todo.md'), 'utf8')).toBe('# Todo\n');
  });

  it('reports folders it cannot restore instead of failing', async () => {
    const trash = trashWith();
    const kept = await trashPath(trash, 'notes/todo.md');
    mkdirSync(join(controlDir, 'trash', '20260101-000000-0000000a'));
    writeFileSync(join(controlDir, 'trash', '20260101-000000-0000000a', 'entry'), 'orphan');
    writeFileSync(join(controlDir, 'trash', '20260101-000000-0000000a', 'manifest.json'), '{"id": "20260101-000000-0000000a"}');
    mkdirSync(join(controlDir, 'trash', 'not-an-id'));
    expect(await trash.list()).toEqual({
      entries: [kept],
      bytes: 7,
      problems: [
        `20260101-000000-0000000a: manifest.json does not describe this entry; its entry is kept in ${join(controlDir, 'trash', '20260101-000000-0000000a')}`,
      ],
    });
  });
});

describe('Trash.restore', () => {
  it('brings a file back byte-identical, with its mode, and empties its slot', async () => {
    const trash = trashWith();
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10]);
    writeFileSync(join(root, 'notes/blob.bin'), bytes);
    chmodSync(join(root, 'notes/blob.bin'), 0o640);
    const manifest = await trashPath(trash, 'notes/blob.bin');
    expect(await trash.restore(manifest.id, roots)).toEqual({ manifest, path: join(root, 'notes/blob.bin'), shownAs: 'notes/blob.bin' });
    expect(readFileSync(join(root, 'notes/blob.bin')).equals(bytes)).toBe(true);
    expect(statSync(join(root, 'notes/blob.bin')).mode & 0o777).toBe(0o640);
    expect(existsSync(join(controlDir, 'trash', manifest.id))).toBe(false);
    expect((await trash.list()).entries).toEqual([]);
  });

  it('brings back a folder with its symlinks as they were', async () => {
    const trash = trashWith();
    symlinkSync('../../outside/x.txt', join(root, 'app/src/link'));
    const folder = await trashPath(trash, 'app');
    expect(folder.entries).toBe(4);
    await trash.restore(folder.id, roots);
    expect(readFileSync(join(root, 'app/src/b.ts'), 'utf8')).toBe('bb\n');
    expect(readlinkSync(join(root, 'app/src/link'))).toBe('../../outside/x.txt');
  });

  it('recreates missing parent folders', async () => {
    const trash = trashWith();
    const manifest = await trashPath(trash, 'notes/todo.md');
    rmSync(join(root, 'notes'), { recursive: true });
    await trash.restore(manifest.id, roots);
    expect(readFileSync(join(root, 'notes/todo.md'), 'utf8')).toBe('# Todo\n');
  });

  it('restores to another path with `to`', async () => {
    const trash = trashWith();
    const manifest = await trashPath(trash, 'notes/todo.md');
    expect((await trash.restore(manifest.id, roots, { to: join(root, 'back/todo.md') })).shownAs).toBe('back/todo.md');
    expect(readFileSync(join(root, 'back/todo.md'), 'utf8')).toBe('# Todo\n');
  });

  it('never overwrites: a path that exists now is refused, naming it', async () => {
    const trash = trashWith();
    const manifest = await trashPath(trash, 'notes/todo.md');
    writeFileSync(join(root, 'notes/todo.md'), 'newer\n');
    expect(await refusal(trash.restore(manifest.id, roots))).toBe(
      `cannot restore ${manifest.id}: notes/todo.md exists now (a file); nothing was restored. Move it away first, or restore to another path.`,
    );
    expect(readFileSync(join(root, 'notes/todo.md'), 'utf8')).toBe('newer\n');
    expect((await trash.list()).entries).toEqual([manifest]);
  });

  it('stays inside the roots and outside the protected set', async () => {
    const trash = trashWith();
    const manifest = await trashPath(trash, 'notes/todo.md');
    expect(await refusal(trash.restore(manifest.id, roots, { to: ws.path('outside/todo.md') }))).toBe(
      `${ws.path('outside/todo.md')} is outside the allowed roots (${root}); give a path inside them`,
    );
    expect(await refusal(trash.restore(manifest.id, roots, { to: join(root, '.git/hooks/pre-commit') }))).toBe(
      `${join(root, '.git/hooks/pre-commit')} is in the protected set (\`.git/\`); tools never write there`,
    );
    expect(await refusal(trash.restore(manifest.id, roots, { to: join(controlDir, 'x') }))).toBe(`${join(controlDir, 'x')} is inside the control-plane folder ${controlDir}; tools never write there`);
    const folder = await trashPath(trash, 'app');
    const strict = new Roots([root], { controlDir, denyRead: [], protectWrite: ['*.ts'], protectWriteSource: 'fs_write_policy.yaml' });
    expect(await refusal(trash.restore(folder.id, strict))).toBe(
      `cannot restore ${folder.id} to app: inside it, app/src/a.ts is in the protected set (\`*.ts\` in protect of fs_write_policy.yaml); tools never write there; nothing was restored`,
    );
    expect(existsSync(join(root, 'app'))).toBe(false);
  });

  it('refuses ids that are not in the trash or not ids at all', async () => {
    const trash = trashWith();
    expect(await refusal(trash.restore('../../etc', roots))).toBe('../../etc is not a trash id (they look like 20260512-143012-3fa9c1d2; bulkhead trash list shows them)');
    expect(await refusal(trash.restore('20260512-143012-00000000', roots))).toBe(
      `there is no 20260512-143012-00000000 in the trash ${join(controlDir, 'trash')} (bulkhead trash list shows what there is)`,
    );
  });
});

describe('Trash.purge', () => {
  it('removes entries older than retention_days', async () => {
    const trash = trashWith({ retention_days: 7 });
    const old = await trashPath(trash, 'notes/todo.md');
    later(5);
    const recent = await trashPath(trash, 'app');
    later(3);
    expect(await trash.purge()).toEqual({ removed: [old], freedBytes: 7, kept: 1, keptBytes: 5 });
    expect((await trash.list()).entries).toEqual([recent]);
    expect(readdirSync(join(controlDir, 'trash'))).toEqual([recent.id]);
  });

  it('removes the oldest first beyond max_bytes, never the entry to keep', async () => {
    const trash = trashWith({ max_bytes: 10 });
    ws.write('root/four.txt', '4444');
    ws.write('root/six.txt', '666666');
    ws.write('root/five.txt', '55555');
    const four = await trashPath(trash, 'four.txt');
    later(0.1);
    const six = await trashPath(trash, 'six.txt');
    later(0.1);
    const five = await trashPath(trash, 'five.txt');
    expect(await trash.purge({ keep: five.id })).toEqual({ removed: [four, six], freedBytes: 10, kept: 1, keptBytes: 5 });
    expect((await trash.list()).entries).toEqual([five]);
  });

  it('with retention_days 0, keeps only the entry just deleted', async () => {
    const trash = trashWith({ retention_days: 0 });
    const first = await trashPath(trash, 'notes/todo.md');
    later(0.001);
    const second = await trashPath(trash, 'app');
    expect((await trash.purge({ keep: second.id })).removed).toEqual([first]);
    later(0.001);
    expect((await trash.purge()).removed).toEqual([second]);
  });

  it('clears interrupted deletes after an hour, and leaves an entry whose manifest is unreadable', async () => {
    const trash = trashWith();
    const interrupted = join(controlDir, 'trash', '20260512-143012-0000000b');
    mkdirSync(interrupted, { recursive: true });
    writeFileSync(join(interrupted, 'manifest.json'), JSON.stringify({ id: '20260512-143012-0000000b', original: '/x', shown_as: 'x', kind: 'file', bytes: 1, entries: 0, deleted_at: clock.toISOString() }));
    const unreadable = join(controlDir, 'trash', '20260512-143012-0000000c');
    mkdirSync(unreadable);
    writeFileSync(join(unreadable, 'entry'), 'precious');
    utimesSync(unreadable, new Date(2000, 0, 1), new Date(2000, 0, 1));
    mkdirSync(join(controlDir, 'trash', '.purge-leftover'));
    expect((await trash.list()).problems).toEqual([
      '20260512-143012-0000000b: x was never moved in (an interrupted delete); purge clears it',
      `20260512-143012-0000000c: no manifest.json; its entry is kept in ${unreadable}`,
    ]);
    await trash.purge();
    expect(existsSync(interrupted)).toBe(true);
    later(1 / 24 + 0.001);
    await trash.purge();
    expect(existsSync(interrupted)).toBe(false);
    expect(readFileSync(join(unreadable, 'entry'), 'utf8')).toBe('precious');
    expect(existsSync(join(controlDir, 'trash', '.purge-leftover'))).toBe(false);
  });

  it('does nothing when there is no trash yet', async () => {
    expect(await trashWith().purge()).toEqual({ removed: [], freedBytes: 0, kept: 0, keptBytes: 0 });
    expect(existsSync(join(controlDir, 'trash'))).toBe(false);
  });
});

describe('moveEntry', () => {
  it('never replaces a file, a folder or a symlink', async () => {
    ws.write('root/a.txt', 'a');
    ws.write('root/b.txt', 'b');
    symlinkSync('a.txt', join(root, 'link'));
    expect(await refusal(moveEntry(join(root, 'a.txt'), join(root, 'b.txt'), 'file', { from: 'source', to: 'b.txt' }))).toBe('b.txt already exists; nothing was moved');
    expect(await refusal(moveEntry(join(root, 'app'), join(root, 'notes'), 'folder', { from: 'source', to: 'notes' }))).toBe('notes already exists; nothing was moved');
    mkdirSync(join(root, 'empty'));
    expect(await refusal(moveEntry(join(root, 'app'), join(root, 'empty'), 'folder', { from: 'source', to: 'empty' }))).toBe('empty already exists; nothing was moved');
    expect(await refusal(moveEntry(join(root, 'link'), join(root, 'b.txt'), 'symlink', { from: 'source', to: 'b.txt' }))).toBe('b.txt already exists; nothing was moved');
    expect([readFileSync(join(root, 'a.txt'), 'utf8'), readFileSync(join(root, 'b.txt'), 'utf8'), readlinkSync(join(root, 'link'))]).toEqual(['a', 'b', 'a.txt']);
  });
});

describe('moveEntry when a folder was swapped for a symlink after the paths were checked', () => {
  it('refuses to move out of, or into, a folder that is now a symlink to outside, at any depth', async () => {
    ws.write('outside/a/b/x.txt', 'outside\n');
    rmSync(join(root, 'app'), { recursive: true });
    symlinkSync(ws.path('outside/a'), join(root, 'app'));
    const changed = (name: string) => `the folder of ${name} changed during the move (removed, or swapped for a symlink); nothing was moved`;
    expect(await refusal(moveEntry(join(root, 'app/b/x.txt'), join(root, 'x.txt'), 'file', { from: 'app/b/x.txt', to: 'x.txt' }))).toBe(changed('app/b/x.txt'));
    expect(await refusal(moveEntry(join(root, 'app/x.txt'), join(root, 'x.txt'), 'file', { from: 'app/x.txt', to: 'x.txt' }))).toBe(changed('app/x.txt'));
    expect(await refusal(moveEntry(join(root, 'notes/todo.md'), join(root, 'app/b/todo.md'), 'file', { from: 'notes/todo.md', to: 'app/b/todo.md' }))).toBe(changed('app/b/todo.md'));
    expect(readFileSync(ws.path('outside/a/b/x.txt'), 'utf8')).toBe('outside\n');
    expect(readdirSync(ws.path('outside/a/b'))).toEqual(['x.txt']);
    expect(readFileSync(join(root, 'notes/todo.md'), 'utf8')).toBe('# Todo\n');
  });
});

/** A folder on another filesystem than the temp dir, when this machine has one (tmpfs /dev/shm). */
function otherFilesystem(): string | undefined {
  try {
    const dir = mkdtempSync('/dev/shm/bulkhead-trash-');
    if (statSync(dir).dev !== statSync(root).dev) return dir;
    rmSync(dir, { recursive: true });
  } catch {
    // no /dev/shm
  }
  return undefined;
}

describe('across filesystems', () => {
  let other: string | undefined;
  beforeEach(() => (other = otherFilesystem()));
  afterEach(() => other && rmSync(other, { recursive: true, force: true }));

  it('copies into a trash on another filesystem, symlinks verbatim, then restores byte-identical', async (context) => {
    if (!other) return context.skip();
    const trash = trashWith({}, join(other, 'control'));
    symlinkSync('/nowhere/at/all', join(root, 'app/src/dangling'));
    ws.write('root/app/bin.dat', Buffer.from([0, 255, 7]));
    utimesSync(join(root, 'app/bin.dat'), new Date(2001, 1, 1), new Date(2001, 1, 1));
    const manifest = await trashPath(trash, 'app');
    expect(existsSync(join(root, 'app'))).toBe(false);
    expect(readlinkSync(join(other, 'control/trash', manifest.id, 'entry/src/dangling'))).toBe('/nowhere/at/all');
    expect(readdirSync(join(other, 'control/trash', manifest.id)).sort()).toEqual(['entry', 'manifest.json']);
    const file = await trashPath(trash, 'notes/todo.md');
    await trash.restore(manifest.id, roots);
    await trash.restore(file.id, roots);
    expect(readFileSync(join(root, 'app/bin.dat')).equals(Buffer.from([0, 255, 7]))).toBe(true);
    expect(lstatSync(join(root, 'app/bin.dat')).mtime.getTime()).toBe(new Date(2001, 1, 1).getTime());
    expect(readlinkSync(join(root, 'app/src/dangling'))).toBe('/nowhere/at/all');
    expect(readFileSync(join(root, 'notes/todo.md'), 'utf8')).toBe('# Todo\n');
    expect(readdirSync(root).filter((name) => name.includes('.bulkhead-'))).toEqual([]);
  });

  it('moves a file across filesystems without replacing anything', async (context) => {
    if (!other) return context.skip();
    writeFileSync(join(other, 'taken'), 'theirs');
    expect(await refusal(moveEntry(join(root, 'notes/todo.md'), join(other, 'taken'), 'file', { from: 'source', to: 'taken' }))).toBe('taken already exists; nothing was moved');
    expect(readFileSync(join(other, 'taken'), 'utf8')).toBe('theirs');
    expect(readFileSync(join(root, 'notes/todo.md'), 'utf8')).toBe('# Todo\n');
    expect(readdirSync(other)).toEqual(['taken']);
    expect(await moveEntry(join(root, 'notes/todo.md') as ConfinedPath, join(other, 'todo.md'), 'file', { from: 'source', to: 'todo.md' })).toBe('copied');
    expect(existsSync(join(root, 'notes/todo.md'))).toBe(false);
  });
});
