import { mkdirSync, symlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFs, type FsHarness } from './helpers.js';

const FILES = {
  'b.txt': 'hello',
  'a/x.txt': '1234',
  'a/y/z.txt': '',
  'a/y/deeper/w.txt': 'w',
  'z/q.txt': 'q',
  '.git/HEAD': 'ref: refs/heads/main\n',
  'node_modules/pkg/index.js': 'module.exports = 1;\n',
  '.dot': 'd',
  'big.bin': new Uint8Array(3000),
  '.env': 'SECRET=1\n',
};

describe('list_files', () => {
  let fs: FsHarness;
  const list = (args: Record<string, unknown> = {}) => fs.call('list_files', args);
  beforeAll(async () => {
    fs = await startFs(FILES);
    mkdirSync(fs.ws.path('empty'));
    symlinkSync('b.txt', fs.ws.path('in-link'));
    symlinkSync('a', fs.ws.path('dir-link'));
    symlinkSync('/etc/passwd', fs.ws.path('out-link'));
    symlinkSync('../../outside', fs.ws.path('a/up-link'));
    symlinkSync('missing.txt', fs.ws.path('dangling'));
  });
  afterAll(async () => {
    await fs.close();
  });

  it('shows one level as a tree: folders first, then files with sizes and symlinks with targets', async () => {
    expect(await list()).toMatchObject({
      isError: false,
      text: [
        './',
        '  .git/ (not descended)',
        '  a/',
        '  empty/',
        '  node_modules/ (not descended)',
        '  z/',
        '  .dot (1 B)',
        '  .env (9 B)',
        '  b.txt (5 B)',
        '  big.bin (2.9 KiB)',
        '  dangling -> missing.txt',
        '  dir-link -> a',
        '  in-link -> b.txt',
        '  out-link -> /etc/passwd (outside the roots)',
      ].join('\n'),
    });
  });

  it('descends depth levels, but never into .git or node_modules, and never follows symlinks', async () => {
    expect((await list({ depth: 3 })).text).toBe(
      [
        './',
        '  .git/ (not descended)',
        '  a/',
        '    y/',
        '      deeper/',
        '      z.txt (0 B)',
        '    up-link -> ../../outside (outside the roots)',
        '    x.txt (4 B)',
        '  empty/',
        '  node_modules/ (not descended)',
        '  z/',
        '    q.txt (1 B)',
        '  .dot (1 B)',
        '  .env (9 B)',
        '  b.txt (5 B)',
        '  big.bin (2.9 KiB)',
        '  dangling -> missing.txt',
        '  dir-link -> a',
        '  in-link -> b.txt',
        '  out-link -> /etc/passwd (outside the roots)',
      ].join('\n'),
    );
  });

  it('lists a sub-folder by path, shown relative to the root', async () => {
    expect((await list({ path: 'a', depth: 2 })).text).toBe(
      ['a/', '  y/', '    deeper/', '    z.txt (0 B)', '  up-link -> ../../outside (outside the roots)', '  x.txt (4 B)'].join('\n'),
    );
    expect((await list({ path: 'a/y/deeper' })).text).toBe('a/y/deeper/\n  w.txt (1 B)');
    expect((await list({ path: fs.ws.path('z') })).text).toBe('z/\n  q.txt (1 B)');
  });

  it('lists .git or node_modules when asked for them by path', async () => {
    expect((await list({ path: 'node_modules' })).text).toBe('node_modules/\n  pkg/');
    expect((await list({ path: '.git' })).text).toBe('.git/\n  HEAD (21 B)');
  });

  it('says a folder is empty', async () => {
    expect(await list({ path: 'empty' })).toMatchObject({ isError: false, text: 'empty/\n  (empty)' });
  });

  it('refuses a file and points to read_file', async () => {
    expect(await list({ path: 'b.txt' })).toMatchObject({ isError: true, text: 'b.txt is a file, not a folder; use read_file to read it' });
    expect(await list({ path: 'in-link' })).toMatchObject({ isError: true, text: 'in-link is a file, not a folder; use read_file to read it' });
  });

  it('lists a folder reached through a symlink inside the roots under its real path', async () => {
    expect((await list({ path: 'dir-link' })).text).toBe('a/\n  y/\n  up-link -> ../../outside (outside the roots)\n  x.txt (4 B)');
  });

  it('refuses folders outside the roots and secret folders', async () => {
    expect(await list({ path: 'out-link' })).toMatchObject({
      isError: true,
      text: `out-link resolves through a symlink to /etc/passwd, which is outside the allowed roots (${fs.ws.root})`,
    });
    expect(await list({ path: '..' })).toMatchObject({ isError: true, text: `.. is outside the allowed roots (${fs.ws.root}); give a path inside them` });
    fs.ws.write('.ssh/config', 'Host x\n');
    expect(await list({ path: '.ssh' })).toMatchObject({
      isError: true,
      text: '.ssh is a protected secret (matches `.ssh/` in deny_read of fs_policy.yaml); it cannot be read',
    });
  });

  it('refuses a depth outside 1-5', async () => {
    expect(await list({ depth: 0 })).toMatchObject({ isError: true, text: 'Invalid arguments for fs:list_files: `depth`: Too small: expected number to be >=1' });
    expect(await list({ depth: 6 })).toMatchObject({ isError: true, text: 'Invalid arguments for fs:list_files: `depth`: Too big: expected number to be <=5' });
  });
});

describe('list_files entry cap', () => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs(
      { 'f1.txt': '1', 'f2.txt': '2', 'f3.txt': '3', 'f4.txt': '4', 'sub/s1.txt': 's', 'sub/s2.txt': 's', 'sub/s3.txt': 's' },
      { policy: { limits: { list_max_entries: 2 } } },
    );
  });
  afterAll(async () => {
    await fs.close();
  });

  it('shows at most list_max_entries per folder with an "N more entries" line', async () => {
    expect((await fs.call('list_files', {})).text).toBe('./\n  sub/\n  f1.txt (1 B)\n  … 3 more entries');
    expect((await fs.call('list_files', { depth: 2 })).text).toBe('./\n  sub/\n    s1.txt (1 B)\n    s2.txt (1 B)\n    … 1 more entries\n  f1.txt (1 B)\n  … 3 more entries');
  });
});
