import { chmodSync, existsSync, lstatSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Roots, Trash, trashPolicySchema } from '@bulkhead/core';
import { trashSlots } from './attack-kit.js';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

let fsw: FsWriteHarness | undefined;

afterEach(async () => {
  await fsw?.close();
  fsw = undefined;
});

const KEPT = /The previous version \(([^)]+)\) is in the trash as (\d{8}-\d{6}-[0-9a-f]{8}); `bulkhead trash restore \2 --to PATH` brings it back \(restore never overwrites (\S+): give another path, or move \3 away first\)\.$/;

/** The trash id a reply names for the version it replaced. */
function keptId(text: string): string {
  const match = KEPT.exec(text);
  if (!match) throw new Error(`no kept version in: ${text}`);
  return match[2]!;
}

const stored = (id: string) => join(fsw!.controlDir, 'trash', id, 'entry');
const manifest = (id: string) => JSON.parse(readFileSync(join(fsw!.controlDir, 'trash', id, 'manifest.json'), 'utf8')) as Record<string, unknown>;

function trashOf(policy: Record<string, unknown> = {}): { trash: Trash; roots: Roots } {
  return {
    trash: new Trash(fsw!.controlDir, trashPolicySchema.parse(policy)),
    roots: new Roots([fsw!.ws.root], { controlDir: fsw!.controlDir, denyRead: [] }),
  };
}

describe('nothing is lost on overwrite: the replaced version goes to the trash', () => {
  it.each([
    ['write_file', { content: 'new content\n' }],
    ['edit_file', { old_string: 'old', new_string: 'new' }],
    ['multi_edit', { edits: [{ old_string: 'old', new_string: 'new' }, { old_string: 'missing', new_string: 'x' }] }],
  ])('%s keeps the previous bytes, mode and times, and says how to get them back', async (tool, args) => {
    fsw = await startFsWrite({ 'src/a.sh': 'old content\n' });
    chmodSync(fsw.ws.path('src/a.sh'), 0o750);
    utimesSync(fsw.ws.path('src/a.sh'), new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'));
    const result = await fsw.call(tool, { path: 'src/a.sh', ...args });
    expect(result.isError).toBe(false);
    expect(readFileSync(fsw.ws.path('src/a.sh'), 'utf8')).toBe('new content\n');
    const id = keptId(result.text);
    expect(result.text.split('\n').at(-1)).toMatch(KEPT);
    expect(readFileSync(stored(id), 'utf8')).toBe('old content\n');
    const kept = lstatSync(stored(id));
    expect(kept.mode & 0o7777).toBe(0o750);
    expect(kept.mtime.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(kept.nlink).toBe(1);
    expect(manifest(id)).toMatchObject({ id, original: fsw.ws.path('src/a.sh'), shown_as: 'src/a.sh', kind: 'file', bytes: 12, entries: 0, reason: 'replaced', pid: process.pid });
    // The file is there, so a plain restore refuses; --to brings the version back beside it.
    const { trash, roots } = trashOf();
    await expect(trash.restore(id, roots)).rejects.toThrow(`cannot restore ${id}: src/a.sh exists now (a file); nothing was restored. Move it away first, or restore to another path.`);
    await trash.restore(id, roots, { to: fsw.ws.path('src/a.sh.old') });
    expect(readFileSync(fsw.ws.path('src/a.sh.old'), 'utf8')).toBe('old content\n');
    expect(statSync(fsw.ws.path('src/a.sh.old')).mode & 0o7777).toBe(0o750);
    expect(readFileSync(fsw.ws.path('src/a.sh'), 'utf8')).toBe('new content\n');
  });

  it('keeps every version of a file replaced many times, each its own entry, newest first in the list', async () => {
    fsw = await startFsWrite({ 'notes.md': 'v0\n' });
    const ids: string[] = [];
    for (let v = 1; v <= 5; v++) ids.push(keptId((await fsw.call('write_file', { path: 'notes.md', content: `v${v}\n` })).text));
    ids.push(keptId((await fsw.call('edit_file', { path: 'notes.md', old_string: 'v5', new_string: 'v6' })).text));
    expect(new Set(ids).size).toBe(6);
    expect(ids.map((id) => readFileSync(stored(id), 'utf8'))).toEqual(['v0\n', 'v1\n', 'v2\n', 'v3\n', 'v4\n', 'v5\n']);
    const { trash, roots } = trashOf();
    const listed = await trash.list();
    expect(listed.entries.map((entry) => entry.id)).toEqual([...ids].reverse());
    expect(listed.problems).toEqual([]);
    // Any of them comes back, to a path of its own.
    await trash.restore(ids[2]!, roots, { to: fsw.ws.path('notes-v2.md') });
    expect(readFileSync(fsw.ws.path('notes-v2.md'), 'utf8')).toBe('v2\n');
  });

  it('keeps nothing for a new file, a dry run, content that is already there, or a refused edit', async () => {
    fsw = await startFsWrite({ 'a.txt': 'same\n' });
    expect((await fsw.call('write_file', { path: 'b.txt', content: 'new\n' })).text).not.toMatch(/trash/);
    expect((await fsw.call('write_file', { path: 'a.txt', content: 'other\n', dry_run: true })).text).not.toMatch(/in the trash/);
    expect((await fsw.call('write_file', { path: 'a.txt', content: 'same\n' })).text).toBe('No change needed: a.txt already has exactly this content');
    expect((await fsw.call('edit_file', { path: 'a.txt', old_string: 'missing', new_string: 'x' })).isError).toBe(true);
    expect((await fsw.call('write_file', { path: 'a.txt', content: 'x', expected_sha256: '0'.repeat(64) })).isError).toBe(true);
    expect(trashSlots(fsw.ws.root)).toEqual([]);
  });

  it('refuses to replace a file larger than the trash may keep, and writes nothing', async () => {
    fsw = await startFsWrite({ 'big.txt': 'b'.repeat(2000) }, { policy: { trash: { max_bytes: 1000 } } });
    expect(await fsw.call('write_file', { path: 'big.txt', content: 'small\n' })).toEqual({
      isError: true,
      text: 'the current content of big.txt (2.0 KiB) is more than the trash may keep (trash.max_bytes in fs_write_policy.yaml: 1000 B), so replacing it could not be undone; nothing was written. Raise trash.max_bytes in fs_write_policy.yaml to allow it.',
    });
    expect(readFileSync(fsw.ws.path('big.txt'), 'utf8')).toBe('b'.repeat(2000));
    expect(trashSlots(fsw.ws.root)).toEqual([]);
  });

  it('applies the retention policy after each kept version: the oldest go beyond max_bytes, never the one just kept', async () => {
    fsw = await startFsWrite({ 'log.txt': 'a'.repeat(400) }, { policy: { trash: { max_bytes: 1000 } } });
    const first = keptId((await fsw.call('write_file', { path: 'log.txt', content: 'b'.repeat(400) })).text);
    const second = keptId((await fsw.call('write_file', { path: 'log.txt', content: 'c'.repeat(400) })).text);
    const third = await fsw.call('write_file', { path: 'log.txt', content: 'd'.repeat(400) });
    expect(third.text.split('\n').at(-1)).toBe('The trash purged 1 older entry (400 B) under its retention policy.');
    expect(existsSync(stored(first))).toBe(false);
    expect(readFileSync(stored(second), 'utf8')).toBe('b'.repeat(400));
    expect(trashSlots(fsw.ws.root)).toHaveLength(2);
  });

  it('keeps a file whose only copy was in the reply: a binary file replaced by write_file', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    fsw = await startFsWrite({ 'logo.png': png });
    const id = keptId((await fsw.call('write_file', { path: 'logo.png', content: 'text now\n' })).text);
    expect(readFileSync(stored(id)).equals(png)).toBe(true);
  });
});
