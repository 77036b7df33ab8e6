import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineFile, numbered, startFs, type FsHarness } from './helpers.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const lineTexts = (from: number, to: number, text: (n: number) => string = (n) => `line ${n}`) => range(from, to).map(text);

const PNG = Buffer.from('89504e470d0a1a0a0000000d494844520000000100000001', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
const GIF = Buffer.from('474946383961010001000000002c', 'hex');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8L'), Buffer.from([0x0d, 0, 0, 0, 0x2f, 0, 0, 0])]);

describe('read_file: text', () => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs({
      'tabs.txt': 'a\tb\n\tindented\n',
      'five-thousand.txt': lineFile(5000),
      'ten.txt': lineFile(10),
      'ten-again.txt': lineFile(10, (n) => `row ${n}`),
      'long-lines.txt': `${'a'.repeat(2500)}\n${'b'.repeat(10_000)}\nshort\n`,
      'wide.txt': lineFile(2000, () => 'x'.repeat(1000)),
      'crlf.txt': 'first\r\nsecond\r\n',
      'no-eol.txt': 'x\ny',
      'empty.txt': '',
      'unicode.txt': 'grüße\n日本語\n',
      'text.png': 'not really a picture\n',
      'dir/inner.txt': 'inner\n',
    });
  });
  afterAll(async () => {
    await fs.close();
  });

  it('numbers lines like cat -n and keeps tabs', async () => {
    expect(await fs.read('tabs.txt')).toMatchObject({ isError: false, text: '     1\ta\tb\n     2\t\tindented' });
    expect((await fs.read('unicode.txt')).text).toBe('     1\tgrüße\n     2\t日本語');
  });

  it('shows 2000 lines by default with a footer that says how to read on', async () => {
    const result = await fs.read('five-thousand.txt');
    expect(result.isError).toBe(false);
    expect(result.text).toBe(`${numbered(lineTexts(1, 2000))}\n[lines 1-2000 of 5000; next: offset=2001]`);
  });

  it('reads a window chosen with offset and limit', async () => {
    expect((await fs.read('five-thousand.txt', { offset: 2001, limit: 3 })).text).toBe(
      `${numbered(lineTexts(2001, 2003), 2001)}\n[lines 2001-2003 of 5000; next: offset=2004]`,
    );
    expect((await fs.read('five-thousand.txt', { offset: 4001 })).text).toBe(`${numbered(lineTexts(4001, 5000), 4001)}\n[lines 4001-5000 of 5000; end of file]`);
    expect((await fs.read('ten.txt', { offset: 10 })).text).toBe('    10\tline 10\n[lines 10-10 of 10; end of file]');
  });

  it('shows a whole small file without a footer', async () => {
    expect((await fs.read('ten.txt')).text).toBe(numbered(lineTexts(1, 10)));
    expect((await fs.read('ten.txt', { offset: 1, limit: 10 })).text).toBe(numbered(lineTexts(1, 10)));
  });

  it('reads the last lines of a small file with absolute line numbers on the first read', async () => {
    expect((await fs.read('ten-again.txt', { offset: -3 })).text).toBe(
      `${numbered(['row 8', 'row 9', 'row 10'], 8)}\n[lines 8-10 of 10; end of file]`,
    );
    expect((await fs.read('ten-again.txt', { offset: -3, limit: 2 })).text).toBe(`${numbered(['row 8', 'row 9'], 8)}\n[lines 8-9 of 10; next: offset=10]`);
    expect((await fs.read('ten-again.txt', { offset: -50 })).text).toBe(numbered(lineTexts(1, 10, (n) => `row ${n}`)));
    expect((await fs.read('five-thousand.txt', { offset: -2 })).text).toBe(`${numbered(['line 4999', 'line 5000'], 4999)}\n[lines 4999-5000 of 5000; end of file]`);
  });

  it('refuses an offset past the end, saying how many lines there are', async () => {
    expect(await fs.read('five-thousand.txt', { offset: 6000 })).toMatchObject({
      isError: true,
      text: 'five-thousand.txt has 5000 lines; offset 6000 is past the end (use offset=1, or a negative offset to read from the end)',
    });
    expect(await fs.read('ten.txt', { offset: 11 })).toMatchObject({
      isError: true,
      text: 'ten.txt has 10 lines; offset 11 is past the end (use offset=1, or a negative offset to read from the end)',
    });
  });

  it('cuts lines over 2000 characters with a marker', async () => {
    const result = await fs.read('long-lines.txt');
    expect(result.text).toBe(
      [
        `     1\t${'a'.repeat(2000)}… [line truncated: 500 more characters]`,
        // Bytes past 4 × line_max_chars are never decoded, so the rest of a very long line is counted in bytes.
        `     2\t${'b'.repeat(2000)}… [line truncated: 8000 more bytes]`,
        '     3\tshort',
      ].join('\n'),
    );
  });

  it('stops at the 256 KiB byte cap and says so in the footer', async () => {
    // Each line is 1000 bytes plus its newline: 261 lines fit in 262144 bytes, the 262nd does not.
    const first = await fs.read('wide.txt');
    expect(first.text).toBe(`${numbered(Array(261).fill('x'.repeat(1000)))}\n[lines 1-261 of 2000 (stopped at the byte cap); next: offset=262]`);
    const second = await fs.read('wide.txt', { offset: 262 });
    expect(second.text).toBe(`${numbered(Array(261).fill('x'.repeat(1000)), 262)}\n[lines 262-522 of 2000 (stopped at the byte cap); next: offset=523]`);
  });

  it('strips the CR of CRLF line ends', async () => {
    expect((await fs.read('crlf.txt')).text).toBe('     1\tfirst\n     2\tsecond');
  });

  it('reads a last line that has no newline', async () => {
    expect((await fs.read('no-eol.txt')).text).toBe('     1\tx\n     2\ty');
    expect((await fs.read('no-eol.txt', { offset: 2 })).text).toBe('     2\ty\n[lines 2-2 of 2; end of file]');
    expect((await fs.read('no-eol.txt', { offset: -1 })).text).toBe('     2\ty\n[lines 2-2 of 2; end of file]');
  });

  it('says an empty file is empty', async () => {
    expect(await fs.read('empty.txt')).toMatchObject({ isError: false, text: '[empty.txt is empty]' });
    expect(await fs.read('empty.txt', { offset: -5 })).toMatchObject({ isError: false, text: '[empty.txt is empty]' });
  });

  it('decides text or image by content, not by the file name', async () => {
    expect(await fs.read('text.png')).toMatchObject({ isError: false, text: '     1\tnot really a picture' });
  });

  it('refuses a folder and points to list_files', async () => {
    expect(await fs.read('dir')).toMatchObject({ isError: true, text: 'dir is a folder; only regular files can be read (use list_files for folders)' });
    expect(await fs.read('.')).toMatchObject({ isError: true, text: '. is a folder; only regular files can be read (use list_files for folders)' });
  });

  it('reads a file by its absolute path inside the root', async () => {
    expect(await fs.read(fs.ws.path('dir/inner.txt'))).toMatchObject({ isError: false, text: '     1\tinner' });
  });
});

describe('read_file: files larger than count_lines_max_bytes', () => {
  let fs: FsHarness;
  const text = lineFile(3000); // 28.2 KiB, more than the 1 KiB limit set below
  beforeAll(async () => {
    fs = await startFs({}, { policy: { limits: { count_lines_max_bytes: 1024 } } });
  });
  afterAll(async () => {
    await fs.close();
  });

  it('numbers the last lines from the end and says how to read earlier ones', async () => {
    fs.ws.write('tail.txt', text);
    expect(statSync(fs.ws.path('tail.txt')).size).toBe(28_893);
    const uncounted = 'the total line count is not computed for files this large';
    expect((await fs.read('tail.txt', { offset: -3 })).text).toBe(
      `    -3\tline 2998\n    -2\tline 2999\n    -1\tline 3000\n[the last 3 lines of a 28.2 KiB file; ${uncounted}; earlier lines: offset=-2003 limit=2000]`,
    );
    expect((await fs.read('tail.txt', { offset: -3, limit: 2 })).text).toBe(
      `    -3\tline 2998\n    -2\tline 2999\n[lines -3 to -2 from the end of a 28.2 KiB file; ${uncounted}; next: offset=-1]`,
    );
    expect((await fs.read('tail.txt', { offset: -1 })).text).toBe(`    -1\tline 3000\n[the last 1 lines of a 28.2 KiB file; ${uncounted}; earlier lines: offset=-2001 limit=2000]`);
  });

  it('does not count the total of a forward window, and gives the size instead', async () => {
    fs.ws.write('forward.txt', text);
    expect((await fs.read('forward.txt')).text).toBe(`${numbered(lineTexts(1, 2000))}\n[lines 1-2000; next: offset=2001; file is 28.2 KiB]`);
    expect((await fs.read('forward.txt', { offset: 100, limit: 2 })).text).toBe(`${numbered(['line 100', 'line 101'], 100)}\n[lines 100-101; next: offset=102; file is 28.2 KiB]`);
  });

  it('knows the total once a read has reached the end, and then numbers tail reads absolutely', async () => {
    fs.ws.write('learned.txt', text);
    expect((await fs.read('learned.txt', { offset: 2999 })).text).toBe('  2999\tline 2999\n  3000\tline 3000\n[lines 2999-3000 of 3000; end of file]');
    expect((await fs.read('learned.txt', { offset: -2 })).text).toBe('  2999\tline 2999\n  3000\tline 3000\n[lines 2999-3000 of 3000; end of file]');
    expect(await fs.read('learned.txt', { offset: 3001 })).toMatchObject({
      isError: true,
      text: 'learned.txt has 3000 lines; offset 3001 is past the end (use offset=1, or a negative offset to read from the end)',
    });
  });

  it('stops a tail read at the byte cap and says where to continue', async () => {
    // The last 2000 lines are "1001 xxx…" to "3000 xxx…": 1005 bytes plus a newline each, so 260 fit in 256 KiB.
    fs.ws.write('wide-tail.txt', lineFile(3000, (n) => `${n} ${'x'.repeat(1000)}`));
    const result = await fs.read('wide-tail.txt', { offset: -2000 });
    const shown = range(1001, 1260).map((n, i) => `${String(i - 2000).padStart(6)}\t${n} ${'x'.repeat(1000)}`);
    expect(result.text).toBe(
      `${shown.join('\n')}\n[lines -2000 to -1741 from the end of a 2.9 MiB file (stopped at the byte cap); the total line count is not computed for files this large; next: offset=-1740]`,
    );
  });
});

describe('read_file: a deep window in a multi-megabyte file', () => {
  const COUNT = 300_000;
  const rowText = (n: number) => `row ${n} ${'é'.repeat(n % 5)}|`;
  let counted: FsHarness;
  let uncounted: FsHarness;
  beforeAll(async () => {
    const content = lineFile(COUNT, rowText);
    counted = await startFs({ 'deep.txt': content });
    uncounted = await startFs({ 'deep.txt': content }, { policy: { limits: { count_lines_max_bytes: 1024 } } });
    expect(statSync(counted.ws.path('deep.txt')).size).toBeGreaterThan(4 * 1024 * 1024);
  });
  afterAll(async () => {
    await counted.close();
    await uncounted.close();
  });

  it('returns the same correct lines when the window is read again (from the sparse line index)', async () => {
    const expected = `${numbered(lineTexts(250_000, 250_002, rowText), 250_000)}\n[lines 250000-250002 of 300000; next: offset=250003]`;
    const first = await counted.read('deep.txt', { offset: 250_000, limit: 3 });
    const second = await counted.read('deep.txt', { offset: 250_000, limit: 3 });
    expect(first.text).toBe(expected);
    expect(second.text).toBe(expected);
    expect((await counted.read('deep.txt', { offset: 8193, limit: 2 })).text).toBe(
      `${numbered(lineTexts(8193, 8194, rowText), 8193)}\n[lines 8193-8194 of 300000; next: offset=8195]`,
    );
    expect((await counted.read('deep.txt', { offset: 299_999 })).text).toBe(`${numbered(lineTexts(299_999, 300_000, rowText), 299_999)}\n[lines 299999-300000 of 300000; end of file]`);
  });

  it('returns correct lines when the index was only built up to an earlier window', async () => {
    const at = (offset: number) => `${numbered(lineTexts(offset, offset + 1, rowText), offset)}\n[lines ${offset}-${offset + 1}; next: offset=${offset + 2}; file is 4.8 MiB]`;
    expect((await uncounted.read('deep.txt', { offset: 100_000, limit: 2 })).text).toBe(at(100_000));
    expect((await uncounted.read('deep.txt', { offset: 250_000, limit: 2 })).text).toBe(at(250_000));
    expect((await uncounted.read('deep.txt', { offset: 250_000, limit: 2 })).text).toBe(at(250_000));
    expect((await uncounted.read('deep.txt', { offset: 16_384, limit: 2 })).text).toBe(at(16_384));
    expect((await uncounted.read('deep.txt', { offset: 16_385, limit: 2 })).text).toBe(at(16_385));
  });
});

describe('read_file: images and binary files', () => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs({
      'pic.png': PNG,
      'photo.jpg': JPEG,
      'anim.gif': GIF,
      'image.webp': WEBP,
      'big.png': Buffer.concat([PNG, Buffer.alloc(200, 7)]),
      'nul.dat': Buffer.from('abc\0def'),
      'archive.zip': Buffer.from('504b0304140000000800', 'hex'),
      'program': Buffer.from('7f454c4602010100000000000000000002003e00', 'hex'),
      'utf16.txt': Buffer.from('\ufeffhi', 'utf16le'),
    }, { policy: { limits: { image_max_bytes: 100 } } });
  });
  afterAll(async () => {
    await fs.close();
  });

  it.each([
    ['pic.png', PNG, 'image/png'],
    ['photo.jpg', JPEG, 'image/jpeg'],
    ['anim.gif', GIF, 'image/gif'],
    ['image.webp', WEBP, 'image/webp'],
  ])('returns %s as MCP image content', async (name, bytes, mimeType) => {
    const result = await fs.read(name);
    expect(result.isError).toBe(false);
    expect(result.content).toEqual([
      { type: 'text', text: `[image ${name}: ${mimeType}, ${bytes.length} B]` },
      { type: 'image', mimeType, data: bytes.toString('base64') },
    ]);
    expect(Buffer.from(result.content[1]!.data!, 'base64').equals(bytes)).toBe(true);
  });

  it('gives a marker instead of an image over image_max_bytes', async () => {
    const result = await fs.read('big.png');
    expect(result.content).toEqual([{ type: 'text', text: '[image file big.png: image/png, 224 B; larger than the 100 B image limit, so it is not shown]' }]);
  });

  it.each([
    ['nul.dat', '[binary file nul.dat: 7 B, detected type: unknown binary (contains NUL bytes); its bytes are not shown]'],
    ['archive.zip', '[binary file archive.zip: 10 B, detected type: application/zip; its bytes are not shown]'],
    ['program', '[binary file program: 20 B, detected type: application/x-elf (executable); its bytes are not shown]'],
    ['utf16.txt', '[binary file utf16.txt: 6 B, detected type: text/plain; charset=utf-16le; its bytes are not shown]'],
  ])('gives %s a marker with size and detected type', async (name, marker) => {
    const result = await fs.read(name);
    expect(result).toMatchObject({ isError: false, text: marker });
    expect(result.content).toHaveLength(1);
  });
});

describe('read_file: special files', () => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs({ 'a.txt': 'alpha\n', 'src/b.ts': 'alpha beta\n' });
    const fd = openSync(fs.ws.path('huge.bin'), 'w');
    ftruncateSync(fd, 5 * 1024 ** 3); // sparse: no disk blocks are written
    closeSync(fd);
    execFileSync('mkfifo', [fs.ws.path('pipe')]);
  });
  afterAll(async () => {
    await fs.close();
  });

  it('gives a 5 GB sparse file a binary marker', async () => {
    expect(statSync(fs.ws.path('huge.bin')).size).toBe(5 * 1024 ** 3);
    expect(await fs.read('huge.bin')).toMatchObject({
      isError: false,
      text: '[binary file huge.bin: 5.0 GiB, detected type: unknown binary (contains NUL bytes); its bytes are not shown]',
    });
    expect(await fs.read('huge.bin', { offset: -10 })).toMatchObject({ isError: false, text: expect.stringMatching(/^\[binary file huge\.bin: 5\.0 GiB/) });
  });

  it('keeps grep, glob_files and list_files working beside the 5 GB file', async () => {
    expect(await fs.call('grep', { pattern: 'alpha' })).toMatchObject({ isError: false, text: 'a.txt\nsrc/b.ts' });
    expect(await fs.call('grep', { pattern: 'alpha', output_mode: 'count' })).toMatchObject({ isError: false, text: 'a.txt:1\nsrc/b.ts:1\n[2 matching lines in 2 files]' });
    const globbed = await fs.call('glob_files', { pattern: '*.bin' });
    expect(globbed).toMatchObject({ isError: false, text: 'huge.bin' });
    expect(await fs.call('list_files', {})).toMatchObject({
      isError: false,
      text: './\n  src/\n  a.txt (6 B)\n  huge.bin (5.0 GiB)\n  pipe (special file)',
    });
  });

  it('refuses a named pipe without waiting for a writer', async () => {
    expect(await fs.read('pipe')).toMatchObject({ isError: true, text: 'pipe is a named pipe; only regular files can be read' });
    expect(await fs.read('a.txt')).toMatchObject({ isError: false, text: '     1\talpha' });
  });

  it('reads a file changed after an earlier read as it is now', async () => {
    fs.ws.write('changing.txt', lineFile(3));
    expect((await fs.read('changing.txt')).text).toBe(numbered(lineTexts(1, 3)));
    writeFileSync(fs.ws.path('changing.txt'), lineFile(5, (n) => `new ${n}`));
    expect((await fs.read('changing.txt', { offset: -2 })).text).toBe(`${numbered(['new 4', 'new 5'], 4)}\n[lines 4-5 of 5; end of file]`);
  });
});
