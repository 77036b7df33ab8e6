import { rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, startGit, writeFiles, type GitHarness } from './helpers.js';

describe('git_status', () => {
  let h: GitHarness;
  afterEach(async () => {
    await h.close();
  });

  it('reports branch, staged, unstaged, untracked and renamed files', async () => {
    h = await startGit();
    const repo = initRepo(h.ws.path('repo'));
    const head = commit(repo, 'first', { 'a.txt': 'a\n', 'b.txt': 'b\n', 'gone.txt': 'x\n', 'old.txt': 'same content\n' });
    writeFiles(repo, { 'a.txt': 'a2\n', 'c.txt': 'new\n', 'dir/u1.txt': 'u\n', 'dir/u2.txt': 'u\n', 'b.txt': 'b staged\n' });
    git(repo, ['add', 'b.txt']);
    git(repo, ['mv', 'old.txt', 'new name.txt']);
    rmSync(`${repo}/gone.txt`);
    const result = await h.call('git_status', { repo: 'repo' });
    expect(result.isError).toBe(false);
    expect(result.structured).toEqual({
      branch: 'main',
      head,
      upstream: null,
      ahead: null,
      behind: null,
      staged: [
        { path: 'b.txt', status: 'modified' },
        { path: 'new name.txt', status: 'renamed', from: 'old.txt' },
      ],
      unstaged: [
        { path: 'a.txt', status: 'modified' },
        { path: 'gone.txt', status: 'deleted' },
      ],
      untracked: ['c.txt', 'dir/'],
      conflicted: [],
      truncated: false,
    });
    expect(result.text).toContain(`On branch main at ${head.slice(0, 12)}`);
    expect(result.text).toContain('Staged (2):\n  modified: b.txt\n  renamed: old.txt -> new name.txt');
    expect(result.text).toContain('Untracked (2):\n  c.txt\n  dir/');
  });

  it('works in an empty repository, and says when all is clean', async () => {
    h = await startGit();
    const repo = initRepo(h.ws.path('repo'));
    const empty = await h.call('git_status', { repo: 'repo' });
    expect(empty.structured).toMatchObject({ branch: 'main', head: null, staged: [], untracked: [] });
    expect(empty.text).toContain('On branch main (no commits yet)');
    commit(repo, 'first', { 'a.txt': 'a\n' });
    const clean = await h.call('git_status', { repo: 'repo' });
    expect(clean.text).toContain('Nothing to commit');
  });

  it('lists at most status_max_entries files and says there are more', async () => {
    h = await startGit({ policy: { limits: { status_max_entries: 3 } } });
    const repo = initRepo(h.ws.path('repo'));
    for (let i = 0; i < 10; i++) writeFileSync(`${repo}/f${i}.txt`, 'x');
    const result = await h.call('git_status', { repo: 'repo' });
    expect(result.structured).toMatchObject({ untracked: ['f0.txt', 'f1.txt', 'f2.txt'], truncated: true });
    expect(result.text).toContain('[only the first 3 changed paths are listed; there are more]');
  });
});
