import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, startGit, type GitHarness } from './helpers.js';

type Refs = {
  head: { branch: string | null; commit: string | null };
  refs: { name: string; kind: string; commit: string; current: boolean; upstream?: string; track?: string; date: string; subject: string }[];
  truncated: boolean;
};

describe('git_refs', () => {
  let h: GitHarness;
  let repo: string;
  const refs = (args: Record<string, unknown> = {}) => h.call<Refs>('git_refs', { repo: 'repo', ...args });
  beforeEach(async () => {
    h = await startGit();
    repo = initRepo(h.ws.path('repo'));
  });
  afterEach(async () => {
    await h.close();
  });

  it('lists branches newest first with the current one, tags peeled to their commit, and remotes under all', async () => {
    const old = commit(repo, 'old work', {}, '2024-01-01T00:00:00Z');
    git(repo, ['branch', 'old-branch']);
    const tip = commit(repo, 'new work', {}, '2024-02-01T00:00:00Z');
    git(repo, ['tag', 'light', old]);
    git(repo, ['tag', '-a', '-m', 'release one', 'v1.0', tip], { env: { GIT_COMMITTER_DATE: '2024-03-01T00:00:00Z' } });
    git(repo, ['update-ref', 'refs/remotes/origin/main', old]);
    for (const [key, value] of [
      ['remote.origin.url', '/nonexistent'],
      ['remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*'],
      ['branch.main.remote', 'origin'],
      ['branch.main.merge', 'refs/heads/main'],
    ]) {
      git(repo, ['config', key!, value!]);
    }
    const branches = await refs();
    expect(branches.structured).toEqual({
      head: { branch: 'main', commit: tip },
      refs: [
        { name: 'main', kind: 'branch', commit: tip, current: true, upstream: 'origin/main', track: '[ahead 1]', date: '2024-02-01T00:00:00+00:00', subject: 'new work' },
        { name: 'old-branch', kind: 'branch', commit: old, current: false, date: '2024-01-01T00:00:00+00:00', subject: 'old work' },
      ],
      truncated: false,
    });
    expect(branches.text).toBe(`HEAD: main at ${tip.slice(0, 12)}\n* branch main ${tip.slice(0, 12)} 2024-02-01 [origin/main ahead 1] new work\n  branch old-branch ${old.slice(0, 12)} 2024-01-01 old work`);
    const tags = await refs({ kind: 'tags' });
    expect(tags.structured.refs.map((r) => [r.name, r.commit, r.subject])).toEqual([
      ['v1.0', tip, 'release one'],
      ['light', old, 'old work'],
    ]);
    const all = await refs({ kind: 'all' });
    expect(all.structured.refs.map((r) => `${r.kind}:${r.name}`).sort()).toEqual(['branch:main', 'branch:old-branch', 'remote:origin/main', 'tag:light', 'tag:v1.0']);
  });

  it('works in an empty repository and on a detached HEAD, and caps the list', async () => {
    const empty = await refs();
    expect(empty.structured).toEqual({ head: { branch: 'main', commit: null }, refs: [], truncated: false });
    expect(empty.text).toBe('HEAD: main (no commits yet)\nNo branches.');
    const first = commit(repo, 'one');
    for (let i = 0; i < 5; i++) git(repo, ['branch', `b${i}`]);
    git(repo, ['checkout', '-q', '--detach']);
    const small = await startGit({ ws: h.ws, policy: { limits: { refs_max: 3 } } });
    const capped = await small.call<Refs>('git_refs', { repo: 'repo' });
    await small.close();
    expect(capped.structured).toMatchObject({ head: { branch: null, commit: first }, truncated: true });
    expect(capped.structured.refs).toHaveLength(3);
    expect(capped.text).toContain(`HEAD detached at ${first.slice(0, 12)}`);
    expect(capped.text).toContain('[the newest 3 are listed (limits.refs_max); there are more]');
  });
});
