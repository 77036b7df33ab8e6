import { chmodSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commit, git, initRepo, ODD_NAME, ODD_NAME_SHOWN, startGit, writeFiles, writeRawName, type GitHarness } from './helpers.js';

type DiffFile = { path: string; old_path?: string; status: string; similarity?: number; added: number | null; deleted: number | null; binary: boolean; omitted?: string };
type Diff = { files: DiffFile[]; total_files: number; truncated: boolean };

const lines = (count: number, prefix = 'line') => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}\n`).join('');

/** One file's patch as the text shows it: from its `diff --git` line to the next blank line. */
function patchOf(text: string, header: string): string {
  const start = text.indexOf(`${header}\n`);
  if (start === -1) throw new Error(`no patch starting with ${header}`);
  const end = text.indexOf('\n\n', start);
  return text.slice(start, end === -1 ? undefined : end);
}

describe('git_diff', () => {
  let h: GitHarness;
  let repo: string;
  const diff = async (args: Record<string, unknown> = {}) => (await h.call<Diff>('git_diff', { repo: 'repo', ...args }));
  beforeEach(async () => {
    h = await startGit();
    repo = initRepo(h.ws.path('repo'));
  });
  afterEach(async () => {
    await h.close();
  });

  it('shows the working tree against the index, the staged changes, and a commit against the working tree', async () => {
    const base = commit(repo, 'base', { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    writeFiles(repo, { 'a.txt': 'one\nTWO\n', 'b.txt': 'b\nstaged\n' });
    git(repo, ['add', 'b.txt']);
    const unstaged = await diff();
    expect(unstaged.structured).toEqual({ files: [{ path: 'a.txt', status: 'modified', added: 1, deleted: 1, binary: false }], total_files: 1, truncated: false });
    expect(unstaged.text).toMatch(/^1 file changed:\n  modified a.txt \+1 −1\n\ndiff --git a\/a.txt b\/a.txt\nindex [0-9a-f]+\.\.[0-9a-f]+ 100644\n--- a\/a.txt\n\+\+\+ b\/a.txt\n@@ -1,2 \+1,2 @@\n one\n-two\n\+TWO$/);
    expect((await diff({ staged: true })).structured.files.map((f) => [f.path, f.added, f.deleted])).toEqual([['b.txt', 1, 0]]);
    expect((await diff({ from: base })).structured.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    expect((await diff({ from: 'HEAD', staged: true })).structured.files.map((f) => f.path)).toEqual(['b.txt']);
    expect((await diff()).structured.files).toHaveLength(1);
    git(repo, ['checkout', '-q', '--', '.']);
    git(repo, ['reset', '-q', '--hard']);
    expect((await diff()).text).toBe('No differences.');
  });

  it('compares two commits, with renames, deletions, modes, type changes and context lines', async () => {
    const from = commit(repo, 'from', { 'old.txt': lines(20), 'gone.txt': 'x\n', 'run.sh': 'echo\n', 'link': 'target\n', 'ctx.txt': lines(30) });
    git(repo, ['mv', 'old.txt', 'new.txt']);
    rmSync(join(repo, 'gone.txt'));
    chmodSync(join(repo, 'run.sh'), 0o755);
    rmSync(join(repo, 'link'));
    symlinkSync('new.txt', join(repo, 'link'));
    writeFiles(repo, { 'ctx.txt': lines(30).replace('line 15\n', 'LINE 15\n') });
    const to = commit(repo, 'to');
    const result = await diff({ from, to, context_lines: 1 });
    const byPath = Object.fromEntries(result.structured.files.map((f) => [f.path, f]));
    expect(result.structured.total_files).toBe(5);
    expect(byPath['new.txt']).toMatchObject({ old_path: 'old.txt', status: 'renamed', similarity: 100, added: 0, deleted: 0 });
    expect(byPath['gone.txt']).toMatchObject({ status: 'deleted', added: 0, deleted: 1 });
    expect(byPath['run.sh']).toMatchObject({ status: 'modified', added: 0, deleted: 0 });
    expect(patchOf(result.text, 'diff --git a/run.sh b/run.sh')).toContain('old mode 100644\nnew mode 100755');
    expect(byPath['link']).toMatchObject({ status: 'type changed', added: 1, deleted: 1 });
    expect(patchOf(result.text, 'diff --git a/link b/link')).toMatch(/deleted file mode 100644[^]*new file mode 120000/);
    expect(patchOf(result.text, 'diff --git a/ctx.txt b/ctx.txt')).toMatch(/\n@@ -14,3 \+14,3 @@.*\n line 14\n-line 15\n\+LINE 15\n line 16$/);
    expect(result.text).toContain('  renamed old.txt -> new.txt (100%) +0 −0');
  });

  it('summarises binary files, lockfiles and secrets instead of showing their lines', async () => {
    const from = commit(repo, 'from', { 'img.bin': Buffer.from([0, 1, 2, 3]), 'pnpm-lock.yaml': lines(50, 'dep'), '.env': 'KEY=old\n', 'sub/package-lock.json': '{}\n' });
    writeFiles(repo, { 'img.bin': Buffer.from([0, 9, 9]), 'pnpm-lock.yaml': lines(60, 'dep'), '.env': 'KEY=new-secret\n', 'sub/package-lock.json': '{"a":1}\n' });
    const to = commit(repo, 'to');
    const result = await diff({ from, to });
    expect(result.structured.files).toEqual([
      { path: '.env', status: 'modified', added: 1, deleted: 1, binary: false, omitted: 'content not shown: the path matches `.env*` in deny_read' },
      { path: 'img.bin', status: 'modified', added: null, deleted: null, binary: true, omitted: 'binary: its content is not shown' },
      { path: 'pnpm-lock.yaml', status: 'modified', added: 10, deleted: 0, binary: false, omitted: 'lockfile: its patch is summarised, not shown' },
      { path: 'sub/package-lock.json', status: 'modified', added: 1, deleted: 1, binary: false, omitted: 'lockfile: its patch is summarised, not shown' },
    ]);
    expect(result.text).not.toContain('new-secret');
    expect(result.text).not.toContain('dep 55');
    expect(result.text).toContain('  modified pnpm-lock.yaml +10 −0 — lockfile: its patch is summarised, not shown');
    const stat = await diff({ from, to, stat_only: true });
    expect(stat.structured.files.map((f) => [f.path, f.added, f.deleted, f.binary])).toEqual([
      ['.env', 1, 1, false],
      ['img.bin', null, null, true],
      ['pnpm-lock.yaml', 10, 0, false],
      ['sub/package-lock.json', 1, 1, false],
    ]);
    expect(stat.text).not.toContain('diff --git');
  });

  it('cuts one long patch per file and counts the rest', async () => {
    const from = commit(repo, 'from', { 'big.txt': lines(1000), 'small.txt': 'a\n' });
    writeFiles(repo, { 'big.txt': lines(1000, 'changed'), 'small.txt': 'b\n' });
    const to = commit(repo, 'to');
    const small = await startGit({ ws: h.ws, policy: { limits: { diff_file_max_lines: 20 } } });
    const result = (await small.call<Diff>('git_diff', { repo: 'repo', from, to }));
    await small.close();
    const big = result.structured.files[0]!;
    expect(big).toMatchObject({ path: 'big.txt', added: 1000, deleted: 1000, omitted: 'patch cut at 20 lines (limits.diff_file_max_lines); ask for this file alone with path' });
    expect(patchOf(result.text, 'diff --git a/big.txt b/big.txt').split('\n')).toHaveLength(21);
    expect(result.structured.files[1]).toEqual({ path: 'small.txt', status: 'modified', added: 1, deleted: 1, binary: false });
    expect(patchOf(result.text, 'diff --git a/small.txt b/small.txt')).toContain('-a\n+b');
    expect(result.structured.truncated).toBe(true);
    expect(result.text).toContain('[patch cut at 20 lines (limits.diff_file_max_lines); ask for this file alone with path]');
  });

  it('stops a huge diff at the total cap and lists the files it did not show', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`f${String(i).padStart(3, '0')}.txt`] = lines(100);
    const from = commit(repo, 'from', files);
    for (const name of Object.keys(files)) files[name] = lines(100, 'new');
    const to = commit(repo, 'to', files);
    const started = Date.now();
    const result = await diff({ from, to });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.structured.total_files).toBe(300);
    expect(result.structured.files).toHaveLength(300);
    expect(result.structured.truncated).toBe(true);
    const shown = result.structured.files.filter((f) => f.omitted === undefined);
    expect(shown.length).toBeGreaterThan(20);
    expect(shown.length).toBeLessThan(200);
    expect(shown[0]).toMatchObject({ added: 100, deleted: 100 });
    const cut = result.structured.files[shown.length]!;
    expect(cut.omitted).toBe('patch cut at the total cap of 200.0 KiB (limits.diff_total_max_bytes); ask for this file alone with path');
    expect(result.structured.files.at(-1)).toMatchObject({ added: null, deleted: null, omitted: 'not shown: the patch output stopped at a cap before this file' });
    expect(Buffer.byteLength(result.text)).toBeLessThan(260 * 1024);
    expect(result.text).toContain('[some files have no patch above (see the list); ask for one file with path, or narrow the range]');
  });

  it('lists at most diff_max_files files', async () => {
    const from = commit(repo, 'from', { 'a.txt': '1\n', 'b.txt': '1\n', 'c.txt': '1\n' });
    const to = commit(repo, 'to', { 'a.txt': '2\n', 'b.txt': '2\n', 'c.txt': '2\n' });
    const small = await startGit({ ws: h.ws, policy: { limits: { diff_max_files: 2 } } });
    const result = (await small.call<Diff>('git_diff', { repo: 'repo', from, to }));
    await small.close();
    expect(result.structured).toMatchObject({ total_files: 3, truncated: true });
    expect(result.structured.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    expect(result.text).toContain('3 files changed; the first 2 are listed (limits.diff_max_files):');
  });

  it('handles names that are not UTF-8, with spaces, quotes and tabs', async () => {
    const from = commit(repo, 'from', { 'a.txt': 'a\n' });
    writeRawName(repo, ODD_NAME, 'odd\n');
    writeFiles(repo, { 'with space.txt': 's\n', 'quo"te.txt': 'q\n', 'tab\there.txt': 't\n' });
    const to = commit(repo, 'to');
    const result = await diff({ from, to });
    expect(result.structured.files.map((f) => [f.path, f.status, f.added])).toEqual([
      [ODD_NAME_SHOWN, 'added', 1],
      ['quo"te.txt', 'added', 1],
      ['tab\there.txt', 'added', 1],
      ['with space.txt', 'added', 1],
    ]);
    expect(result.text).toContain('diff --git "a/bad\\377.txt" "b/bad\\377.txt"');
    const one = await diff({ from, to, path: ODD_NAME_SHOWN });
    expect(one.structured.files.map((f) => f.path)).toEqual([ODD_NAME_SHOWN]);
  });

  it('works in an empty repository and refuses bad combinations', async () => {
    writeFiles(repo, { 'a.txt': 'a\n' });
    expect((await diff()).text).toBe('No differences.');
    git(repo, ['add', 'a.txt']);
    expect((await diff({ staged: true })).structured.files.map((f) => [f.path, f.status])).toEqual([['a.txt', 'added']]);
    expect((await diff({ from: 'HEAD' })).text).toBe('from "HEAD": repo has no commits yet');
    expect((await diff({ to: 'HEAD' })).text).toBe('to needs from: give the commit to compare from as well');
    expect((await diff({ from: 'a', to: 'b', staged: true })).text).toBe('staged compares the index, so it takes from but not to; leave out staged to compare two commits');
  });

  it('compares commits in a bare repository, and refuses a working-tree diff there', async () => {
    const from = commit(repo, 'from', { 'a.txt': 'a\n' });
    const to = commit(repo, 'to', { 'a.txt': 'b\n' });
    git(h.ws.root, ['clone', '-q', '--bare', 'repo', 'bare.git']);
    expect((await h.call('git_diff', { repo: 'bare.git', from, to })).structured).toMatchObject({ files: [{ path: 'a.txt', added: 1, deleted: 1 }] });
    expect((await h.call('git_diff', { repo: 'bare.git' })).text).toBe('bare.git is a bare repository: it has no working tree, so a diff against the working tree does not apply');
    writeFileSync(join(repo, 'a.txt'), 'c\n');
  });
});
