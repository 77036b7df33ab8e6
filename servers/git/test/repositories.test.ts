import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, ODD_NAME, ODD_NAME_SHOWN, startGit, writeRawName, type GitHarness } from './helpers.js';

describe('every tool on unusual repositories', () => {
  let h: GitHarness;
  beforeEach(async () => {
    h = await startGit({ policy: { allow_write: true } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('an empty repository: each tool answers, or says there are no commits yet', async () => {
    initRepo(h.ws.path('repo'));
    const answers: Record<string, string> = {};
    for (const [name, args] of [
      ['git_status', {}],
      ['git_log', {}],
      ['git_diff', {}],
      ['git_diff', { staged: true }],
      ['git_show', { rev: 'HEAD' }],
      ['git_show_file', { rev: 'HEAD', path: 'a.txt' }],
      ['git_blame', { path: 'a.txt' }],
      ['git_refs', {}],
    ] as const) {
      answers[`${name} ${JSON.stringify(args)}`] = (await h.call(name, { repo: 'repo', ...args })).text;
    }
    expect(answers).toEqual({
      'git_status {}': 'On branch main (no commits yet)\nNothing to commit: the working tree and the index match HEAD.',
      'git_log {}': 'repo has no commits yet.',
      'git_diff {}': 'No differences.',
      'git_diff {"staged":true}': 'No differences.',
      'git_show {"rev":"HEAD"}': 'rev "HEAD": repo has no commits yet',
      'git_show_file {"rev":"HEAD","path":"a.txt"}': 'rev "HEAD": repo has no commits yet',
      'git_blame {"path":"a.txt"}': 'rev "HEAD": repo has no commits yet',
      'git_refs {}': 'HEAD: main (no commits yet)\nNo branches.',
    });
  });

  it('names that are not UTF-8 are shown with \\xNN and can be given back', async () => {
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'base', { 'a.txt': 'a\n' });
    writeRawName(repo, ODD_NAME, 'odd\n');
    const status = await h.call('git_status', { repo: 'repo' });
    expect(status.structured).toMatchObject({ untracked: [ODD_NAME_SHOWN] });
    expect(status.text).toContain(`Untracked (1):\n  ${ODD_NAME_SHOWN}`);
    git(repo, ['add', '-A']);
    expect((await h.call('git_diff', { repo: 'repo', staged: true })).structured).toMatchObject({ files: [{ path: ODD_NAME_SHOWN, status: 'added', added: 1 }] });
    commit(repo, 'odd');
    expect((await h.call('git_show', { repo: 'repo', rev: 'HEAD' })).structured).toMatchObject({ files: [{ path: ODD_NAME_SHOWN }] });
    expect((await h.call('git_show_file', { repo: 'repo', rev: 'HEAD', path: ODD_NAME_SHOWN })).text).toBe('     1\todd');
    expect(Buffer.from(ODD_NAME).toString('latin1')).toBe('bad\xff.txt');
  });

  it('a bare repository: everything but the working-tree views', async () => {
    const repo = initRepo(h.ws.path('repo'));
    const head = commit(repo, 'one', { 'a.txt': 'a\n' });
    git(h.ws.root, ['clone', '-q', '--bare', 'repo', 'bare.git']);
    expect((await h.call('git_status', { repo: 'bare.git' })).text).toBe('bare.git is a bare repository: it has no working tree, so git_status does not apply');
    expect((await h.call('git_log', { repo: 'bare.git' })).structured).toMatchObject({ commits: [{ hash: head }] });
    expect((await h.call('git_show_file', { repo: 'bare.git', rev: 'main', path: 'a.txt' })).text).toBe('     1\ta');
    expect((await h.call('git_blame', { repo: 'bare.git', path: 'a.txt' })).isError).toBe(false);
    expect((await h.call('git_refs', { repo: 'bare.git' })).structured).toMatchObject({ refs: [{ name: 'main', commit: head }] });
  });

  it('a linked worktree and a subfolder of a repository', async () => {
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'one', { 'src/deep/a.txt': 'a\n' });
    git(repo, ['worktree', 'add', '-q', '-b', 'side', h.ws.path('side')]);
    commit(h.ws.path('side'), 'on side', { 'b.txt': 'b\n' });
    expect((await h.call('git_log', { repo: 'side', max_count: 1 })).structured).toMatchObject({ commits: [{ subject: 'on side' }] });
    expect((await h.call('git_status', { repo: 'side' })).structured).toMatchObject({ branch: 'side' });
    expect((await h.call('git_status', { repo: 'repo/src/deep' })).structured).toMatchObject({ branch: 'main' });
  });

  // Changing a folder's owner needs root, which is how Bulkhead runs in containers.
  it.skipIf(process.getuid?.() !== 0)('a repository owned by another user, which plain git refuses as dubious', async () => {
    const repo = initRepo(h.ws.path('repo'));
    const head = commit(repo, 'one', { 'a.txt': 'a\n' });
    execFileSync('chown', ['-R', 'nobody', repo]);
    expect(() => git(repo, ['status'])).toThrow(/dubious ownership/);
    expect((await h.call('git_status', { repo: 'repo' })).structured).toMatchObject({ branch: 'main', head });
    expect((await h.call('git_log', { repo: 'repo' })).structured).toMatchObject({ commits: [{ hash: head }] });
  });
});
