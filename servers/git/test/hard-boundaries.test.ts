import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { commit, git, initRepo, startGit, type GitHarness } from './helpers.js';

/** Programs a hostile repository's config names; each appends its name to the marker file when run. */
const VECTORS = ['fsmonitor', 'filter', 'textconv', 'external', 'gpg', 'hook', 'pager', 'ssh', 'editor', 'askpass', 'uploadpack'] as const;

function markers(file: string): string[] {
  return existsSync(file) ? [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))].sort() : [];
}

/**
 * A repository whose .git/config, .gitattributes and hooks try every way we know to make git run a
 * program, read outside the roots, or garble the output we parse.
 */
function hostileRepo(repo: string, bin: string, marker: string, outside: string): void {
  mkdirSync(bin, { recursive: true });
  for (const name of VECTORS) {
    writeFileSync(join(bin, name), `#!/bin/sh\necho ${name} >> ${marker}\ncat\n`);
    chmodSync(join(bin, name), 0o755);
  }
  initRepo(repo);
  const base = commit(repo, 'first', { '.gitattributes': '* filter=evil diff=evil\n', 'f.txt': 'hello\n', 'g.txt': 'one\ntwo\n' });
  commit(repo, 'second', { 'g.txt': 'one\ntwo\nthree\n' });
  const set = (key: string, value: string) => git(repo, ['config', key, value]);
  set('core.fsmonitor', join(bin, 'fsmonitor'));
  set('filter.evil.clean', join(bin, 'filter'));
  set('filter.evil.smudge', join(bin, 'filter'));
  set('filter.evil.process', join(bin, 'filter'));
  set('filter.evil.required', 'true');
  set('diff.evil.textconv', join(bin, 'textconv'));
  set('diff.evil.command', join(bin, 'external'));
  set('diff.external', join(bin, 'external'));
  set('core.pager', join(bin, 'pager'));
  set('pager.log', join(bin, 'pager'));
  set('pager.diff', join(bin, 'pager'));
  set('log.showSignature', 'true');
  set('commit.gpgSign', 'true');
  set('gpg.program', join(bin, 'gpg'));
  set('core.sshCommand', join(bin, 'ssh'));
  set('core.askPass', join(bin, 'askpass'));
  set('core.editor', join(bin, 'editor'));
  set('core.alternateRefsCommand', join(bin, 'uploadpack'));
  set('remote.origin.url', 'ssh://example.invalid/x');
  set('remote.origin.uploadpack', join(bin, 'uploadpack'));
  set('protocol.file.allow', 'always');
  // Output we parse, garbled.
  set('color.ui', 'always');
  set('diff.noprefix', 'true');
  set('diff.mnemonicPrefix', 'true');
  set('core.quotePath', 'false');
  set('i18n.logOutputEncoding', 'UTF-16');
  set('blame.ignoreRevsFile', '/nonexistent/ignore-revs');
  // A working tree somewhere else: status there would list files outside the roots.
  set('core.worktree', outside);
  const hooks = join(repo, '.git/evil-hooks');
  mkdirSync(hooks);
  for (const hook of ['reference-transaction', 'post-index-change', 'pre-commit', 'post-commit', 'post-checkout', 'pre-auto-gc']) {
    cpSync(join(bin, 'hook'), join(hooks, hook));
    cpSync(join(bin, 'hook'), join(repo, '.git/hooks', hook));
  }
  set('core.hooksPath', hooks);
  // A signed commit on a branch: showing it would run gpg.program to check the signature.
  const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).trim();
  const signed = `tree ${tree}\nparent ${base}\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n`;
  const signedId = git(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], { input: signed }).trim();
  git(repo, ['-c', 'core.hooksPath=/dev/null', 'update-ref', 'refs/heads/signed', signedId]);
  // Same-size edits make status and diff compare content, which runs the clean filter.
  writeFileSync(join(repo, 'f.txt'), 'HELLO\n');
  writeFileSync(join(repo, 'untracked.txt'), 'new\n');
}

describe('a hostile repository cannot run code, read outside the roots or garble the output', () => {
  let h: GitHarness;
  let outer: TempWorkspace;
  let marker: string;
  let repo: string;
  beforeEach(async () => {
    outer = tempWorkspace({ 'outside/outside-secret.txt': 'secret\n' }, 'bulkhead-git-hostile-');
    marker = outer.path('MARKER');
    h = await startGit({ ws: tempWorkspace({}, 'bulkhead-git-hostile-root-'), policy: { allow_write: true } });
    repo = h.ws.path('repo');
    hostileRepo(repo, outer.path('bin'), marker, outer.path('outside'));
  });
  afterEach(async () => {
    await h.close();
    h.ws.cleanup();
    outer.cleanup();
  });

  it('is hostile: plain git runs its programs (the test can fail)', () => {
    // Some of these fail once their program has run (a filter that is not a real filter); the marker is what counts.
    const withoutFilter = ['-c', 'filter.evil.process=', '-c', 'filter.evil.required=false'];
    for (const args of [['status', '--short'], ['diff'], [...withoutFilter, 'diff', 'HEAD~1', 'HEAD'], ['log', '-1', 'signed']]) {
      try {
        git(repo, args);
      } catch {
        // ran, then failed
      }
    }
    expect(markers(marker)).toEqual(expect.arrayContaining(['external', 'filter', 'fsmonitor', 'gpg', 'hook']));
  });

  it('runs no program whatever tool is called, and every answer is right', async () => {
    const head = git(repo, ['rev-parse', 'HEAD']).trim();
    const calls: [string, Record<string, unknown>][] = [
      ['git_status', { repo: 'repo' }],
      ['git_log', { repo: 'repo' }],
      ['git_log', { repo: 'repo', rev: 'signed' }],
      ['git_log', { repo: 'repo', path: 'g.txt', grep: 'sec' }],
      ['git_diff', { repo: 'repo' }],
      ['git_diff', { repo: 'repo', staged: true }],
      ['git_diff', { repo: 'repo', from: 'HEAD~1' }],
      ['git_diff', { repo: 'repo', from: 'HEAD~1', to: 'HEAD' }],
      ['git_diff', { repo: 'repo', from: 'HEAD~1', to: 'signed', stat_only: true }],
      ['git_show', { repo: 'repo', rev: 'HEAD' }],
      ['git_show', { repo: 'repo', rev: 'signed' }],
      ['git_show', { repo: 'repo', rev: 'HEAD~1' }],
      ['git_show_file', { repo: 'repo', rev: 'HEAD', path: 'g.txt' }],
      ['git_show_file', { repo: 'repo', rev: 'HEAD', path: '.gitattributes' }],
      ['git_blame', { repo: 'repo', path: 'g.txt' }],
      ['git_blame', { repo: 'repo', path: 'f.txt', rev: 'signed' }],
      ['git_refs', { repo: 'repo', kind: 'all' }],
      ['commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'by the tool', files: [{ path: 'g.txt', content: 'changed\n' }] }],
      ['commit_changeset', { repo: 'repo', branch: 'other', create: true, expected_head: head, message: 'new branch', files: [{ path: 'new.txt', content: 'x\n' }] }],
    ];
    const results: Record<string, string> = {};
    for (const [name, args] of calls) {
      const result = await h.call(name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}: ${result.text}`).toBe(false);
      results[`${name} ${JSON.stringify(args)}`] = result.text;
    }
    expect(markers(marker)).toEqual([]);

    const status = await h.call('git_status', { repo: 'repo' });
    expect(status.structured).toMatchObject({ branch: 'main', untracked: ['untracked.txt'] });
    expect(status.text).not.toContain('outside-secret');
    const diff = await h.call('git_diff', { repo: 'repo', from: 'HEAD~2', to: 'HEAD~1' });
    expect(diff.structured).toMatchObject({ files: [{ path: 'g.txt', status: 'modified', added: 1, deleted: 0 }] });
    expect(diff.text).toContain('diff --git a/g.txt b/g.txt');
    expect(diff.text).not.toContain('\u001b[');
    const log = await h.call('git_log', { repo: 'repo', rev: 'signed', max_count: 1 });
    expect(log.structured).toMatchObject({ commits: [{ subject: 'signed', author: 'A' }] });
    expect(markers(marker)).toEqual([]);
  });

  it('commit_changeset runs no hook and signs nothing even with commit.gpgSign', async () => {
    const head = git(repo, ['rev-parse', 'HEAD']).trim();
    const result = await h.call('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'plain', files: [{ path: 'a.txt', content: 'a\n' }] });
    expect(result.isError).toBe(false);
    const made = (result.structured as { commit: string }).commit;
    expect(git(repo, ['cat-file', '-p', made])).not.toContain('gpgsig');
    expect(markers(marker)).toEqual([]);
  });
});

describe('the repository must lie inside the roots', () => {
  let h: GitHarness;
  let outer: TempWorkspace;
  beforeEach(async () => {
    outer = tempWorkspace({}, 'bulkhead-git-outer-');
    h = await startGit({ ws: tempWorkspace({}, 'bulkhead-git-root-') });
    initRepo(outer.path('outside'));
    commit(outer.path('outside'), 'outside commit', { 'secret.txt': 'outside secret\n' });
  });
  afterEach(async () => {
    await h.close();
    h.ws.cleanup();
    outer.cleanup();
  });

  it('refuses a path outside, relative or absolute', async () => {
    for (const repo of [outer.path('outside'), '../', `${h.ws.root}/../${outer.root.split('/').pop()}/outside`]) {
      const result = await h.call('git_log', { repo });
      expect(result.isError).toBe(true);
      expect(result.text).toContain('is outside the allowed roots');
    }
  });

  it('refuses a symlink to a repository outside, and a .git that points outside', async () => {
    symlinkSync(outer.path('outside'), h.ws.path('link'));
    const viaLink = await h.call('git_log', { repo: 'link' });
    expect(viaLink).toMatchObject({ isError: true });
    expect(viaLink.text).toBe(`link resolves through a symlink to ${outer.path('outside')}, which is outside the allowed roots (${h.ws.root})`);
    h.ws.write('pointer/.git', `gitdir: ${outer.path('outside/.git')}\n`);
    const viaPointer = await h.call('git_show_file', { repo: 'pointer', rev: 'HEAD', path: 'secret.txt' });
    expect(viaPointer.text).toBe(`pointer: its git directory (named by .git) is ${outer.path('outside/.git')}, outside the allowed roots (${h.ws.root}); the repository is refused`);
    // The root itself is no repository, and the search for one stops at the root.
    initRepo(h.ws.path('inner'));
    const atRoot = await h.call('git_status', {});
    expect(atRoot.text).toBe(`. is not in a git repository: there is no .git in it or in the folders above it up to the root ${h.ws.root}`);
  });
});

describe('option injection never reaches git as an option', () => {
  let h: GitHarness;
  let pwned: string;
  beforeEach(async () => {
    h = await startGit({ policy: { allow_write: true } });
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'a\n' });
    commit(repo, 'two', { 'a.txt': 'b\n' });
    pwned = h.ws.path('pwned');
  });
  afterEach(async () => {
    await h.close();
  });

  it('refuses option-like revisions, paths, authors, greps and dates before git runs', async () => {
    const head = git(h.ws.path('repo'), ['rev-parse', 'HEAD']).trim();
    const evil = [`--output=${pwned}`, `--upload-pack=touch ${pwned}`, `-c`, `-ccore.pager=touch ${pwned}`, `--exec=touch ${pwned}`, '-'];
    const cases: [string, (value: string) => Record<string, unknown>, string][] = [
      ['git_log', (v) => ({ rev: v }), 'rev'],
      ['git_log', (v) => ({ rev: `HEAD..${v}` }), 'rev (right side)'],
      ['git_log', (v) => ({ path: v }), 'path'],
      ['git_log', (v) => ({ since: v }), 'since'],
      ['git_log', (v) => ({ until: v }), 'until'],
      ['git_log', (v) => ({ author: v }), 'author'],
      ['git_log', (v) => ({ grep: v }), 'grep'],
      ['git_diff', (v) => ({ from: v }), 'from'],
      ['git_diff', (v) => ({ from: 'HEAD~1', to: v }), 'to'],
      ['git_diff', (v) => ({ path: v }), 'path'],
      ['git_show', (v) => ({ rev: v }), 'rev'],
      ['git_show_file', (v) => ({ rev: v, path: 'a.txt' }), 'rev'],
      ['git_show_file', (v) => ({ rev: 'HEAD', path: v }), 'path'],
      ['git_blame', (v) => ({ path: v }), 'path'],
      ['git_blame', (v) => ({ path: 'a.txt', rev: v }), 'rev'],
      ['commit_changeset', (v) => ({ branch: v, expected_head: head, message: 'm', files: [{ path: 'x', content: 'x' }] }), 'branch'],
      ['commit_changeset', (v) => ({ branch: 'main', expected_head: v, message: 'm', files: [{ path: 'x', content: 'x' }] }), 'expected_head'],
      ['commit_changeset', (v) => ({ branch: 'main', expected_head: head, message: 'm', author: `${v} <a@b>`, files: [{ path: 'x', content: 'x' }] }), 'author'],
      ['commit_changeset', (v) => ({ branch: 'main', expected_head: head, message: 'm', files: [{ path: v, content: 'x' }] }), 'files[0].path'],
    ];
    for (const [tool, args, argument] of cases) {
      for (const value of evil) {
        const result = await h.call(tool, { repo: 'repo', ...args(value) });
        expect(result.isError, `${tool} ${argument}=${value}`).toBe(true);
        expect(result.text, `${tool} ${argument}=${value}`).toMatch(new RegExp(`^${argument.replace(/[[\]()]/g, '\\$&')} ".*" starts with "-", so git could take it for an option; it is refused and git was not run$`));
      }
    }
    expect(existsSync(pwned)).toBe(false);
    expect(git(h.ws.path('repo'), ['rev-parse', 'HEAD']).trim()).toBe(head);
  });

  it('treats option-looking text inside a value as text', async () => {
    const log = await h.call('git_log', { repo: 'repo', grep: `x --output=${pwned}` });
    expect(log).toMatchObject({ isError: false, structured: { commits: [] } });
    const missing = await h.call('git_show', { repo: 'repo', rev: `HEAD --output=${pwned}` });
    expect(missing.text).toBe(`rev "HEAD --output=${pwned}" does not exist (or is not a commit) in repo`);
    const path = await h.call('git_log', { repo: 'repo', path: `a.txt --output=${pwned}` });
    expect(path.structured).toMatchObject({ commits: [] });
    expect(existsSync(pwned)).toBe(false);
  });
});

describe('limits that hold whatever the repository holds', () => {
  let h: GitHarness;
  afterEach(async () => {
    await h.close();
  });

  it('kills a git process at the timeout (a FIFO where git reads a .gitignore) and leaves none behind', async () => {
    h = await startGit({ policy: { limits: { timeout_ms: 500 } } });
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'a\n' });
    // A FIFO in the git directory (info/exclude) is refused before git runs; one in the working tree is met by the deadline.
    rmSync(join(repo, '.git/info/exclude'), { force: true });
    execFileSync('mkfifo', [join(repo, '.git/info/exclude')]);
    expect((await h.call('git_status', { repo: 'repo' })).text).toBe("repo: its git directory's info/exclude is a named pipe, not a regular file; the repository is refused");
    rmSync(join(repo, '.git/info/exclude'));
    execFileSync('mkfifo', [join(repo, '.gitignore')]);
    const started = Date.now();
    const result = await h.call('git_status', { repo: 'repo' });
    expect(result).toMatchObject({ isError: true, text: 'git status did not finish within 500 ms and was stopped (limits.timeout_ms)' });
    expect(Date.now() - started).toBeLessThan(10_000);
    const alive = readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`--git-dir=${join(repo, '.git')}`);
        } catch {
          return false;
        }
      });
    expect(alive).toEqual([]);
    // The server goes on serving.
    expect((await h.call('git_log', { repo: 'repo' })).isError).toBe(false);
  });
});
