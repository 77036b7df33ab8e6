import { readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

let fsw: FsWriteHarness;
afterEach(async () => fsw?.close());

const bytes = (path: string) => readFileSync(fsw.ws.path(path));

describe('edit_file', () => {
  it('replaces one exact match and returns the diff', async () => {
    fsw = await startFsWrite({ 'a.ts': 'const a = 1;\nconst b = 2;\nconst c = 3;\n' });
    const result = await fsw.call('edit_file', { path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 20;' });
    expect(result.isError).toBe(false);
    expect(result.text.split('\n').slice(1, -1)).toEqual(['```diff', '--- a/a.ts', '+++ b/a.ts', '@@ -1,3 +1,3 @@', ' const a = 1;', '-const b = 2;', '+const b = 20;', ' const c = 3;', '```']);
    expect(result.text.split('\n').at(-1)).toMatch(/^The previous version \(39 B\) is in the trash as \d{8}-\d{6}-[0-9a-f]{8}; /);
    expect(result.text.split('\n')[0]).toMatch(/^Updated a\.ts \(1 replacement; \+1 −1 lines; 40 B; sha256 [0-9a-f]{64}\)$/);
    expect(bytes('a.ts').toString()).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
  });

  it('takes $ patterns and backslashes in new_string literally', async () => {
    fsw = await startFsWrite({ 'p.js': 'price = X;\n' });
    await fsw.call('edit_file', { path: 'p.js', old_string: 'X', new_string: "$& $1 $$ $` $' \\n" });
    expect(bytes('p.js').toString()).toBe("price = $& $1 $$ $` $' \\n;\n");
  });

  it('keeps CRLF line ends and a UTF-8 BOM, matching old_string written with \\n', async () => {
    const original = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('first\r\nsecond\r\nthird\r\n')]);
    fsw = await startFsWrite({ 'win.txt': original });
    const result = await fsw.call('edit_file', { path: 'win.txt', old_string: 'second\nthird', new_string: 'SECOND\nTHIRD\nFOURTH' });
    expect(result.isError).toBe(false);
    expect(bytes('win.txt')).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('first\r\nSECOND\r\nTHIRD\r\nFOURTH\r\n')]));
    expect(result.text).toContain('\n-second\n-third\n+SECOND\n+THIRD\n+FOURTH\n');
  });

  it('leaves a file with mixed line ends as it is around the edit', async () => {
    fsw = await startFsWrite({ 'mixed.txt': 'a\r\nb\nc\r\n' });
    await fsw.call('edit_file', { path: 'mixed.txt', old_string: 'b', new_string: 'B' });
    expect(bytes('mixed.txt').toString()).toBe('a\r\nB\nc\r\n');
  });

  it('refuses a match that is not unique and names every line', async () => {
    fsw = await startFsWrite({ 'dup.txt': 'x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n' });
    expect(await fsw.call('edit_file', { path: 'dup.txt', old_string: 'x = 1', new_string: 'x = 9' })).toEqual({
      isError: true,
      text: 'old_string occurs 3 times in dup.txt (on lines 1, 3, 5); include more surrounding text to pick one, or set replace_all: true to replace every one',
    });
    expect(bytes('dup.txt').toString()).toBe('x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n');
    const all = await fsw.call('edit_file', { path: 'dup.txt', old_string: 'x = 1', new_string: 'x = 9', replace_all: true });
    expect(all.text).toMatch(/^Updated dup\.txt \(3 replacements;/);
    expect(bytes('dup.txt').toString()).toBe('x = 9\ny = 2\nx = 9\nz = 3\nx = 9\n');
  });

  it('shows the nearest text with line numbers and the character difference when nothing matches', async () => {
    fsw = await startFsWrite({ 'f.py': 'def area(w, h):\n    return w * h\n\ndef volume(w, h, d):\n    return w * h * d\n' });
    const result = await fsw.call('edit_file', { path: 'f.py', old_string: 'def volume(w, h, depth):\n    return w * h * depth', new_string: 'x' });
    expect(result).toEqual({
      isError: true,
      text: [
        'old_string was not found in f.py. The closest text is at lines 4-5 (88% similar):',
        '     4\tdef volume(w, h, d):',
        '     5\t    return w * h * d',
        'Difference ([-x-] is only in old_string, {+y+} only in the file): def volume(w, h, d[-epth-]):\\n    return w * h * d[-epth-]',
      ].join('\n'),
    });
  });

  it('says when the only difference is whitespace', async () => {
    fsw = await startFsWrite({ 'g.ts': 'if (a) {\n\treturn b;\n}\n' });
    const result = await fsw.call('edit_file', { path: 'g.ts', old_string: 'if (a) {\n    return b;\n}', new_string: 'x' });
    expect(result.text.split('\n').at(-1)).toBe('They differ only in whitespace (indentation, spaces or line breaks): copy old_string exactly from the file.');
  });

  it('refuses binary and non-UTF-8 files, a missing file, and empty or no-op edits', async () => {
    fsw = await startFsWrite({ 'img.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]), 'latin1.txt': Buffer.from('caf\xe9\n', 'latin1'), 'ok.txt': 'ok\n' });
    expect(await fsw.call('edit_file', { path: 'img.bin', old_string: 'PNG', new_string: 'X' })).toEqual({
      isError: true,
      text: 'img.bin looks binary (a NUL byte at offset 4); only UTF-8 text files can be edited. Use write_file to replace it whole.',
    });
    expect(await fsw.call('edit_file', { path: 'latin1.txt', old_string: 'caf', new_string: 'X' })).toEqual({
      isError: true,
      text: 'latin1.txt is not valid UTF-8 (an invalid byte at offset 3); only UTF-8 text files can be edited, so nothing was changed. Use write_file to replace it whole.',
    });
    expect(await fsw.call('edit_file', { path: 'none.txt', old_string: 'a', new_string: 'b' })).toEqual({ isError: true, text: 'none.txt does not exist; use write_file to create it' });
    expect(await fsw.call('edit_file', { path: 'ok.txt', old_string: '', new_string: 'b' })).toEqual({
      isError: true,
      text: 'old_string is empty; give the exact text to replace (use write_file to write a whole file)',
    });
    expect(await fsw.call('edit_file', { path: 'ok.txt', old_string: 'ok', new_string: 'ok' })).toEqual({ isError: true, text: 'old_string and new_string are identical; the edit would change nothing' });
    expect(bytes('latin1.txt')).toEqual(Buffer.from('caf\xe9\n', 'latin1'));
  });

  it('refuses a file over the byte cap without reading it', async () => {
    fsw = await startFsWrite({ 'big.txt': 'y'.repeat(2048) }, { policy: { limits: { max_file_bytes: 1024 } } });
    expect(await fsw.call('edit_file', { path: 'big.txt', old_string: 'y', new_string: 'z', replace_all: true })).toEqual({
      isError: true,
      text: 'big.txt is 2.0 KiB, over the 1.0 KiB cap of fs_write_policy.yaml (limits.max_file_bytes); nothing was changed',
    });
  });

  it('shows a dry run and leaves the file alone', async () => {
    fsw = await startFsWrite({ 'd.txt': 'keep\n' });
    const before = statSync(fsw.ws.path('d.txt')).mtimeMs;
    const result = await fsw.call('edit_file', { path: 'd.txt', old_string: 'keep', new_string: 'change', dry_run: true });
    expect(result.text).toBe('Dry run: would update d.txt (1 replacement; +1 −1 lines); nothing was written.\n```diff\n--- a/d.txt\n+++ b/d.txt\n@@ -1 +1 @@\n-keep\n+change\n```');
    expect(statSync(fsw.ws.path('d.txt')).mtimeMs).toBe(before);
  });
});

describe('multi_edit', () => {
  it('applies edits in order to the evolving content, reports each, and writes once', async () => {
    fsw = await startFsWrite({ 'm.txt': 'alpha\nbeta\ngamma\n' });
    const result = await fsw.call('multi_edit', {
      path: 'm.txt',
      edits: [
        { old_string: 'alpha', new_string: 'ALPHA' },
        { old_string: 'ALPHA\nbeta', new_string: 'ALPHA\nBETA' },
        { old_string: 'delta', new_string: 'x' },
        { old_string: 'a', new_string: 'A', replace_all: true },
      ],
    });
    const lines = result.text.split('\n');
    expect(result.isError).toBe(false);
    expect(lines[0]).toMatch(/^Updated m\.txt \(3 of 4 edits applied, 1 failed; \+3 −3 lines; 17 B; sha256 [0-9a-f]{64}\)$/);
    expect(lines.slice(1, 5)).toEqual([
      'edit 1: applied (1 replacement)',
      'edit 2: applied (1 replacement)',
      'edit 3: failed: old_string was not found in m.txt. Nothing in the file is close to old_string; read the file again to see its current content.',
      'edit 4: applied (2 replacements)',
    ]);
    expect(bytes('m.txt').toString()).toBe('ALPHA\nBETA\ngAmmA\n');
  });

  it('writes nothing when no edit applies, and says why for each', async () => {
    fsw = await startFsWrite({ 'm.txt': 'one one\n' });
    expect(await fsw.call('multi_edit', { path: 'm.txt', edits: [{ old_string: 'one', new_string: '1' }, { old_string: 'two', new_string: '2' }] })).toEqual({
      isError: true,
      text: [
        'none of the 2 edits applied to m.txt; nothing was written.',
        'edit 1: failed: old_string occurs 2 times in m.txt (on line 1); include more surrounding text to pick one, or set replace_all: true to replace every one',
        'edit 2: failed: old_string was not found in m.txt. Nothing in the file is close to old_string; read the file again to see its current content.',
      ].join('\n'),
    });
    expect(bytes('m.txt').toString()).toBe('one one\n');
  });
});
