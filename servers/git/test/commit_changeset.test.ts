import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, ODD_NAME_SHOWN, startGit, writeFiles, type GitHarness } from './helpers.js';

type Changeset = { committed: boolean; commit: string | null; branch: string; parent: string | null; files: { path: string; action: string }[] };

const ZERO = '0'.repeat(40);

/** Every file of the working tree and the index, by content hash: what "never touched" is checked against. */
function snapshot(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (path === join(repo, '.git')) continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(repo, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(repo);
  out['.git/index'] = createHash('sha256').update(readFileSync(join(repo, '.git/index'))).digest('hex');
  return out;
}

function refs(repo: string): string {
  return git(repo, ['for-each-ref', '--format=%(refname) %(objectname)']);
}

describe('commit_changeset', () => {
  let h: GitHarness;
  let repo: string;
  let head: string;
  const changeset = (args: Record<string, unknown>) => h.call<Changeset>('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'change', ...args });
  beforeEach(async () => {
    h = await startGit({ policy: { allow_write: true } });
    repo = initRepo(h.ws.path('repo'));
    writeFiles(repo, { 'run.sh': '#!/bin/sh\n' });
    chmodSync(join(repo, 'run.sh'), 0o755);
    head = commit(repo, 'base', { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', 'keep.txt': 'keep\n' });
  });
  afterEach(async () => {
    await h.close();
  });

  it('makes one commit from full contents and deletions, leaving the working tree and index alone', async () => {
    const before = snapshot(repo);
    const result = await changeset({
      message: 'Update files\n\nWith a body.',
      author: 'Grace Hopper <grace@example.com>',
      files: [
        { path: 'a.txt', content: 'A\n' },
        { path: 'new/deep/c.txt', content: 'c\n' },
        { path: 'dir/b.txt', delete: true },
        { path: 'run.sh', content: '#!/bin/sh\necho hi\n' },
        { path: 'keep.txt', content: 'keep\n' },
      ],
    });
    expect(result.isError).toBe(false);
    const made = result.structured.commit!;
    expect(result.structured).toEqual({
      committed: true,
      commit: made,
      branch: 'main',
      parent: head,
      files: [
        { path: 'a.txt', action: 'updated' },
        { path: 'new/deep/c.txt', action: 'created' },
        { path: 'dir/b.txt', action: 'deleted' },
        { path: 'run.sh', action: 'updated' },
        { path: 'keep.txt', action: 'unchanged' },
      ],
    });
    expect(git(repo, ['rev-parse', 'main']).trim()).toBe(made);
    expect(git(repo, ['log', '-1', '--format=%P|%an <%ae>|%cn <%ce>|%B', made])).toBe(`${head}|Grace Hopper <grace@example.com>|Bulkhead <bulkhead@localhost>|Update files\n\nWith a body.\n\n`);
    expect(git(repo, ['ls-tree', '-r', '--name-only', made]).split('\n').filter(Boolean)).toEqual(['a.txt', 'keep.txt', 'new/deep/c.txt', 'run.sh']);
    expect(git(repo, ['show', `${made}:a.txt`])).toBe('A\n');
    expect(git(repo, ['ls-tree', made, 'run.sh'])).toMatch(/^100755 blob /);
    expect(snapshot(repo)).toEqual(before);
    expect(result.text).toContain('Note: main is checked out in repo. Its working tree and index were not touched');
  });

  it('fails cleanly when the branch is not at expected_head: nothing written, refs, tree and index as they were', async () => {
    const moved = commit(repo, 'someone else', { 'a.txt': 'theirs\n' });
    const before = snapshot(repo);
    const refsBefore = refs(repo);
    const result = await changeset({ files: [{ path: 'a.txt', content: 'mine\n' }] });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      `branch main is at ${moved}, not at expected_head ${head}: it moved since you looked. Nothing was written. See what changed (git_log rev=${head}..${moved}) and retry with expected_head ${moved}.`,
    );
    expect(refs(repo)).toBe(refsBefore);
    expect(snapshot(repo)).toEqual(before);
  });

  it('lets exactly one of several concurrent changesets on one head win', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => changeset({ message: `writer ${i}`, files: [{ path: `w${i}.txt`, content: `${i}\n` }] })));
    const won = results.filter((r) => !r.isError);
    expect(won).toHaveLength(1);
    for (const lost of results.filter((r) => r.isError)) expect(lost.text).toMatch(/^branch main (is at [0-9a-f]+, not at expected_head|changed while the commit was being made)/);
    expect(git(repo, ['rev-list', '--count', `${head}..main`]).trim()).toBe('1');
    expect(git(repo, ['rev-parse', 'main']).trim()).toBe(won[0]!.structured.commit);
  });

  it('refuses the protected set, .git and paths outside the repository, before writing anything', async () => {
    const refsBefore = refs(repo);
    const refusals: [string, string][] = [
      ['.git/config', 'files[0].path ".git/config" is inside .git, git\'s own folder; commits never hold it'],
      ['sub/.GIT/hooks/pre-commit', 'files[0].path "sub/.GIT/hooks/pre-commit" is inside .git, git\'s own folder; commits never hold it'],
      ['.github/workflows/ci.yml', 'files[0].path ".github/workflows/ci.yml" is in the protected set (`.github/`); commit_changeset never writes there. Nothing was written.'],
      ['config/.env.production', 'files[0].path "config/.env.production" is in the protected set (`.env*`); commit_changeset never writes there. Nothing was written.'],
      ['deploy/id_rsa', 'files[0].path "deploy/id_rsa" is in the protected set (`id_rsa*`); commit_changeset never writes there. Nothing was written.'],
      ['git_policy.yaml', 'files[0].path "git_policy.yaml" is in the protected set (`*_policy.yaml`); commit_changeset never writes there. Nothing was written.'],
      ['.claude/settings.json', 'files[0].path ".claude/settings.json" is in the protected set (`.claude/`); commit_changeset never writes there. Nothing was written.'],
      ['../escape.txt', 'files[0].path "../escape.txt" contains "..": give a path inside the repository, relative to its top folder'],
      ['/etc/passwd', 'files[0].path "/etc/passwd" is absolute; give a path relative to the repository\'s top folder'],
    ];
    for (const [path, message] of refusals) {
      const result = await changeset({ files: [{ path: 'ok.txt', content: 'x' }, { path, content: 'x' }].reverse() });
      expect(result, path).toMatchObject({ isError: true, text: message });
    }
    expect(refs(repo)).toBe(refsBefore);
  });

  it('refuses the control-plane folder and protect globs where the repository holds them', async () => {
    const root = await startGit({ policy: { allow_write: true, protect: ['deploy/'] }, controlInside: true });
    try {
      initRepo(root.ws.root);
      const base = commit(root.ws.root, 'base', { 'a.txt': 'a\n' });
      const attempt = async (path: string) => (await root.call('commit_changeset', { branch: 'main', expected_head: base, message: 'm', files: [{ path, content: 'x' }] })).text;
      expect(await attempt('deploy/prod.yaml')).toBe('files[0].path "deploy/prod.yaml" is in the protected set (`deploy/`); commit_changeset never writes there. Nothing was written.');
      expect(await attempt('.bulkhead/audit/git.jsonl')).toBe(`files[0].path ".bulkhead/audit/git.jsonl" is inside the control-plane folder ${root.controlDir}; tools never write there`);
      expect(await attempt('.BULKHEAD/notes.txt')).toBe(`files[0].path ".BULKHEAD/notes.txt" is inside the control-plane folder ${root.controlDir}; tools never write there`);
      expect(git(root.ws.root, ['rev-parse', 'main']).trim()).toBe(base);
    } finally {
      await root.close();
    }
  });

  it('checks every change against expected_head: missing files, folders, files in the way', async () => {
    const cases: [Record<string, unknown>[], string][] = [
      [[{ path: 'nope.txt', delete: true }], 'nope.txt does not exist at expected_head, so it cannot be deleted. Nothing was written.'],
      [[{ path: 'dir', delete: true }], 'dir is a folder at expected_head; delete the files in it one by one. Nothing was written.'],
      [[{ path: 'dir', content: 'x' }], 'dir is a folder at expected_head; a file cannot replace it. Nothing was written.'],
      [[{ path: 'a.txt/inside', content: 'x' }], 'a.txt/inside cannot be written: a.txt is a file at expected_head, not a folder. Nothing was written.'],
      [[{ path: 'x', content: '1' }, { path: 'x/y', content: '2' }], 'x/y would be inside x, which this changeset writes as a file'],
      [[{ path: 'twice', content: '1' }, { path: './twice', content: '2' }], 'files[1].path "twice" is also files[0].path; give each path once'],
    ];
    for (const [files, message] of cases) {
      expect((await changeset({ files })).text).toBe(message);
    }
    // A file may become a folder when the changeset deletes it.
    const replaced = await changeset({ files: [{ path: 'a.txt', delete: true }, { path: 'a.txt/inside', content: 'x\n' }] });
    expect(replaced.isError).toBe(false);
    expect(git(repo, ['show', 'main:a.txt/inside'])).toBe('x\n');
  });

  it('commits nothing when every file already has its content', async () => {
    const result = await changeset({ files: [{ path: 'a.txt', content: 'a\n' }] });
    expect(result.structured).toEqual({ committed: false, commit: null, branch: 'main', parent: head, files: [{ path: 'a.txt', action: 'unchanged' }] });
    expect(git(repo, ['rev-parse', 'main']).trim()).toBe(head);
  });

  it('refuses a branch whose ref or reflog folder is a symlink to outside the roots, writing nothing there', async () => {
    const outside = `${h.ws.root}_refs_out`;
    mkdirSync(join(outside, 'logs'), { recursive: true });
    // Below the top folders the repository check looks at: refs/heads/team/feature.
    mkdirSync(join(repo, '.git/refs/heads/team'));
    symlinkSync(outside, join(repo, '.git/refs/heads/team/feature'));
    const refused = await changeset({ branch: 'team/feature/x', create: true, files: [{ path: 'f.txt', content: 'f\n' }] });
    expect(refused).toMatchObject({ isError: true, text: 'the branch team/feature/x cannot be written: refs/heads/team/feature in the repository is a symlink; nothing was committed' });
    rmSync(join(repo, '.git/refs/heads/team/feature'));
    mkdirSync(join(repo, '.git/logs/refs/heads/team'), { recursive: true });
    symlinkSync(join(outside, 'logs'), join(repo, '.git/logs/refs/heads/team/feature'));
    const viaLog = await changeset({ branch: 'team/feature/y', create: true, files: [{ path: 'f.txt', content: 'f\n' }] });
    expect(viaLog.text).toBe('the branch team/feature/y cannot be written: logs/refs/heads/team/feature in the repository is a symlink; nothing was committed');
    expect([readdirSync(outside), readdirSync(join(outside, 'logs'))]).toEqual([['logs'], []]);
    rmSync(outside, { recursive: true });
  });

  it('creates a branch from expected_head, and a first commit in an empty repository', async () => {
    const created = await changeset({ branch: 'feature/x', create: true, files: [{ path: 'f.txt', content: 'f\n' }] });
    expect(created.structured).toMatchObject({ committed: true, branch: 'feature/x', parent: head });
    expect(git(repo, ['rev-parse', 'feature/x^']).trim()).toBe(head);
    expect(git(repo, ['rev-parse', 'main']).trim()).toBe(head);
    expect((await changeset({ branch: 'feature/x', create: true, files: [{ path: 'f.txt', content: 'g\n' }] })).text).toMatch(/^branch feature\/x already exists \(at [0-9a-f]{40}\); nothing was written/);
    expect((await changeset({ branch: 'nobranch', files: [{ path: 'f.txt', content: 'g\n' }] })).text).toBe('branch nobranch does not exist in repo; nothing was written. Pass create: true to start it from expected_head.');
    expect((await changeset({ branch: 'bad..name', files: [{ path: 'f.txt', content: 'g\n' }] })).text).toBe('branch "bad..name" is not a valid branch name');

    initRepo(h.ws.path('empty'));
    const first = await h.call<Changeset>('commit_changeset', { repo: 'empty', branch: 'main', create: true, expected_head: ZERO, message: 'first', files: [{ path: 'README.md', content: '# hi\n' }] });
    expect(first.structured).toMatchObject({ committed: true, parent: null, files: [{ path: 'README.md', action: 'created' }] });
    expect(git(h.ws.path('empty'), ['log', '--format=%s %P'])).toBe('first \n');
    expect((await h.call('commit_changeset', { repo: 'empty', branch: 'main', expected_head: ZERO, message: 'm', files: [{ path: 'a', content: 'a' }] })).text).toBe(
      'expected_head is the zero id, which only makes sense with create: true (a first commit with no parent)',
    );
  });

  it('writes names that are not UTF-8, given as the tools show them, and works in a bare repository', async () => {
    const result = await changeset({ files: [{ path: ODD_NAME_SHOWN, content: 'odd\n' }] });
    expect(result.isError).toBe(false);
    expect(git(repo, ['ls-tree', '-z', '--name-only', 'main']).split('\0')).toContain(Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74]).toString('utf8'));
    git(h.ws.root, ['clone', '-q', '--bare', 'repo', 'bare.git']);
    const bareHead = git(h.ws.path('bare.git'), ['rev-parse', 'main']).trim();
    const bare = await h.call<Changeset>('commit_changeset', { repo: 'bare.git', branch: 'main', expected_head: bareHead, message: 'in bare', files: [{ path: 'z.txt', content: 'z\n' }] });
    expect(bare.structured).toMatchObject({ committed: true, parent: bareHead });
    expect(bare.text).not.toContain('checked out');
    expect(git(h.ws.path('bare.git'), ['show', 'main:z.txt'])).toBe('z\n');
  });

  it('checks the author, the message and the sizes', async () => {
    expect((await changeset({ author: 'no email', files: [{ path: 'x', content: 'x' }] })).text).toBe('author "no email" is not "Name <email>" (one line, no other angle brackets)');
    expect((await changeset({ message: 'a\0b', files: [{ path: 'x', content: 'x' }] })).text).toBe('message contains a NUL byte; remove it');
    const small = await startGit({ ws: h.ws, policy: { allow_write: true, limits: { changeset_max_files: 1, changeset_max_file_bytes: 4 } } });
    const tooMany = await small.call('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'm', files: [{ path: 'x', content: 'x' }, { path: 'y', content: 'y' }] });
    const tooBig = await small.call('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'm', files: [{ path: 'x', content: '12345' }] });
    await small.close();
    expect(tooMany.text).toBe('files has 2 entries; the limit is 1 (limits.changeset_max_files)');
    expect(tooBig.text).toBe('files[0].content is 5 bytes; the limit is 4 (limits.changeset_max_file_bytes)');
  });
});
