import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GIT_CLI, REAL_GIT, refused, repoState, startAttackServer, type AttackServer, type Outcome } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * commit_changeset under attack: a stale or raced expected_head, protected and malformed paths,
 * invalid branch names, oversized changes. Every refusal is exact and leaves the repository
 * byte-identical: refs, HEAD, index file, status, working tree and object store (a refusal comes
 * before any object is written). A success never touches the working tree or the index.
 */
describe('commit_changeset attacks (in-process server, control-plane folder inside the root)', () => {
  let h: AttackServer;
  let repo: string;
  let head: string;
  beforeEach(async () => {
    h = await startAttackServer({ controlInRoot: true, policy: { allow_write: true, protect: ['deploy/', 'secrets/**'], limits: { changeset_max_files: 3, changeset_max_file_bytes: 1000, changeset_max_total_bytes: 1500 } } });
    // The repository is the served root itself, so its .bulkhead/ is the control-plane folder.
    repo = h.ws.root;
    initRepo(repo);
    writeFileSync(join(repo, '.git/info/exclude'), '.bulkhead/\n');
    head = commit(repo, 'base', { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', '.github/workflows/ci.yml': 'on: push\n', 'link-target.txt': 'x\n' });
    // Dirty working tree and index: a write must leave both exactly so.
    writeFileSync(join(repo, 'a.txt'), 'edited, not staged\n');
    writeFileSync(join(repo, 'dir/b.txt'), 'staged\n');
    git(repo, ['add', 'dir/b.txt']);
    writeFileSync(join(repo, 'untracked.txt'), 'u\n');
  });
  afterEach(async () => {
    await h.close();
  });

  const changeset = (args: Record<string, unknown>): Promise<Outcome> => h.outcome('commit_changeset', { branch: 'main', expected_head: head, message: 'attack', ...args });
  /** The call is refused with exactly `text`, and not one byte of the repository changed. */
  async function refusedUntouched(args: Record<string, unknown>, text: string): Promise<void> {
    const before = repoState(repo);
    expect(await changeset(args), JSON.stringify(args)).toEqual(refused(text));
    expect(repoState(repo), JSON.stringify(args)).toEqual(before);
  }

  describe('expected_head', () => {
    it('a stale expected_head: refused, nothing written, the branch where it was', async () => {
      const old = head;
      head = commit(repo, 'someone else', { 'c.txt': 'c\n' });
      git(repo, ['reset', '-q', '--soft', 'HEAD']);
      const before = repoState(repo);
      expect(await h.outcome('commit_changeset', { branch: 'main', expected_head: old, message: 'm', files: [{ path: 'x.txt', content: 'x' }] })).toEqual(
        refused(`branch main is at ${head}, not at expected_head ${old}: it moved since you looked. Nothing was written. See what changed (git_log rev=${old}..${head}) and retry with expected_head ${head}.`),
      );
      expect(repoState(repo)).toEqual(before);
    });

    it('an expected_head that names no commit, or a tree, or a blob', async () => {
      const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).trim();
      const blob = git(repo, ['rev-parse', 'HEAD:a.txt']).trim();
      for (const value of ['nope', tree, blob, 'HEAD:a.txt', `${'0'.repeat(39)}1`]) {
        await refusedUntouched({ expected_head: value, files: [{ path: 'x.txt', content: 'x' }] }, `expected_head ${JSON.stringify(value)} does not exist (or is not a commit) in ${repo}`);
      }
    });

    it('the zero id without create, and create on a branch that exists', async () => {
      await refusedUntouched({ expected_head: '0'.repeat(40), files: [{ path: 'x.txt', content: 'x' }] }, 'expected_head is the zero id, which only makes sense with create: true (a first commit with no parent)');
      await refusedUntouched(
        { create: true, files: [{ path: 'x.txt', content: 'x' }] },
        `branch main already exists (at ${head}); nothing was written. Leave out create to commit on it, with expected_head ${head}.`,
      );
      await refusedUntouched({ branch: 'nope', files: [{ path: 'x.txt', content: 'x' }] }, `branch nope does not exist in ${repo}; nothing was written. Pass create: true to start it from expected_head.`);
    });
  });

  describe('protected and malformed paths are refused before anything is written', () => {
    const inGit = (argument: string, path: string) => `${argument} ${JSON.stringify(path)} is inside .git, git's own folder; commits never hold it`;
    const inSet = (argument: string, path: string, glob: string) => `${argument} ${JSON.stringify(path)} is in the protected set (\`${glob}\`); commit_changeset never writes there. Nothing was written.`;

    it.each([
      ['.git/config'],
      ['.GIT/config'],
      ['.Git/hooks/pre-commit'],
      ['sub/.git/config'],
      ['.git'],
      ['.git./config'],
      ['.git  ../config'],
      ['git~1/config'],
      ['GIT~1/hooks/post-checkout'],
      ['.git::$INDEX_ALLOCATION/config'],
      ['git~1:stream/config'],
      ['.g\u200cit/config'],
      ['.\ufeffgit/hooks/pre-commit'],
    ])('.git in any form git itself refuses: %j', async (path) => {
      await refusedUntouched({ files: [{ path, content: '[core]\n\tfsmonitor = touch PWNED\n' }] }, inGit('files[0].path', path));
    });

    it('./.git/config and a/./.git are .git once the dots are taken away', async () => {
      await refusedUntouched({ files: [{ path: './.git/config', content: 'x' }] }, inGit('files[0].path', '.git/config'));
      await refusedUntouched({ files: [{ path: 'a/./.git//x', content: 'x' }] }, inGit('files[0].path', 'a/.git/x'));
    });

    it.each([
      ['.github/workflows/evil.yml', '.github/'],
      ['.GITHUB/workflows/evil.yml', '.github/'],
      ['.github\\workflows\\evil.yml', '.github/'],
      ['.git\\config', '.git/'],
      ['git_policy.yaml', '*_policy.yaml'],
      ['sub/FS_WRITE_POLICY.YAML', '*_policy.yaml'],
      ['permissions.yaml', 'permissions.yaml'],
      ['bulkhead.yaml', 'bulkhead.yaml'],
      ['hooks.yaml', 'hooks.yaml'],
      ['.env', '.env*'],
      ['sub/.ENV.local', '.env*'],
      ['id_rsa', 'id_rsa*'],
      ['deploy/key.pem', '*.pem'],
      ['.ssh/authorized_keys', '.ssh/'],
      ['.aws/credentials', '.aws/'],
      ['.netrc', '.netrc'],
      ['.mcp.json', '.mcp.json'],
      ['.claude/settings.json', '.claude/'],
      ['.vscode/tasks.json', '.vscode/'],
      ['.cursor/rules', '.cursor/'],
    ])('the built-in protected set: %j', async (path, glob) => {
      await refusedUntouched({ files: [{ path, content: 'x' }] }, inSet('files[0].path', path, glob));
    });

    it('deleting a protected file is refused too', async () => {
      await refusedUntouched({ files: [{ path: '.github/workflows/ci.yml', delete: true }] }, inSet('files[0].path', '.github/workflows/ci.yml', '.github/'));
    });

    it('protect globs of git_policy.yaml', async () => {
      await refusedUntouched({ files: [{ path: 'deploy/run.sh', content: 'x' }] }, `files[0].path "deploy/run.sh" is in the protected set (\`deploy/\`); commit_changeset never writes there. Nothing was written.`);
      await refusedUntouched({ files: [{ path: 'secrets/a/b.txt', content: 'x' }] }, `files[0].path "secrets/a/b.txt" is in the protected set (\`secrets/**\`); commit_changeset never writes there. Nothing was written.`);
    });

    it('the control-plane folder where the repository holds it, in any letter case', async () => {
      await refusedUntouched({ files: [{ path: '.bulkhead/anything.txt', content: 'x' }] }, `files[0].path ".bulkhead/anything.txt" is inside the control-plane folder ${h.controlDir}; tools never write there`);
      await refusedUntouched({ files: [{ path: '.BULKHEAD/audit/x', content: 'x' }] }, `files[0].path ".BULKHEAD/audit/x" is inside the control-plane folder ${h.controlDir}; tools never write there`);
    });

    it('a protected path anywhere in the list: the earlier files are not written either', async () => {
      await refusedUntouched(
        { files: [{ path: 'ok.txt', content: 'fine' }, { path: 'dir/new.txt', content: 'fine' }, { path: '.github/x.yml', content: 'x' }] },
        inSet('files[2].path', '.github/x.yml', '.github/'),
      );
    });

    it.each([
      ['/etc/passwd', 'files[0].path "/etc/passwd" is absolute; give a path relative to the repository\'s top folder'],
      ['../outside.txt', 'files[0].path "../outside.txt" contains "..": give a path inside the repository, relative to its top folder'],
      ['a/../../outside.txt', 'files[0].path "a/../../outside.txt" contains "..": give a path inside the repository, relative to its top folder'],
      ['a/../.git/config', 'files[0].path "a/../.git/config" contains "..": give a path inside the repository, relative to its top folder'],
      ['', 'files[0].path names the whole tree; give a file path'],
      ['.', 'files[0].path names the whole tree; give a file path'],
      ['./', 'files[0].path names the whole tree; give a file path'],
      ['a.txt\0.git/config', 'files[0].path contains a NUL byte; remove it'],
      ['-rf', 'files[0].path "-rf" starts with "-", so git could take it for an option; it is refused and git was not run'],
    ])('a path outside the repository, empty, or malformed: %j', async (path, text) => {
      await refusedUntouched({ files: [{ path, content: 'x' }] }, text);
    });

    it('the same path twice, and a file inside a file of the same changeset', async () => {
      await refusedUntouched({ files: [{ path: 'x.txt', content: '1' }, { path: './x.txt', content: '2' }] }, 'files[1].path "x.txt" is also files[0].path; give each path once');
      await refusedUntouched({ files: [{ path: 'f', content: '1' }, { path: 'f/g', content: '2' }] }, 'f/g would be inside f, which this changeset writes as a file');
    });

    it('writing through a symlink or a file of the tree, deleting what is not a file', async () => {
      git(repo, ['update-index', '--add', '--cacheinfo', `120000,${git(repo, ['hash-object', '-w', '--stdin'], { input: '/etc' }).trim()},etc-link`]);
      const tree = git(repo, ['write-tree']).trim();
      const withLink = git(repo, ['commit-tree', '-p', head, '-m', 'link', tree]).trim();
      git(repo, ['update-ref', 'refs/heads/linked', withLink]);
      git(repo, ['reset', '-q', head]);
      git(repo, ['add', 'dir/b.txt']);
      const linked = { branch: 'linked', expected_head: withLink };
      await refusedUntouched({ ...linked, files: [{ path: 'etc-link/passwd', content: 'root::0:0::/:/bin/sh\n' }] }, 'etc-link/passwd cannot be written: etc-link is a file at expected_head, not a folder. Nothing was written.');
      await refusedUntouched({ ...linked, files: [{ path: 'etc-link', content: 'x' }] }, 'etc-link is a symlink at expected_head; commit_changeset writes regular files only. Nothing was written.');
      await refusedUntouched({ files: [{ path: 'a.txt/inner', content: 'x' }] }, 'a.txt/inner cannot be written: a.txt is a file at expected_head, not a folder. Nothing was written.');
      await refusedUntouched({ files: [{ path: 'dir', content: 'x' }] }, 'dir is a folder at expected_head; a file cannot replace it. Nothing was written.');
      await refusedUntouched({ files: [{ path: 'dir', delete: true }] }, 'dir is a folder at expected_head; delete the files in it one by one. Nothing was written.');
      await refusedUntouched({ files: [{ path: 'missing.txt', delete: true }] }, 'missing.txt does not exist at expected_head, so it cannot be deleted. Nothing was written.');
    });
  });

  describe('branch names', () => {
    it.each([
      ['a..b'],
      ['refs/heads/../x'],
      ['x.lock'],
      ['a b'],
      ['~x'],
      ['x^'],
      ['x:y'],
      ['x?'],
      ['x*'],
      ['x['],
      ['.x'],
      ['x/'],
      ['/x'],
      ['x//y'],
      ['@{-1}'],
      ['x@{0}'],
      ['a\\b'],
      ['HEAD'],
      ['@'],
    ])('%j is not a valid branch name', async (branch) => {
      await refusedUntouched({ branch, create: true, files: [{ path: 'x.txt', content: 'x' }] }, `branch ${JSON.stringify(branch)} is not a valid branch name`);
    });

    it('option-like and over-long names are refused before git runs', async () => {
      await refusedUntouched({ branch: '-x', files: [{ path: 'x.txt', content: 'x' }] }, 'branch "-x" starts with "-", so git could take it for an option; it is refused and git was not run');
      await refusedUntouched({ branch: 'b'.repeat(256), files: [{ path: 'x.txt', content: 'x' }] }, 'Invalid arguments for git:commit_changeset: `branch`: Too big: expected string to have <=255 characters');
    });

    it('a branch that is a symbolic ref to a tag moves only the branch, never the tag', async () => {
      git(repo, ['tag', 'v1.0']);
      git(repo, ['symbolic-ref', 'refs/heads/release', 'refs/tags/v1.0']);
      const result = await h.call('commit_changeset', { branch: 'release', expected_head: head, message: 'm', files: [{ path: 'x.txt', content: 'x' }] });
      expect(result.isError, result.text).toBe(false);
      expect(git(repo, ['rev-parse', 'refs/tags/v1.0']).trim()).toBe(head);
      expect(git(repo, ['rev-parse', 'refs/heads/release']).trim()).toBe((result.structured as { commit: string }).commit);
    });
  });

  describe('size caps (3 files, 1000 bytes a file, 1500 in all here)', () => {
    it('too many files', async () => {
      await refusedUntouched({ files: ['1', '2', '3', '4'].map((n) => ({ path: `${n}.txt`, content: n })) }, 'files has 4 entries; the limit is 3 (limits.changeset_max_files)');
    });
    it('one file too large (in bytes, not characters)', async () => {
      await refusedUntouched({ files: [{ path: 'big.txt', content: 'é'.repeat(501) }] }, 'files[0].content is 1002 bytes; the limit is 1000 (limits.changeset_max_file_bytes)');
    });
    it('too large in all', async () => {
      await refusedUntouched({ files: [{ path: 'a1.txt', content: 'x'.repeat(800) }, { path: 'a2.txt', content: 'x'.repeat(800) }] }, 'the contents add up to more than 1500 bytes (limits.changeset_max_total_bytes)');
    });
    it('a message over 100,000 characters', async () => {
      await refusedUntouched({ message: 'm'.repeat(100_001), files: [{ path: 'x.txt', content: 'x' }] }, 'Invalid arguments for git:commit_changeset: `message`: Too big: expected string to have <=100000 characters');
    });
  });

  it('a success touches neither the working tree nor the index (the branch is checked out)', async () => {
    const before = repoState(repo, { internals: false });
    const index = readFileSync(join(repo, '.git/index'));
    const result = await h.call('commit_changeset', {
      branch: 'main',
      expected_head: head,
      message: 'tool commit',
      files: [
        { path: 'a.txt', content: 'from the tool\n' },
        { path: 'dir/b.txt', delete: true },
        { path: 'new/c.txt', content: 'c\n' },
      ],
    });
    expect(result.isError, result.text).toBe(false);
    const made = (result.structured as { commit: string }).commit;
    const after = repoState(repo, { internals: false });
    expect(after['refs']).not.toEqual(before['refs']);
    expect({ ...after, refs: null, status: null }).toEqual({ ...before, refs: null, status: null });
    expect(readFileSync(join(repo, '.git/index')).equals(index)).toBe(true);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('edited, not staged\n');
    expect(existsSync(join(repo, 'new'))).toBe(false);
    expect(git(repo, ['ls-tree', '-r', '--name-only', made])).toBe('.github/workflows/ci.yml\na.txt\nlink-target.txt\nnew/c.txt\n');
    // No temporary index was left anywhere in the git directory.
    expect(Object.keys(repoState(repo)['files'] as object).filter((path) => /index/.test(path) && path !== '.git/index')).toEqual([]);
  });
});

/** A server process whose git is a wrapper that moves `main` just before the server's update-ref. */
describe('a concurrent update between the read and update-ref (a real server process)', () => {
  let ws: TempWorkspace;
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    ws.cleanup();
  });

  /** The index file and the working tree: what our commit must never touch (the racer moves refs only). */
  const untouchable = (repo: string) => {
    const { index, files } = repoState(repo, { internals: false });
    return { index, files };
  };

  async function raced(action: (repo: string, other: string) => string): Promise<{ repo: string; head: string; other: string; result: Outcome; before: unknown }> {
    ws = tempWorkspace({}, 'bulkhead-git-race-');
    const repo = initRepo(ws.path('repo'));
    const head = commit(repo, 'base', { 'a.txt': 'a\n' });
    const other = commit(repo, 'theirs', { 'a.txt': 'theirs\n' });
    git(repo, ['reset', '-q', '--hard', head]);
    mkdirSync(ws.path('.bulkhead'));
    writeFileSync(ws.path('.bulkhead/permissions.yaml'), 'allow:\n  - git\n');
    writeFileSync(ws.path('.bulkhead/git_policy.yaml'), 'allow_write: true\n');
    writeFileSync(ws.path('.bulkhead/audit_policy.yaml'), 'enabled: false\n');
    const bin = ws.mkdir('bin');
    const racer = action(repo, other);
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/bash\nfor a in "$@"; do\n  if [ "$a" = update-ref ] && [ ! -e '${ws.path('raced')}' ]; then\n    touch '${ws.path('raced')}'\n    ${racer}\n  fi\ndone\nexec '${REAL_GIT}' "$@"\n`,
    );
    chmodSync(join(bin, 'git'), 0o755);
    server = await startStdioServer({ script: GIT_CLI, args: ['--root', ws.root], env: { PATH: `${bin}:${process.env['PATH']}` } });
    const before = untouchable(repo);
    const reply = (await server.client.callTool({ name: 'commit_changeset', arguments: { repo: 'repo', branch: 'main', expected_head: head, message: 'mine', files: [{ path: 'b.txt', content: 'b\n' }] } })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(existsSync(ws.path('raced'))).toBe(true);
    return { repo, head, other, before, result: { isError: reply.isError === true, text: reply.content.map((c) => c.text).join('\n') } };
  }
  // The racer inherits the server's git environment (GIT_GRAFT_FILE=/dev/null) without its -c options, which would make it advise about grafts on the shared stderr.
  const realGit = (repo: string, args: string) => `env -u GIT_GRAFT_FILE '${REAL_GIT}' --git-dir='${repo}/.git' -c core.hooksPath=/dev/null ${args}`;

  it('the branch moved elsewhere: the commit fails cleanly and the other writer wins', async () => {
    const { repo, head, other, result, before } = await raced((r, o) => realGit(r, `update-ref refs/heads/main ${o}`));
    expect(result).toEqual(
      refused(
        `branch main changed while the commit was being made (fatal: update_ref failed for ref 'refs/heads/main': cannot lock ref 'refs/heads/main': is at ${other} but expected ${head}); it was left as it is and nothing was committed. Look at the branch again (git_log) and retry with its new head as expected_head.`,
      ),
    );
    expect(git(repo, ['rev-parse', 'main']).trim()).toBe(other);
    expect(untouchable(repo)).toEqual(before);
    expect(git(repo, ['log', '--all', '--format=%s'])).toBe('theirs\nbase\n');
  });

  it('the branch was deleted: the commit fails cleanly and the branch stays deleted', async () => {
    const { repo, head, result, before } = await raced((r) => realGit(r, 'update-ref -d refs/heads/main'));
    expect(result).toEqual(
      refused(
        `branch main changed while the commit was being made (fatal: update_ref failed for ref 'refs/heads/main': cannot lock ref 'refs/heads/main': unable to resolve reference 'refs/heads/main'); it was left as it is and nothing was committed. Look at the branch again (git_log) and retry with its new head as expected_head.`,
      ),
    );
    expect(git(repo, ['for-each-ref', 'refs/heads/main'])).toBe('');
    expect(untouchable(repo)).toEqual(before);
    expect(head).toMatch(/^[0-9a-f]{40}$/);
  });
});
