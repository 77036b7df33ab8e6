import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, ODD_NAME, ODD_NAME_SHOWN, startGit, writeRawName, type GitHarness } from './helpers.js';

type Blame = {
  path: string;
  commit: string;
  total_lines: number;
  lines: { line: number; commit: string; original_line: number; text: string }[];
  commits: { hash: string; author: string; email: string; date: string; summary: string }[];
  next_start_line: number | null;
};

describe('git_blame', () => {
  let h: GitHarness;
  let repo: string;
  const blame = (args: Record<string, unknown>) => h.call<Blame>('git_blame', { repo: 'repo', ...args });
  beforeEach(async () => {
    h = await startGit();
    repo = initRepo(h.ws.path('repo'));
  });
  afterEach(async () => {
    await h.close();
  });

  it('names the commit, author and date of each line', async () => {
    const first = commit(repo, 'add file', { 'f.txt': 'one\ntwo\nthree\n' }, '2024-05-01T10:00:00+02:00');
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'noop']);
    git(repo, ['config', 'user.name', 'Bob']);
    const second = (() => {
      const id = commit(repo, 'change two', { 'f.txt': 'one\nTWO\nthree\n' }, '2024-06-01T12:30:00-05:00');
      return id;
    })();
    const result = await blame({ path: 'f.txt' });
    expect(result.structured).toEqual({
      path: 'f.txt',
      commit: second,
      total_lines: 3,
      lines: [
        { line: 1, commit: first, original_line: 1, text: 'one' },
        { line: 2, commit: second, original_line: 2, text: 'TWO' },
        { line: 3, commit: first, original_line: 3, text: 'three' },
      ],
      commits: [
        { hash: first, author: 'Ada Tester', email: 'ada@example.com', date: '2024-05-01T10:00:00+02:00', summary: 'add file' },
        { hash: second, author: 'Ada Tester', email: 'ada@example.com', date: '2024-06-01T12:30:00-05:00', summary: 'change two' },
      ],
      next_start_line: null,
    });
    expect(result.text.split('\n')[0]).toBe(`${first.slice(0, 12)} 2024-05-01 Ada Tester       1\tone`);
    expect(result.text).toContain(`Commits:\n${first.slice(0, 12)} 2024-05-01T10:00:00+02:00 Ada Tester <ada@example.com> add file`);
    const atFirst = await blame({ path: 'f.txt', rev: first });
    expect(atFirst.structured.lines.map((l) => l.text)).toEqual(['one', 'two', 'three']);
  });

  it('blames a range, at most blame_max_lines at a time, and says where to go on', async () => {
    commit(repo, 'long', { 'f.txt': Array.from({ length: 50 }, (_, i) => `l${i + 1}\n`).join('') });
    const range = await blame({ path: 'f.txt', start_line: 10, end_line: 12 });
    expect(range.structured.lines.map((l) => l.line)).toEqual([10, 11, 12]);
    expect(range.structured.next_start_line).toBe(13);
    const small = await startGit({ ws: h.ws, policy: { limits: { blame_max_lines: 20 } } });
    const capped = await small.call<Blame>('git_blame', { repo: 'repo', path: 'f.txt', start_line: 5 });
    const end = await small.call<Blame>('git_blame', { repo: 'repo', path: 'f.txt', start_line: 45, end_line: 99 });
    await small.close();
    expect(capped.structured.lines.map((l) => l.line)).toEqual(Array.from({ length: 20 }, (_, i) => i + 5));
    expect(capped.text).toContain('[lines 5-24 of 50 (at most 20 lines per call); next: start_line=25]');
    expect(end.structured).toMatchObject({ next_start_line: null });
    expect(end.text).toContain('[lines 45-50 of 50; end of file]');
    expect((await blame({ path: 'f.txt', start_line: 51 })).text).toBe('f.txt has 50 lines at HEAD (' + git(repo, ['rev-parse', 'HEAD']).trim().slice(0, 12) + '); start_line 51 is past the end');
    expect((await blame({ path: 'f.txt', start_line: 5, end_line: 2 })).text).toBe('end_line 2 is before start_line 5');
  });

  it('refuses what it cannot blame, with a clear reason', async () => {
    expect((await blame({ path: 'f.txt' })).text).toBe('rev "HEAD": repo has no commits yet');
    commit(repo, 'files', { 'bin.dat': Buffer.from([0, 1, 2]), 'empty.txt': '', 'dir/a.txt': 'a\n', '.env': 'K=v\n' });
    writeRawName(repo, ODD_NAME, 'x\n');
    commit(repo, 'odd');
    expect((await blame({ path: 'bin.dat' })).text).toMatch(/^bin\.dat is a binary file at HEAD \(.{12}\); it has no lines to blame$/);
    expect((await blame({ path: 'empty.txt' })).text).toMatch(/^\[empty\.txt is empty at HEAD/);
    expect((await blame({ path: 'dir' })).text).toMatch(/^dir at HEAD \(.{12}\) is a folder; give the path of a file$/);
    expect((await blame({ path: 'missing.txt' })).text).toMatch(/^missing\.txt does not exist at HEAD/);
    expect((await blame({ path: '.env' })).text).toBe('.env is a protected secret (matches `.env*` in deny_read of git_policy.yaml); its lines are not shown');
    expect((await blame({ path: ODD_NAME_SHOWN })).text).toBe(`path "${ODD_NAME_SHOWN.replace(/\\/g, '\\\\')}" is not valid UTF-8, and this command can only be given UTF-8 file names`);
  });
});
