import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  decodeGitName,
  encodeGitName,
  exactPathspec,
  gitEnvironment,
  GitRepository,
  HARDENED_GIT_OPTIONS,
  NEWLINE,
  NUL,
  quoteGitPath,
  refuseOptionLike,
  repositoryPath,
  Roots,
  runGitProcess,
  TokenReader,
} from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@x' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: ENV, encoding: 'utf8' });

let ws: TempWorkspace;
beforeEach(() => {
  ws = tempWorkspace({}, 'bulkhead-core-git-');
});
afterEach(() => ws.cleanup());

const LIMITS = { timeoutMs: 10_000, maxOutputBytes: 1024 * 1024 };
const rootsOf = (root: string) => new Roots([root], { controlDir: join(root, '.bulkhead'), denyRead: [] });

describe('git names', () => {
  it('passes UTF-8 names through and escapes other bytes so they read back exactly', () => {
    expect(decodeGitName(Buffer.from('src/ünïcode.ts'))).toBe('src/ünïcode.ts');
    const odd = Buffer.from([0x62, 0x61, 0x64, 0xff, 0x5c, 0x6e, 0xc3, 0xa9]);
    expect(decodeGitName(odd)).toBe('bad\\xff\\\\né');
    expect(encodeGitName('bad\\xff\\\\né').equals(odd)).toBe(true);
    // A UTF-8 name that merely looks escaped is taken literally.
    expect(encodeGitName('a\\x41b').toString()).toBe('a\\x41b');
  });

  it('quotes paths exactly as git does in patch headers', () => {
    const repo = ws.mkdir('repo');
    git(repo, 'init', '-q');
    const names = [Buffer.from('plain name.txt'), Buffer.from('tab\there'), Buffer.from('quote"back\\slash'), Buffer.from([0x6e, 0xff, 0xc3, 0xa9])];
    for (const name of names) writeFileSync(Buffer.concat([Buffer.from(`${repo}/`), name]), 'x\n');
    git(repo, 'add', '-A');
    const patch = execFileSync('git', ['-c', 'core.quotePath=true', 'diff', '--cached', '--src-prefix=', '--dst-prefix='], { cwd: repo, env: ENV });
    const headers = patch
      .toString('latin1')
      .split('\n')
      .filter((line) => line.startsWith('diff --git '));
    const expected = names.map((name) => `diff --git ${quoteGitPath(name).toString('latin1')} ${quoteGitPath(name).toString('latin1')}`);
    expect(headers.sort()).toEqual(expected.sort());
  });
});

describe('argument guards', () => {
  it('refuses option-like values, absolute paths and ..', () => {
    expect(() => refuseOptionLike('--output=/tmp/x', 'rev')).toThrow('rev "--output=/tmp/x" starts with "-", so git could take it for an option; it is refused and git was not run');
    expect(() => repositoryPath('-c', 'path')).toThrow('path "-c" starts with "-"');
    expect(() => repositoryPath('/etc/passwd', 'path')).toThrow('is absolute');
    expect(() => repositoryPath('a/../../b', 'path')).toThrow('contains ".."');
    expect(repositoryPath('./src//a.ts/', 'path').toString()).toBe('src/a.ts');
    expect(repositoryPath('.', 'path').length).toBe(0);
  });

  it('builds literal pathspecs, and globs with ? for bytes that are not UTF-8', () => {
    expect(exactPathspec(Buffer.from('a*b?.txt'))).toBe(':(literal)a*b?.txt');
    expect(exactPathspec(Buffer.from([0x2a, 0xff, 0x61]))).toBe(':(glob)\\*?a');
  });
});

describe('TokenReader', () => {
  it('splits across chunks, caps each token and lets the handler switch delimiters', () => {
    const seen: string[] = [];
    const reader = new TokenReader({
      delimiter: NUL,
      maxTokenBytes: 4,
      onToken: (token, dropped) => {
        seen.push(`${token.toString()}+${dropped}`);
        if (token.length === 0) reader.delimiter = NEWLINE;
      },
    });
    reader.push(Buffer.from('ab\0abcdefg\0'));
    reader.push(Buffer.from('\0line one\nli'));
    reader.push(Buffer.from('ne two'));
    reader.end();
    expect(seen).toEqual(['ab+0', 'abcd+3', '+0', 'line+4', 'line+4']);
  });
});

describe('runGitProcess', () => {
  it('builds the environment from nothing: GIT_DIR and friends of the parent never leak', () => {
    const env = gitEnvironment();
    expect(Object.keys(env).filter((key) => key.startsWith('GIT_')).sort()).toEqual(
      ['GIT_ALLOW_PROTOCOL', 'GIT_ATTR_NOSYSTEM', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_SYSTEM', 'GIT_GRAFT_FILE', 'GIT_NO_REPLACE_OBJECTS', 'GIT_OPTIONAL_LOCKS', 'GIT_PAGER', 'GIT_TERMINAL_PROMPT'].sort(),
    );
    // A HOME below a device file: nothing can ever be read from it or created in it.
    expect([env['HOME'], env['XDG_CONFIG_HOME']]).toEqual(['/dev/null', '/dev/null']);
    expect(() => readdirSync(`${env['HOME']}/.config`)).toThrow(/ENOTDIR/);
    expect(HARDENED_GIT_OPTIONS).toEqual(expect.arrayContaining(['--no-pager', '-c', 'core.fsmonitor=false', 'core.hooksPath=/dev/null', 'protocol.allow=never', 'diff.external=']));
  });

  it('kills git and whatever it started at the timeout', async () => {
    const fifo = ws.path('fifo');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    await expect(runGitProcess({ cwd: ws.root, argv: ['hash-object', fifo], env: gitEnvironment(), timeoutMs: 300, maxOutputBytes: 1024 })).rejects.toThrow(
      'git hash-object did not finish within 300 ms and was stopped (limits.timeout_ms)',
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops reading at the cap and says the output was truncated', async () => {
    const repo = ws.mkdir('repo');
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'big.txt'), 'x'.repeat(1024 * 1024));
    const oid = git(repo, 'hash-object', '-w', 'big.txt').trim();
    const result = await runGitProcess({ cwd: repo, argv: ['cat-file', 'blob', oid], env: gitEnvironment(), timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(result).toMatchObject({ truncated: true, stopped: false });
    expect(result.stdout.length).toBe(1000);
  });
});

describe('GitRepository.open', () => {
  it('finds the repository above a folder, never above the root', async () => {
    const repo = ws.mkdir('repo');
    git(repo, 'init', '-q');
    mkdirSync(join(repo, 'src/deep'), { recursive: true });
    const opened = await GitRepository.open(rootsOf(ws.root), 'repo/src/deep', LIMITS);
    expect(opened.layout).toEqual({ workTree: repo, gitDir: join(repo, '.git'), commonDir: join(repo, '.git') });
    await expect(GitRepository.open(rootsOf(join(repo, 'src')), undefined, LIMITS)).rejects.toThrow(`. is not in a git repository: there is no .git in it or in the folders above it up to the root ${join(repo, 'src')}`);
  });

  it('refuses a .git pointer, a .git symlink or borrowed objects outside the roots', async () => {
    const outside = ws.mkdir('outside');
    git(outside, 'init', '-q');
    const root = ws.mkdir('root');
    ws.write('root/pointer/.git', `gitdir: ${join(outside, '.git')}\n`);
    mkdirSync(join(root, 'linked'));
    symlinkSync(join(outside, '.git'), join(root, 'linked/.git'));
    const borrowing = ws.mkdir('root/borrowing');
    git(borrowing, 'init', '-q');
    writeFileSync(join(borrowing, '.git/objects/info/alternates'), `${join(outside, '.git/objects')}\n`);
    const roots = rootsOf(root);
    await expect(GitRepository.open(roots, 'pointer', LIMITS)).rejects.toThrow(`pointer: its git directory (named by .git) is ${join(outside, '.git')}, outside the allowed roots (${root}); the repository is refused`);
    await expect(GitRepository.open(roots, 'linked', LIMITS)).rejects.toThrow(`linked: its git directory (.git) is ${join(outside, '.git')}, outside the allowed roots`);
    await expect(GitRepository.open(roots, 'borrowing', LIMITS)).rejects.toThrow(`an object store it borrows from (objects/info/alternates) is ${join(outside, '.git/objects')}, outside the allowed roots`);
  });

  it('resolves revisions from stdin and names a missing one', async () => {
    const repo = ws.mkdir('repo');
    git(repo, 'init', '-q');
    const opened = await GitRepository.open(rootsOf(ws.root), 'repo', LIMITS);
    await expect(opened.resolveCommit('HEAD', 'rev')).rejects.toThrow(`rev "HEAD": repo has no commits yet`);
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'one');
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    expect(await opened.resolveCommits([{ value: 'HEAD', argument: 'a' }, { value: 'main', argument: 'b' }])).toEqual([head, head]);
    await expect(opened.resolveCommit('nope', 'from')).rejects.toThrow(`from "nope" does not exist (or is not a commit) in repo`);
    await expect(opened.resolveCommit('--upload-pack=touch x', 'from')).rejects.toThrow('starts with "-"');
    expect(existsSync(join(repo, 'x'))).toBe(false);
    expect(readFileSync(join(repo, '.git/HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
  });
});
