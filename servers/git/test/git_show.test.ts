import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, startGit, type GitHarness } from './helpers.js';

type Show = {
  commit: { hash: string; parents: string[]; subject: string; body: string };
  compared_with: string | null;
  files: { path: string; status: string; added: number | null; deleted: number | null; patch?: string }[];
  total_files: number;
  truncated: boolean;
};

describe('git_show', () => {
  let h: GitHarness;
  let repo: string;
  beforeEach(async () => {
    h = await startGit();
    repo = initRepo(h.ws.path('repo'));
  });
  afterEach(async () => {
    await h.close();
  });

  it('shows a commit: its metadata, then its files and patch against the parent', async () => {
    const first = commit(repo, 'first', { 'a.txt': 'a\n' }, '2024-05-01T10:00:00Z');
    const second = commit(repo, 'Change a\n\nBecause.', { 'a.txt': 'A\n', 'b.txt': 'b\n' }, '2024-05-02T10:00:00Z');
    const result = await h.call<Show>('git_show', { repo: 'repo', rev: 'HEAD' });
    expect(result.structured).toMatchObject({
      commit: { hash: second, parents: [first], subject: 'Change a', body: 'Because.' },
      compared_with: first,
      total_files: 2,
      truncated: false,
      files: [
        { path: 'a.txt', status: 'modified', added: 1, deleted: 1 },
        { path: 'b.txt', status: 'added', added: 1, deleted: 0 },
      ],
    });
    expect(result.text).toMatch(new RegExp(`^${second} 2024-05-02T10:00:00\\+00:00 Ada Tester <ada@example.com>\\n    Change a\\n    \\n    Because.\\n\\n2 files changed:\\n  modified a.txt \\+1 −1\\n  added b.txt \\+1 −0\\n\\ndiff --git a/a.txt b/a.txt\\n`));
  });

  it('shows a root commit as all new, and a merge against its first parent', async () => {
    const root = commit(repo, 'root', { 'a.txt': 'a\n' });
    const rootShow = await h.call<Show>('git_show', { repo: 'repo', rev: root });
    expect(rootShow.structured).toMatchObject({ compared_with: null, files: [{ path: 'a.txt', status: 'added' }] });
    expect(rootShow.text).toContain('[a root commit: every file is new]');
    git(repo, ['checkout', '-q', '-b', 'side']);
    commit(repo, 'side', { 'side.txt': 's\n' });
    git(repo, ['checkout', '-q', 'main']);
    const mainTip = commit(repo, 'main', { 'main.txt': 'm\n' });
    git(repo, ['merge', '-q', '--no-edit', 'side']);
    const merge = await h.call<Show>('git_show', { repo: 'repo', rev: 'HEAD' });
    expect(merge.structured.commit.parents[0]).toBe(mainTip);
    expect(merge.structured).toMatchObject({ compared_with: mainTip, files: [{ path: 'side.txt', status: 'added' }] });
    expect(merge.text).toContain(`[a merge: changes against its first parent ${mainTip.slice(0, 12)}]`);
  });

  it('names a missing commit, and knows an empty repository has none', async () => {
    expect((await h.call('git_show', { repo: 'repo', rev: 'HEAD' })).text).toBe('rev "HEAD": repo has no commits yet');
    commit(repo, 'one');
    expect((await h.call('git_show', { repo: 'repo', rev: 'v9' })).text).toBe('rev "v9" does not exist (or is not a commit) in repo');
    expect((await h.call('git_show', { repo: 'repo', rev: 'HEAD:a.txt' })).text).toBe('rev "HEAD:a.txt" does not exist (or is not a commit) in repo');
  });
});
