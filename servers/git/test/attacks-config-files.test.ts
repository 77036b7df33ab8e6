import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { evilProgram, markers, REAL_GIT, startAttackServer, type AttackServer } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * Issue 15, item 8: configuration keys that make git read a file. A hostile repository points each
 * at a canary outside the roots, in two forms: a regular file whose text would show up in output
 * or errors (a mailmap's names as authors, an ignore-revs line quoted in "invalid object name"),
 * and a named pipe, which git would block on when it opened it (the tool would then run into its
 * deadline): so "never read" is observed, not assumed. Plain git first proves each key is live.
 */

const CANARY = 'CANARY-7f3a-outside-the-roots';
const AUTHOR = 'Ada Tester <ada@example.com>';

interface FileVector {
  readonly key: string;
  /** The canary's text for this key (what git would take from it). */
  readonly content: string;
  /** A plain git command that reads the file (and so hangs on a pipe). */
  readonly proof: readonly string[];
}

const FILE_VECTORS: FileVector[] = [
  { key: 'mailmap.file', content: `${CANARY} <canary@example.invalid> ${AUTHOR.split(' ').at(-1)}\n`, proof: ['check-mailmap', AUTHOR] },
  { key: 'blame.ignoreRevsFile', content: `${CANARY}\n`, proof: ['blame', 'f.txt'] },
  { key: 'core.attributesFile', content: `* diff=${CANARY}\n`, proof: ['check-attr', '-a', 'f.txt'] },
  { key: 'core.excludesFile', content: `${CANARY}\n`, proof: ['status'] },
  { key: 'diff.orderFile', content: `${CANARY}\n`, proof: ['diff', 'HEAD~1'] },
  { key: 'commit.template', content: `${CANARY}\n`, proof: ['-c', 'core.editor=true', 'commit', '--allow-empty'] },
];

function baseRepo(repo: string): string {
  initRepo(repo);
  commit(repo, 'one', { 'f.txt': 'hello\n', 'g.txt': 'one\n' });
  commit(repo, 'two', { 'f.txt': 'hallo\n', 'g.txt': 'one\ntwo\n' });
  writeFileSync(join(repo, 'f.txt'), 'HALLO\n');
  return git(repo, ['rev-parse', 'HEAD']).trim();
}

const IDENTITY = { GIT_AUTHOR_NAME: 'Ada Tester', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada Tester', GIT_COMMITTER_EMAIL: 'ada@example.com' };
const plainEnv = (home: string) => ({ PATH: process.env['PATH'] ?? '', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C', ...IDENTITY });

/** Plain git: its output and errors, and whether it ran into the deadline (blocked on a pipe). */
function plain(repo: string, args: readonly string[], home: string): { text: string; hung: boolean } {
  const result = spawnSync(REAL_GIT, args, { cwd: repo, env: plainEnv(home), encoding: 'utf8', timeout: 2000, killSignal: 'SIGKILL' });
  return { text: `${result.stdout ?? ''}${result.stderr ?? ''}`, hung: result.error !== undefined && (result.error as NodeJS.ErrnoException).code === 'ETIMEDOUT' };
}

/** Every tool, each in a way that would read what the key names. */
function calls(head: string): [string, Record<string, unknown>][] {
  return [
    ['git_status', {}],
    ['git_log', {}],
    ['git_log', { author: 'CANARY' }],
    ['git_log', { author: 'Ada' }],
    ['git_diff', {}],
    ['git_diff', { from: 'HEAD~1', to: 'HEAD' }],
    ['git_show', { rev: 'HEAD' }],
    ['git_show_file', { rev: 'HEAD', path: 'g.txt' }],
    ['git_blame', { path: 'f.txt' }],
    ['git_blame', { path: 'g.txt', rev: 'HEAD' }],
    ['git_refs', { kind: 'all' }],
    ['commit_changeset', { branch: 'side', create: true, expected_head: head, message: 'by the tool', files: [{ path: 'h.txt', content: 'h\n' }] }],
  ];
}

let h: AttackServer | undefined;
let outside: TempWorkspace;
beforeEach(() => {
  outside = tempWorkspace({}, 'bulkhead-git-canary-');
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  outside.cleanup();
});

describe('configuration that names a file outside the roots: git never reads it', () => {

  async function runAll(repo: string, head: string): Promise<string[]> {
    const seen: string[] = [];
    for (const [name, args] of calls(head)) {
      const result = await h!.call(name, { repo: 'repo', ...args });
      seen.push(`${name} ${JSON.stringify(args)} -> ${result.isError ? 'error: ' : ''}${result.text}`);
    }
    git(repo, ['branch', '-D', 'side']);
    return seen;
  }

  for (const vector of FILE_VECTORS) {
    it(`${vector.key}: a canary file's text never appears, a named pipe is never opened`, async () => {
      h = await startAttackServer({ policy: { allow_write: true, limits: { timeout_ms: 4000 } } });
      const repo = h.ws.path('repo');
      const head = baseRepo(repo);
      const canary = outside.write('canary', vector.content);
      const pipe = outside.path('pipe');
      execFileSync('mkfifo', [pipe]);

      // Live: plain git blocks on the pipe.
      git(repo, ['config', vector.key, pipe]);
      expect(plain(repo, vector.proof, outside.root).hung, `plain git ${vector.proof.join(' ')} did not open ${vector.key}`).toBe(true);
      const onPipe = await runAll(repo, head);
      expect(onPipe.filter((line) => line.includes('did not finish within') || line.includes('error:'))).toEqual([]);

      git(repo, ['config', vector.key, canary]);
      const outcomes = await runAll(repo, head);
      expect(outcomes.filter((line) => line.includes('CANARY') && !line.includes('git_log {"author":"CANARY"}'))).toEqual([]);
      expect(outcomes.filter((line) => line.includes('error:'))).toEqual([]);
    });
  }

  it('mailmap.file: plain git shows the canary as the author; the tools show the real author', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = h.ws.path('repo');
    const head = baseRepo(repo);
    git(repo, ['config', 'mailmap.file', outside.write('mailmap', `${CANARY} <canary@example.invalid> <ada@example.com>\n`)]);
    expect(plain(repo, ['log', '-1', '--format=%aN', '--use-mailmap'], outside.root).text).toContain(CANARY);
    const outcomes = await runAll(repo, head);
    expect(outcomes.filter((line) => line.includes(CANARY))).toEqual([]);
    expect(outcomes.find((line) => line.startsWith('git_blame {"path":"f.txt"}'))).toContain('Ada Tester');
    // The author filter matches the real author only: for the canary's name it answers as for a name nobody has.
    const none = await h.call('git_log', { repo: 'repo', author: 'nobody-has-this-name' });
    expect(await h.call('git_log', { repo: 'repo', author: 'CANARY' })).toEqual(none);
    expect((await h.call('git_log', { repo: 'repo', author: 'Ada' })).text).toContain('Ada Tester');
  });

  it('mailmap.blob (a blob of the repository; also the default HEAD:.mailmap of a bare repository) is not used', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = h.ws.path('repo');
    const head = baseRepo(repo);
    const blob = git(repo, ['hash-object', '-w', '--stdin'], { input: `${CANARY} <canary@example.invalid> <ada@example.com>\n` }).trim();
    git(repo, ['config', 'mailmap.blob', blob]);
    expect(plain(repo, ['check-mailmap', AUTHOR], outside.root).text).toContain(CANARY);
    expect((await runAll(repo, head)).filter((line) => line.includes(CANARY))).toEqual([]);
  });

  it('include.path and includeIf.*.path: a target outside the roots (file, pipe, missing, ~, relative ..) refuses the repository; no tool opens it', async () => {
    h = await startAttackServer({ policy: { allow_write: true, limits: { timeout_ms: 4000 } } });
    const repo = h.ws.path('repo');
    const head = baseRepo(repo);
    const pipe = outside.path('pipe');
    execFileSync('mkfifo', [pipe]);
    outside.write('cfg', `[mailmap]\n\tfile = ${outside.write('mailmap', `${CANARY} <c@x> <ada@example.com>\n`)}\n`);
    const relativeOut = join('..', '..', '..', ...outside.root.split('/').filter(Boolean)).replace(/^/, '../'.repeat(8));
    const targets: [string, string][] = [
      ['include.path', outside.path('cfg')],
      ['include.path', pipe],
      ['includeIf.gitdir:/nowhere/**.path', outside.path('cfg')],
      ['includeIf.onbranch:never.path', pipe],
      ['includeIf.hasconfig:remote.*.url:https://x/**.path', outside.path('cfg')],
      ['include.path', outside.path('missing/later.cfg')],
      ['include.path', '~/.gitconfig'],
      ['include.path', '~root/.gitconfig'],
      ['include.path', relativeOut + '/cfg'],
    ];
    for (const [key, target] of targets) {
      git(outside.root, ['config', '--file', join(repo, '.git/config'), key, target]);
      if (target === pipe) expect(plain(repo, ['status'], outside.root).hung || key.startsWith('includeIf'), `${key} ${target}`).toBe(true);
      for (const [name, args] of calls(head)) {
        const result = await h.call(name, { repo: 'repo', ...args });
        expect(result.isError, `${key}=${target} ${name}`).toBe(true);
        expect(result.text, `${key}=${target} ${name}`).toMatch(/names ".*", (which is .*, outside the allowed roots|a path from a home folder|which would be created outside the allowed roots).*; git would read it as configuration, so the repository is refused$/);
        expect(result.text).not.toContain(CANARY);
      }
      // Edited from outside any repository: git config inside it would follow the include and block on the pipe.
      git(outside.root, ['config', '--file', join(repo, '.git/config'), '--unset', key]);
    }
  });

  it('an include target inside the roots that is a named pipe refuses the repository instead of hanging', async () => {
    h = await startAttackServer({ policy: { limits: { timeout_ms: 4000 } } });
    const repo = h.ws.path('repo');
    baseRepo(repo);
    execFileSync('mkfifo', [join(repo, 'pipe.cfg')]);
    git(repo, ['config', 'include.path', '../pipe.cfg']);
    const result = await h.call('git_status', { repo: 'repo' });
    expect(result.text).toMatch(/include\.path in .* names "\.\.\/pipe\.cfg", which is .*pipe\.cfg, not a regular file; git would read it as configuration, so the repository is refused$/);
  });

  it('info/grafts (read even with --no-replace-objects; a bad line is quoted in an error) is not read, and info/ symlinks out of the roots refuse the repository', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = h.ws.path('repo');
    const head = baseRepo(repo);
    writeFileSync(join(repo, '.git/info/grafts'), `${CANARY}\n`);
    expect(plain(repo, ['--no-replace-objects', 'log', '-1'], outside.root).text).toContain(`bad graft data: ${CANARY}`);
    expect((await runAll(repo, head)).filter((line) => line.includes(CANARY) || line.includes('error:'))).toEqual([]);
    for (const name of ['grafts', 'exclude', 'attributes', 'sparse-checkout']) {
      const link = join(repo, '.git/info', name);
      spawnSync('rm', ['-f', link]);
      symlinkSync(outside.write(`info-${name}`, `${CANARY}\n`), link);
      const result = await h.call('git_log', { repo: 'repo' });
      expect(result.text).toMatch(new RegExp(`^repo: its git directory's info/${name} \\(a symlink\\) is .*, outside the allowed roots .*; the repository is refused$`));
      spawnSync('rm', ['-f', link]);
    }
  });

  it('in-tree .mailmap, .gitattributes and .gitignore that are symlinks out of the roots are not followed', async () => {
    h = await startAttackServer({ policy: { allow_write: true, limits: { timeout_ms: 4000 } } });
    const repo = h.ws.path('repo');
    const head = baseRepo(repo);
    const pipe = outside.path('pipe');
    execFileSync('mkfifo', [pipe]);
    symlinkSync(outside.write('mailmap', `${CANARY} <c@x> <ada@example.com>\n`), join(repo, '.mailmap'));
    symlinkSync(pipe, join(repo, '.gitattributes'));
    symlinkSync(pipe, join(repo, '.gitignore'));
    const outcomes = await runAll(repo, head);
    expect(outcomes.filter((line) => line.includes(CANARY) || line.includes('did not finish within'))).toEqual([]);
  });
});

describe('programs named by configuration never run', () => {

  it('gpg.ssh.defaultKeyCommand, gpg.ssh.program and sequence.editor: plain git runs them, no tool does', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = h.ws.path('repo');
    const head = baseRepo(repo);
    const marker = outside.path('MARKER');
    const bin = outside.path('bin');
    mkdirSync(bin);
    git(repo, ['config', 'gpg.format', 'ssh']);
    git(repo, ['config', 'gpg.ssh.defaultKeyCommand', evilProgram(bin, 'default-key-command', marker, 'fail')]);
    git(repo, ['config', 'gpg.ssh.program', evilProgram(bin, 'ssh-keygen', marker, 'fail')]);
    git(repo, ['config', 'gpg.ssh.allowedSignersFile', outside.write('signers', `${CANARY}\n`)]);
    git(repo, ['config', 'sequence.editor', evilProgram(bin, 'sequence-editor', marker, 'fail')]);
    git(repo, ['config', 'commit.gpgSign', 'true']);
    git(repo, ['config', 'log.showSignature', 'true']);
    plain(repo, ['commit', '--allow-empty', '-m', 'signed?'], outside.root);
    plain(repo, ['rebase', '-i', '--autostash', 'HEAD~1'], outside.root);
    expect(markers(marker)).toEqual(expect.arrayContaining(['default-key-command', 'sequence-editor']));
    spawnSync(REAL_GIT, ['rebase', '--abort'], { cwd: repo, env: plainEnv(outside.root) });
    writeFileSync(marker, '');
    const seen: string[] = [];
    for (const [name, args] of calls(head)) {
      const result = await h.call(name, { repo: 'repo', ...args });
      seen.push(`${name} ${result.isError ? 'error: ' : ''}${result.text}`);
    }
    expect(markers(marker)).toEqual([]);
    expect(seen.filter((line) => line.includes('error:') || line.includes(CANARY))).toEqual([]);
  });
});
