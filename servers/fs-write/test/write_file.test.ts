import { chmodSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

let fsw: FsWriteHarness;
afterEach(async () => fsw?.close());

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.includes('.bulkhead-'));

describe('write_file', () => {
  it('creates a new file with its missing folders and shows it as a diff', async () => {
    fsw = await startFsWrite();
    const result = await fsw.call('write_file', { path: 'src/deep/new.ts', content: 'export const a = 1;\nexport const b = 2;\n' });
    expect(result).toEqual({
      isError: false,
      text: `Created src/deep/new.ts (new file; +2 −0 lines; 40 B; sha256 ${sha('export const a = 1;\nexport const b = 2;\n')})\n\`\`\`diff\n--- /dev/null\n+++ b/src/deep/new.ts\n@@ -0,0 +1,2 @@\n+export const a = 1;\n+export const b = 2;\n\`\`\``,
    });
    expect(readFileSync(fsw.ws.path('src/deep/new.ts'), 'utf8')).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(leftovers(fsw.ws.path('src/deep'))).toEqual([]);
  });

  it('replaces a file, keeps its mode, and shows only what changed', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    fsw = await startFsWrite({ 'run.sh': `${lines.join('\n')}\n` });
    chmodSync(fsw.ws.path('run.sh'), 0o750);
    const changed = lines.map((line) => (line === 'line 10' ? 'line ten' : line));
    const result = await fsw.call('write_file', { path: 'run.sh', content: `${changed.join('\n')}\n` });
    expect(result.text.split('\n')).toEqual([
      `Updated run.sh (replaced; +1 −1 lines; 152 B; sha256 ${sha(`${changed.join('\n')}\n`)})`,
      '```diff',
      '--- a/run.sh',
      '+++ b/run.sh',
      '@@ -7,7 +7,7 @@',
      ' line 7',
      ' line 8',
      ' line 9',
      '-line 10',
      '+line ten',
      ' line 11',
      ' line 12',
      ' line 13',
      '```',
      expect.stringMatching(/^The previous version \(151 B\) is in the trash as \d{8}-\d{6}-[0-9a-f]{8}; `bulkhead trash restore \S+ --to PATH` brings it back \(restore never overwrites run\.sh: give another path, or move run\.sh away first\)\.$/),
    ]);
    expect(statSync(fsw.ws.path('run.sh')).mode & 0o7777).toBe(0o750);
    expect(leftovers(fsw.ws.root)).toEqual([]);
  });

  it('writes nothing when the content is already identical', async () => {
    fsw = await startFsWrite({ 'same.txt': 'same\n' });
    utimesSync(fsw.ws.path('same.txt'), new Date(2000, 0, 1), new Date(2000, 0, 1));
    const before = statSync(fsw.ws.path('same.txt'));
    expect(await fsw.call('write_file', { path: 'same.txt', content: 'same\n' })).toEqual({ isError: false, text: 'No change needed: same.txt already has exactly this content' });
    const after = statSync(fsw.ws.path('same.txt'));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('shows the diff on dry_run and writes nothing', async () => {
    fsw = await startFsWrite({ 'a.txt': 'old\n' });
    const result = await fsw.call('write_file', { path: 'a.txt', content: 'new\n', dry_run: true });
    expect(result.text).toBe('Dry run: would update a.txt (replaced; +1 −1 lines); nothing was written.\n```diff\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n```');
    expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('old\n');
    const created = await fsw.call('write_file', { path: 'b/c.txt', content: 'x\n', dry_run: true });
    expect(created.text.split('\n')[0]).toBe('Dry run: would create b/c.txt (new file; +1 −0 lines); nothing was written.');
    expect(readdirSync(fsw.ws.root).sort()).toEqual(['.bulkhead', 'a.txt']);
  });

  it('refuses to overwrite a file whose sha256 is not the expected one', async () => {
    fsw = await startFsWrite({ 'a.txt': 'theirs\n' });
    const stale = sha('mine\n');
    const result = await fsw.call('write_file', { path: 'a.txt', content: 'new\n', expected_sha256: stale });
    expect(result).toEqual({
      isError: true,
      text: `a.txt has changed: its sha256 is ${sha('theirs\n')}, not the expected_sha256 ${stale}. Nothing was written; read it again and retry.`,
    });
    expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('theirs\n');
    const ok = await fsw.call('write_file', { path: 'a.txt', content: 'new\n', expected_sha256: sha('theirs\n').toUpperCase() });
    expect(ok.text).toMatch(/^Updated a\.txt/);
    const missing = await fsw.call('write_file', { path: 'none.txt', content: 'x', expected_sha256: stale });
    expect(missing).toEqual({ isError: true, text: 'none.txt does not exist, but expected_sha256 was given; nothing was written' });
  });

  it('refuses content over the byte cap and a bad expected_sha256', async () => {
    fsw = await startFsWrite({}, { policy: { limits: { max_file_bytes: 1000 } } });
    expect(await fsw.call('write_file', { path: 'big.txt', content: 'x'.repeat(1001) })).toEqual({
      isError: true,
      text: 'the new content of big.txt would be 1001 B, over the 1000 B cap of fs_write_policy.yaml (limits.max_file_bytes); nothing was written',
    });
    const bad = await fsw.call('write_file', { path: 'a.txt', content: 'x', expected_sha256: 'abc' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('a SHA-256 is 64 hex digits');
    expect(readdirSync(fsw.ws.root)).toEqual(['.bulkhead']);
  });

  it('bounds the diff of a large write and counts the rest', async () => {
    fsw = await startFsWrite({}, { policy: { limits: { diff_max_lines: 10 } } });
    const content = Array.from({ length: 1000 }, (_, i) => `row ${i}`).join('\n');
    const result = await fsw.call('write_file', { path: 'rows.txt', content });
    const lines = result.text.split('\n');
    expect(lines.slice(1, 4)).toEqual(['```diff', '--- /dev/null', '+++ b/rows.txt']);
    expect(lines.at(-2)).toBe('… 993 more diff lines not shown (+1000 −0 lines in all)');
    expect(lines).toHaveLength(14);
  });

  it('refuses a folder as the target', async () => {
    fsw = await startFsWrite({ 'dir/x.txt': 'x' });
    expect(await fsw.call('write_file', { path: 'dir', content: 'x' })).toEqual({ isError: true, text: 'dir is a folder, not a file' });
  });
});
