import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, initRepo, ODD_NAME, ODD_NAME_SHOWN, startGit, writeRawName, type GitHarness } from './helpers.js';

type ShowFile = { path: string; commit: string; size: number; binary: boolean; first_line: number | null; last_line: number | null; total_lines: number | null; next_offset: number | null; content: string };

const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}\n`).join('');
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${String(from + i).padStart(6)}\tline ${from + i}`).join('\n');

describe('git_show_file', () => {
  let h: GitHarness;
  let repo: string;
  let old: string;
  const show = (args: Record<string, unknown>) => h.call<ShowFile>('git_show_file', { repo: 'repo', rev: 'HEAD', ...args });
  beforeEach(async () => {
    h = await startGit();
    repo = initRepo(h.ws.path('repo'));
    old = commit(repo, 'old', { 'f.txt': lines(5), 'src/x.ts': 'x\n' });
    commit(repo, 'new', { 'f.txt': lines(3000), 'empty.txt': '', 'bin.dat': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]), '.env': 'SECRET=1\n', 'crlf.txt': 'a\r\nb\r\n' });
  });
  afterEach(async () => {
    await h.close();
  });

  it('numbers and pages a file like read_file, at any commit', async () => {
    const page = await show({ path: 'f.txt', limit: 2 });
    expect(page.text).toBe(`${numbered(1, 2)}\n[lines 1-2 of 3000; next: offset=3]`);
    expect(page.structured).toMatchObject({ path: 'f.txt', first_line: 1, last_line: 2, total_lines: 3000, next_offset: 3, content: 'line 1\nline 2', binary: false });
    const next = await show({ path: 'f.txt', offset: 2999 });
    expect(next.text).toBe(`${numbered(2999, 3000)}\n[lines 2999-3000 of 3000; end of file]`);
    expect(next.structured.next_offset).toBeNull();
    const byDefault = await show({ path: 'f.txt' });
    expect(byDefault.text.endsWith('[lines 1-2000 of 3000; next: offset=2001]')).toBe(true);
    const atOld = await show({ path: 'f.txt', rev: old });
    expect(atOld.text).toBe(numbered(1, 5));
    expect(atOld.structured).toMatchObject({ commit: old, total_lines: 5, next_offset: null });
    expect((await show({ path: 'crlf.txt' })).structured.content).toBe('a\nb');
  });

  it('says so when one line is longer than everything it may read', async () => {
    await h.close();
    h = await startGit({ policy: { limits: { max_read_bytes: 1024 * 1024 } } });
    repo = initRepo(h.ws.path('repo'));
    const head = commit(repo, 'long line', { 'one.txt': `${'z'.repeat(3 * 1024 * 1024)}\n` });
    const result = await show({ path: 'one.txt' });
    expect(result).toMatchObject({ isError: true, text: `one.txt at HEAD (${head.slice(0, 12)}): the read stopped at limits.max_read_bytes before line 1 ended (a line longer than the limit); it cannot be shown` });
  });

  it('reads from the end with a negative offset', async () => {
    const tail = await show({ path: 'f.txt', offset: -3 });
    expect(tail.text).toBe(`${numbered(2998, 3000)}\n[lines 2998-3000 of 3000; end of file]`);
  });

  it('marks binary and empty files, and refuses folders, missing paths and secrets', async () => {
    expect((await show({ path: 'bin.dat' })).text).toMatch(/^\[binary file bin\.dat at HEAD \([0-9a-f]{12}\): 7 B; its bytes are not shown\]$/);
    expect((await show({ path: 'bin.dat' })).structured).toMatchObject({ binary: true, size: 7, content: '' });
    expect((await show({ path: 'empty.txt' })).text).toMatch(/^\[empty\.txt is empty at HEAD/);
    expect((await show({ path: 'src' })).text).toMatch(/^src is a folder at HEAD \([0-9a-f]{12}\); give the path of a file in it$/);
    expect((await show({ path: 'nope.txt' })).text).toMatch(/^nope\.txt does not exist at HEAD \([0-9a-f]{12}\)$/);
    expect((await show({ path: 'f.txt', offset: 5000 })).text).toMatch(/^f\.txt has 3000 lines at HEAD .*; offset 5000 is past the end/);
    expect((await show({ path: '.env' })).text).toBe('.env is a protected secret (matches `.env*` in deny_read of git_policy.yaml); its content is not shown');
    expect((await show({ path: '.' })).text).toBe('path names the whole tree; give a file path');
  });

  it('reads a file whose name is not UTF-8, given as shown', async () => {
    writeRawName(repo, ODD_NAME, 'odd content\n');
    commit(repo, 'odd');
    const result = await show({ path: ODD_NAME_SHOWN });
    expect(result.text).toBe('     1\todd content');
    expect(result.structured.path).toBe(ODD_NAME_SHOWN);
  });

  it('cuts long lines and stops at the byte cap', async () => {
    commit(repo, 'long', { 'long.txt': `${'y'.repeat(5000)}\nshort\n` });
    const small = await startGit({ ws: h.ws, policy: { limits: { line_max_chars: 100, file_max_bytes: 1024 } } });
    const long = await small.call<ShowFile>('git_show_file', { repo: 'repo', rev: 'HEAD', path: 'long.txt' });
    const capped = await small.call<ShowFile>('git_show_file', { repo: 'repo', rev: 'HEAD', path: 'f.txt' });
    await small.close();
    expect(long.text.split('\n')[0]).toBe(`     1\t${'y'.repeat(100)}… [line truncated: 4900 more bytes]`);
    expect(capped.text).toMatch(/\n\[lines 1-125 of 3000 \(stopped at the byte cap\); next: offset=126\]$/);
  });

  it('knows an empty repository has no commits', async () => {
    initRepo(h.ws.path('empty'));
    expect((await h.call('git_show_file', { repo: 'empty', rev: 'HEAD', path: 'a' })).text).toBe('rev "HEAD": empty has no commits yet');
  });
});
