import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GIT_CLI, processesMentioning, refused, startAttackServer, type AttackServer, type Outcome } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * Resource attacks: a diff of 10,000 files, huge files and lines, huge commit messages, and git
 * processes that hang. Every answer is capped with a note saying what was cut; a hung git is killed
 * at limits.timeout_ms with a clear error, leaves no process behind, and the server goes on serving.
 */

/** `git fast-import` text for one commit on main that sets `files` (path → content). */
function importCommit(message: string, time: number, files: Record<string, string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from(`commit refs/heads/main\ncommitter Bulk <bulk@example.com> ${time} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n`)];
  for (const [path, content] of Object.entries(files)) {
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
    parts.push(Buffer.from(`M 100644 inline ${path}\ndata ${bytes.length}\n`), bytes, Buffer.from('\n'));
  }
  parts.push(Buffer.from('\n'));
  return Buffer.concat(parts);
}

describe('a diff of 10,000 files', () => {
  let h: AttackServer;
  let repo: string;
  beforeAll(async () => {
    h = await startAttackServer({ policy: { limits: { diff_total_max_bytes: 4096, status_max_entries: 1000 } } });
    repo = initRepo(h.ws.path('repo'));
    const before: Record<string, string> = {};
    const after: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++) {
      const path = `f/${String(i).padStart(5, '0')}.txt`;
      before[path] = 'line1\n';
      after[path] = 'line1\nline2\n';
    }
    git(repo, ['fast-import', '--quiet'], { input: Buffer.concat([importCommit('A', 1_600_000_000, before), importCommit('B', 1_600_000_001, after)]) });
  });
  afterAll(async () => {
    await h.close();
  });

  type Diff = { files: { path: string; omitted?: string; added: number | null }[]; total_files: number; truncated: boolean };

  it('git_diff lists 1,000 files, shows patches up to the byte cap, and says what was cut', async () => {
    const result = await h.call('git_diff', { repo: 'repo', from: 'HEAD~1', to: 'HEAD' });
    expect(result.isError).toBe(false);
    const diff = result.structured as unknown as Diff;
    expect([diff.total_files, diff.files.length, diff.truncated]).toEqual([10_000, 1000, true]);
    const lines = result.text.split('\n');
    expect(lines[0]).toBe('10000 files changed; the first 1000 are listed (limits.diff_max_files):');
    expect(lines[1]).toBe('  modified f/00000.txt +1 −0');
    expect(lines.at(-1)).toBe('[some files have no patch above (see the list); ask for one file with path, or narrow the range]');
    // Patches are in the text only: some dozens of the 1,000, up to the 4 KiB cap, then a note.
    const patches = lines.filter((line) => line.startsWith('diff --git ')).length;
    expect(patches).toBeGreaterThan(10);
    expect(patches).toBeLessThan(100);
    expect(lines.filter((line) => line === '[patch cut at the total cap of 4.0 KiB (limits.diff_total_max_bytes); ask for this file alone with path]')).toHaveLength(1);
    expect(diff.files.at(-1)).toEqual({ path: 'f/00999.txt', status: 'modified', added: null, deleted: null, binary: false, omitted: 'not shown: the patch output stopped at a cap before this file' });
  });

  it('stat_only and git_show list 1,000 of the 10,000 files too', async () => {
    const stat = await h.call('git_diff', { repo: 'repo', from: 'HEAD~1', to: 'HEAD', stat_only: true });
    expect(stat.text.split('\n').length).toBe(1001);
    expect(stat.text.split('\n').at(-1)).toBe('  modified f/00999.txt +1 −0');
    const show = await h.call('git_show', { repo: 'repo', rev: 'HEAD' });
    expect(show.structured).toMatchObject({ total_files: 10_000, truncated: true });
    expect((show.structured as unknown as Diff).files.length).toBe(1000);
  });

  it('git_status lists 1,000 of 10,000 changed files and says there are more', async () => {
    // The index holds the 10,000 files, the working tree none of them: 10,000 deletions.
    git(repo, ['read-tree', 'HEAD']);
    const result = await h.call('git_status', { repo: 'repo' });
    const status = result.structured as { unstaged: unknown[]; truncated: boolean };
    expect(status.truncated).toBe(true);
    expect(status.unstaged.length).toBe(1000);
    expect(result.text.split('\n').at(-1)).toBe('[only the first 1000 changed paths are listed; there are more]');
  });
});

describe('huge files, lines and messages', () => {
  let h: AttackServer;
  let repo: string;
  const BIG_LINES = 400_000;
  /** `count` lines of nine `char`s: 10 bytes a line. */
  const lines = (char: string, count: number) => {
    const bytes = Buffer.alloc(count * 10, char);
    for (let i = 1; i <= count; i++) bytes[i * 10 - 1] = 0x0a;
    return bytes;
  };
  beforeAll(async () => {
    h = await startAttackServer({ policy: { limits: { max_read_bytes: 1024 * 1024, diff_file_max_lines: 10, body_max_chars: 100, line_max_chars: 80 } } });
    repo = initRepo(h.ws.path('repo'));
    // Five commits of 300 KB messages: together past max_read_bytes, each within it.
    const message = `huge\n\n${'m'.repeat(300 * 1024)}`;
    git(repo, ['fast-import', '--quiet'], {
      input: Buffer.concat([
        importCommit('first', 1_600_000_000, { 'big.txt': lines('x', BIG_LINES), 'line.txt': Buffer.alloc(900 * 1024, 'y') }),
        importCommit(message, 1_600_000_001, { 'big.txt': lines('z', BIG_LINES) }),
        ...[2, 3, 4, 5].map((n) => importCommit(message, 1_600_000_000 + n, { [`small${n}.txt`]: 'small\n' })),
      ]),
    });
  });
  afterAll(async () => {
    await h.close();
  });

  it('git_show_file of a 4 MB file: 2,000 lines, then where to read on', async () => {
    const result = await h.call('git_show_file', { repo: 'repo', rev: 'HEAD', path: 'big.txt' });
    expect(result.isError).toBe(false);
    expect(result.structured).toMatchObject({ first_line: 1, last_line: 2000, next_offset: 2001, size: BIG_LINES * 10 });
    expect(result.text.split('\n').at(-1)).toMatch(/^\[lines 1-2000( of \d+)?; next: offset=2001/);
  });

  it('git_show_file from the end of a file larger than max_read_bytes is refused with the reason', async () => {
    expect(await h.outcome('git_show_file', { repo: 'repo', rev: 'HEAD', path: 'big.txt', offset: -10 })).toEqual(
      refused('big.txt is 3.8 MiB, more than can be read to its end (limits.max_read_bytes); read it with a positive offset'),
    );
  });

  it('a 900 KB line is cut with a marker', async () => {
    const result = await h.call('git_show_file', { repo: 'repo', rev: 'HEAD', path: 'line.txt' });
    expect(result.isError, result.text).toBe(false);
    const content = (result.structured as { content: string }).content;
    expect(content.startsWith(`${'y'.repeat(80)}… [line truncated: `)).toBe(true);
    expect(content.length).toBeLessThan(200);
  });

  it('git_diff rewriting the 4 MB file: its patch cut at diff_file_max_lines, with a note', async () => {
    const result = await h.call('git_diff', { repo: 'repo', from: 'HEAD~5', to: 'HEAD~4' });
    expect(result.isError).toBe(false);
    const text = result.text.split('\n');
    expect(text.filter((line) => /^[-+ ]/.test(line) && !line.startsWith('---') && !line.startsWith('+++'))).toHaveLength(6);
    expect(text.at(-1)).toBe('[patch cut at 10 lines (limits.diff_file_max_lines); ask for this file alone with path]');
  });

  it('git_log of 300 KB messages: bodies cut, the stream stopped at max_read_bytes, and the next page offered', async () => {
    const result = await h.call('git_log', { repo: 'repo', max_count: 6 });
    expect(result.isError).toBe(false);
    const log = result.structured as { commits: { body: string }[]; next_skip: number | null };
    expect(log.commits.length).toBe(3);
    expect(log.next_skip).toBe(3);
    for (const commit of log.commits) expect(commit.body).toBe(`${'m'.repeat(100)}… [message truncated: ${300 * 1024 - 100} more bytes]`);
    expect(result.text.split('\n\n').slice(-2)).toEqual([
      "[git's output passed 1048576 bytes (limits.max_read_bytes) and was cut; ask for fewer commits]",
      '[commits 1-3; more: skip=3]',
    ]);
  });

  it('git_blame of a file larger than max_read_bytes is refused with the reason', async () => {
    expect(await h.outcome('git_blame', { repo: 'repo', path: 'big.txt' })).toEqual(refused('big.txt is too large to blame (over limits.max_read_bytes)'));
  });
});

describe('a git process that hangs is killed at the timeout (a real server process)', () => {
  let ws: TempWorkspace;
  let server: ServerProcess | undefined;
  let repo: string;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    ws.cleanup();
  });

  async function serve(): Promise<void> {
    mkdirSync(ws.path('.bulkhead'));
    writeFileSync(ws.path('.bulkhead/permissions.yaml'), 'allow:\n  - git\n');
    writeFileSync(ws.path('.bulkhead/git_policy.yaml'), 'limits:\n  timeout_ms: 400\n');
    writeFileSync(ws.path('.bulkhead/audit_policy.yaml'), 'enabled: false\n');
    server = await startStdioServer({ script: GIT_CLI, args: ['--root', ws.root] });
  }
  const call = async (name: string, args: Record<string, unknown>): Promise<Outcome> => {
    const reply = (await server!.client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
    return { isError: reply.isError === true, text: reply.content.map((c) => c.text).join('\n') };
  };
  /** A loose object replaced by a FIFO: git blocks opening it, for ever. */
  function fifoObject(oid: string): void {
    const file = join(repo, '.git/objects', oid.slice(0, 2), oid.slice(2));
    rmSync(file);
    execFileSync('mkfifo', [file]);
  }
  async function expectKilled(name: string, args: Record<string, unknown>, command: string): Promise<void> {
    const started = Date.now();
    expect(await call(name, args)).toEqual(refused(`git ${command} did not finish within 400 ms and was stopped (limits.timeout_ms)`));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(processesMentioning(`--git-dir=${join(repo, '.git')}`)).toEqual([]);
  }

  it('git_blame walking into an old version that never arrives', async () => {
    ws = tempWorkspace({}, 'bulkhead-git-hang-');
    repo = initRepo(ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'one\n' });
    const oldBlob = git(repo, ['rev-parse', 'HEAD:a.txt']).trim();
    commit(repo, 'two', { 'a.txt': 'one\ntwo\n' });
    fifoObject(oldBlob);
    await serve();
    await expectKilled('git_blame', { repo: 'repo', path: 'a.txt' }, 'blame');
    // The server goes on serving.
    expect((await call('git_log', { repo: 'repo', max_count: 1 })).isError).toBe(false);
  });

  it('git_show_file, git_show and git_diff reading a file that never arrives', async () => {
    ws = tempWorkspace({}, 'bulkhead-git-hang-');
    repo = initRepo(ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'one\n' });
    commit(repo, 'two', { 'a.txt': 'two\n' });
    fifoObject(git(repo, ['rev-parse', 'HEAD:a.txt']).trim());
    // The checked-out copy matches no blob, so git cannot read it instead.
    writeFileSync(join(repo, 'a.txt'), 'three\n');
    await serve();
    await expectKilled('git_show_file', { repo: 'repo', rev: 'HEAD', path: 'a.txt' }, 'cat-file');
    await expectKilled('git_show', { repo: 'repo', rev: 'HEAD' }, 'diff-tree');
    await expectKilled('git_diff', { repo: 'repo', from: 'HEAD~1', to: 'HEAD' }, 'diff');
    expect((await call('git_refs', { repo: 'repo' })).isError).toBe(false);
  });
});

describe('FIFOs where git reads its own files never hang a call', () => {
  let h: AttackServer;
  beforeAll(async () => {
    h = await startAttackServer({ policy: { limits: { timeout_ms: 400 } } });
  });
  afterAll(async () => {
    await h.close();
  });

  it.each([['commondir'], ['objects/info/alternates'], ['HEAD'], ['config'], ['packed-refs']])('.git/%s is a FIFO: the repository is refused at once and no git is started', async (part) => {
    const name = part.replaceAll('/', '-');
    const repo = initRepo(h.ws.path(name));
    commit(repo, 'one', { 'a.txt': 'a\n' });
    rmSync(join(repo, '.git', part), { force: true });
    execFileSync('mkfifo', [join(repo, '.git', part)]);
    expect(await h.outcome('git_log', { repo: name })).toEqual(refused(`${name}: its git directory's ${part} is a named pipe, not a regular file; the repository is refused`));
    expect(processesMentioning(`--git-dir=${join(repo, '.git')}`)).toEqual([]);
  });

  it('.git itself is a FIFO: refused at once, nothing opened', async () => {
    mkdirSync(h.ws.path('fifo'));
    execFileSync('mkfifo', [h.ws.path('fifo/.git')]);
    expect(await h.outcome('git_log', { repo: 'fifo' })).toEqual(refused(`fifo: its git directory ${h.ws.path('fifo/.git')} (.git) is not a folder; the repository is broken`));
  });
});
