import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, ODD_NAME, ODD_NAME_SHOWN, startGit, writeRawName, type GitHarness } from './helpers.js';

type Log = { commits: { hash: string; parents: string[]; author: string; email: string; date: string; subject: string; body: string }[]; skip: number; next_skip: number | null };

/** `count` commits made with git fast-import, each touching `f<n % 10>.txt`; message `commit <n>`. */
function fastImport(repo: string, count: number): void {
  let stream = '';
  for (let n = 1; n <= count; n++) {
    const message = `commit ${n}`;
    stream += `commit refs/heads/main\ncommitter Bulk <bulk@example.com> ${1_600_000_000 + n} +0000\ndata ${message.length}\n${message}\n`;
    stream += `M 100644 inline f${n % 10}.txt\ndata ${String(n).length + 1}\n${n}\n\n`;
  }
  git(repo, ['fast-import', '--quiet'], { input: stream });
  git(repo, ['reset', '-q', '--hard', 'main']);
}

describe('git_log', () => {
  let h: GitHarness;
  let repo: string;
  beforeEach(async () => {
    h = await startGit();
    repo = initRepo(h.ws.path('repo'));
  });
  afterEach(async () => {
    await h.close();
  });

  it('gives hash, parents, author, date, subject and body, newest first', async () => {
    const first = commit(repo, 'First subject\n\nA body\nof two lines', { 'a.txt': 'a\n' }, '2024-05-01T10:00:00+02:00');
    const second = commit(repo, 'Second', { 'b.txt': 'b\n' }, '2024-05-02T10:00:00+02:00');
    const result = await h.call('git_log', { repo: 'repo' });
    expect(result.structured).toEqual({
      commits: [
        { hash: second, parents: [first], author: 'Ada Tester', email: 'ada@example.com', date: '2024-05-02T10:00:00+02:00', subject: 'Second', body: '' },
        { hash: first, parents: [], author: 'Ada Tester', email: 'ada@example.com', date: '2024-05-01T10:00:00+02:00', subject: 'First subject', body: 'A body\nof two lines' },
      ],
      skip: 0,
      next_skip: null,
    });
    expect(result.text).toBe(
      `${second} 2024-05-02T10:00:00+02:00 Ada Tester <ada@example.com>\n    Second\n\n` +
        `${first} 2024-05-01T10:00:00+02:00 Ada Tester <ada@example.com>\n    First subject\n    \n    A body\n    of two lines\n\n` +
        '[commits 1-2; end of history]',
    );
  });

  it('pages with skip and says where the next page starts', async () => {
    for (let n = 1; n <= 5; n++) commit(repo, `c${n}`, { 'a.txt': `${n}\n` });
    const page = (await h.call<Log>('git_log', { repo: 'repo', max_count: 2 }));
    expect(page.structured.commits.map((c) => c.subject)).toEqual(['c5', 'c4']);
    expect(page.structured.next_skip).toBe(2);
    expect(page.text).toContain('[commits 1-2; more: skip=2]');
    const last = (await h.call<Log>('git_log', { repo: 'repo', max_count: 2, skip: 4 }));
    expect(last.structured).toMatchObject({ skip: 4, next_skip: null });
    expect(last.structured.commits.map((c) => c.subject)).toEqual(['c1']);
    expect(last.text).toContain('[commits 5-5; end of history]');
    expect((await h.call('git_log', { repo: 'repo', skip: 10 })).text).toBe('[no commits after skipping 10]');
  });

  it('filters by path, dates, author, message and range', async () => {
    commit(repo, 'add a', { 'src/a.txt': 'a\n' }, '2024-01-01T00:00:00Z');
    commit(repo, 'fix: bug in b', { 'b.txt': 'b\n' }, '2024-03-01T00:00:00Z');
    git(repo, ['checkout', '-q', '-b', 'feature']);
    commit(repo, 'feature work', { 'src/c.txt': 'c\n' }, '2024-06-01T00:00:00Z');
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'by bob'], { env: { GIT_AUTHOR_NAME: 'Bob', GIT_AUTHOR_EMAIL: 'bob@example.com' } });
    const subjects = async (args: Record<string, unknown>) => ((await h.call('git_log', { repo: 'repo', ...args })).structured as Log).commits.map((c) => c.subject);
    expect(await subjects({ path: 'src' })).toEqual(['feature work', 'add a']);
    expect(await subjects({ path: 'src/a.txt' })).toEqual(['add a']);
    expect(await subjects({ since: '2024-02-01', until: '2024-04-01' })).toEqual(['fix: bug in b']);
    expect(await subjects({ author: 'bob@' })).toEqual(['by bob']);
    expect(await subjects({ grep: 'fix|feature' })).toEqual(['feature work', 'fix: bug in b']);
    expect(await subjects({ rev: 'main..feature' })).toEqual(['by bob', 'feature work']);
    expect(await subjects({ rev: 'main' })).toEqual(['fix: bug in b', 'add a']);
    expect(await subjects({ rev: '..main' })).toEqual([]);
  });

  it('names a missing revision, and an empty repository has no commits', async () => {
    const empty = await h.call('git_log', { repo: 'repo' });
    expect(empty).toMatchObject({ isError: false, text: 'repo has no commits yet.', structured: { commits: [], skip: 0, next_skip: null } });
    expect((await h.call('git_log', { repo: 'repo', rev: 'HEAD~1' })).text).toBe('rev "HEAD~1": repo has no commits yet');
    commit(repo, 'one');
    expect((await h.call('git_log', { repo: 'repo', rev: 'nope' })).text).toBe('rev "nope" does not exist (or is not a commit) in repo');
    expect((await h.call('git_log', { repo: 'repo', rev: 'main..nope' })).text).toBe('rev (right side) "nope" does not exist (or is not a commit) in repo');
    expect((await h.call('git_log', { repo: 'repo', max_count: 501 })).text).toBe('max_count 501 is over the limit of 500 (limits.log_max_count); page with skip instead');
  });

  it('cuts a long message with a marker', async () => {
    commit(repo, `subject\n\n${'x'.repeat(300)}`);
    const small = await startGit({ ws: h.ws, policy: { limits: { body_max_chars: 100 } } });
    const result = (await small.call<Log>('git_log', { repo: 'repo' }));
    await small.close();
    expect(result.structured.commits[0]!.body).toBe(`${'x'.repeat(100)}… [message truncated: 200 more characters]`);
  });

  it('filters by a file name that is not UTF-8', async () => {
    commit(repo, 'plain', { 'a.txt': 'a\n' });
    writeRawName(repo, ODD_NAME, 'x\n');
    commit(repo, 'odd name');
    const result = (await h.call<Log>('git_log', { repo: 'repo', path: ODD_NAME_SHOWN }));
    expect(result.structured.commits.map((c) => c.subject)).toEqual(['odd name']);
  });

  it('reads deep into a long history', async () => {
    fastImport(repo, 3000);
    const result = (await h.call<Log>('git_log', { repo: 'repo', skip: 2500, max_count: 3 }));
    expect(result.structured.commits.map((c) => c.subject)).toEqual(['commit 500', 'commit 499', 'commit 498']);
    expect(result.structured.next_skip).toBe(2503);
    const byPath = (await h.call<Log>('git_log', { repo: 'repo', path: 'f3.txt', max_count: 2 }));
    expect(byPath.structured.commits.map((c) => c.subject)).toEqual(['commit 2993', 'commit 2983']);
  });
});
