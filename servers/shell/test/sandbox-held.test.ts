import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_HELD_ENTRIES } from '@bulkhead/core';
import { heldPaths, sweepPlaceholders } from '../src/run/held.js';
import { bashPath as bashPathForTest } from '../src/run/executables.js';
import { probeSandbox } from '../src/run/sandbox.js';
import type { SandboxSpec } from '../src/run/types.js';
import { startShell } from './helpers.js';
import { runContained, startContained } from './sandbox-helpers.js';

// Leases of this test's own (other servers of the user, running tests too, would hold its placeholders back).
process.env['BULKHEAD_HELD_DIR'] = mkdtempSync(join(tmpdir(), 'bulkhead-leases-'));
const mustRun = process.env['CI'] === 'true';
const runs = probeSandbox('bubblewrap').available || mustRun;

let outer: string;
let root: string;
beforeEach(() => {
  outer = mkdtempSync(join(tmpdir(), 'bulkhead-held-'));
  root = join(outer, 'root');
  mkdirSync(root);
});
afterEach(() => rmSync(outer, { recursive: true, force: true }));

/** Runs fn with the root as the server user's home folder. */
function asHome<T>(fn: () => T): T {
  const home = process.env['HOME'];
  process.env['HOME'] = root;
  const restore = () => (home === undefined ? delete process.env['HOME'] : (process.env['HOME'] = home));
  try {
    const result = fn();
    if (result instanceof Promise) return result.finally(restore) as T;
    restore();
    return result;
  } catch (error) {
    restore();
    throw error;
  }
}

const specFor = (writable: string): SandboxSpec => ({ kind: 'bubblewrap', network: false, writable: [writable], readOnly: [] });

const start = (command: string) => startContained(command, specFor(root), root, { GIT_CONFIG_NOSYSTEM: '1' });

async function sandboxed(command: string): Promise<string> {
  return (await runContained(command, specFor(root), root, { GIT_CONFIG_NOSYSTEM: '1' })).output;
}

/** Each attempt in one sandbox; prints `name: refused` or `name: WRITTEN`. */
const attempt = (name: string, command: string) => `if { ${command} ; } >/dev/null 2>&1; then echo "${name}: WRITTEN"; else echo "${name}: refused"; fi`;

function write(path: string, content: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

function tree(folder: string, prefix = ''): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = `${prefix}${entry.name}`;
    return entry.isDirectory() ? [`${path}/`, ...tree(join(folder, entry.name), `${path}/`)] : [path];
  });
}

describe('heldPaths', () => {
  it('in a home folder: every entry of the core\'s list, the first missing component of a path, .git when there is none; a file stands in for a file', () => {
    const { existing, missing } = asHome(() => heldPaths(specFor(root)));
    expect(existing).toEqual([]);
    const expected = new Set(SANDBOX_HELD_ENTRIES.map((entry) => join(root, entry.path.split('/')[0]!)));
    expected.delete(join(root, '.gradle'));
    expect(new Set(missing.map((placeholder) => placeholder.path))).toEqual(new Set([...expected, join(root, '.git')]));
    expect(missing).toContainEqual({ path: join(root, '.bashrc'), kind: 'file' });
    expect(missing).toContainEqual({ path: join(root, '.npmrc'), kind: 'file' });
    expect(missing).toContainEqual({ path: join(root, '.config'), kind: 'folder' });
    expect(missing).toContainEqual({ path: join(root, '.git'), kind: 'folder' });
  });

  it('in another root: what is read anywhere (agent config, a project\'s .npmrc, .envrc), held by empty folders when missing; a home\'s start-up files only if they exist', () => {
    writeFileSync(join(root, '.profile'), '# mine\n');
    const { existing, missing } = heldPaths(specFor(root));
    expect(existing).toEqual([join(root, '.profile')]);
    const anywhere = SANDBOX_HELD_ENTRIES.filter((entry) => entry.read === 'anywhere').map((entry) => join(root, entry.path.split('/')[0]!));
    expect(new Set(missing.map((placeholder) => placeholder.path))).toEqual(new Set([...anywhere, join(root, '.git')]));
    expect(missing.every((placeholder) => placeholder.kind === 'folder')).toBe(true);
  });

  it('holds nothing without bubblewrap', () => {
    expect(heldPaths({ ...specFor(root), kind: 'none' })).toEqual({ existing: [], missing: [] });
  });
});

describe.runIf(runs)('files that become code are read-only in the sandbox, existing or not', () => {
  const creations = (entries: typeof SANDBOX_HELD_ENTRIES) =>
    entries.map((entry) => attempt(entry.path, entry.kind === 'file' ? `mkdir -p "$(dirname ${entry.path})"; echo pwned > ${entry.path}` : `mkdir -p ${entry.path} && echo pwned > ${entry.path}/x`));
  const tricks = [
    attempt('.git pointer', "echo 'gitdir: /tmp/evil' > .git"),
    attempt('.git folder', 'mkdir .git/hooks'),
    attempt('git init', 'git init -q .'),
    attempt('rename into place', 'echo pwned > staged.json && mv staged.json .mcp.json'),
    attempt('link into place', 'echo pwned > staged.sh && ln staged.sh .envrc'),
    attempt('symlink into place', 'ln -s staged.sh .npmrc'),
    attempt('remove placeholder', 'rmdir .claude'),
    attempt('rename placeholder', 'mv .vscode vscode-moved'),
    attempt('ordinary file', 'echo fine > notes.txt'),
    attempt('ordinary folder', 'mkdir -p src/deep && echo fine > src/deep/a.ts'),
    attempt('ordinary dotfile', 'echo fine > .editorconfig'),
  ];
  const trickResults = [
    ...['.git pointer', '.git folder', 'git init', 'rename into place', 'link into place', 'symlink into place', 'remove placeholder', 'rename placeholder'].map((name) => `${name}: refused`),
    ...['ordinary file', 'ordinary folder', 'ordinary dotfile'].map((name) => `${name}: WRITTEN`),
  ];
  const ordinary = ['.editorconfig', 'notes.txt', 'src/', 'src/deep/', 'src/deep/a.ts', 'staged.json', 'staged.sh'];

  it('in a home folder: refuses to create each held path and a .git, keeps ordinary files writable, and leaves no placeholder behind', async () => {
    const output = await asHome(() => sandboxed([...creations(SANDBOX_HELD_ENTRIES), ...tricks].join('\n')));
    expect(output.trimEnd().split('\n')).toEqual([...SANDBOX_HELD_ENTRIES.map((entry) => `${entry.path}: ${entry.path.startsWith('.gradle/') ? 'WRITTEN' : 'refused'}`), ...trickResults]);
    // Placeholders stay a moment for the next command, then go; what the command could write is left, no pwned file.
    sweepPlaceholders();
    expect(tree(root).filter((path) => !path.startsWith('.gradle/')).sort()).toEqual(ordinary.sort());
  });

  it('in a project root: refuses to create what is read anywhere and a .git; a missing home start-up file is not held there', async () => {
    const anywhere = SANDBOX_HELD_ENTRIES.filter((entry) => entry.read === 'anywhere');
    const output = await sandboxed([...creations(anywhere), attempt('.bashrc', 'echo fine > .bashrc'), ...tricks].join('\n'));
    expect(output.trimEnd().split('\n')).toEqual([...anywhere.map((entry) => `${entry.path}: refused`), '.bashrc: WRITTEN', ...trickResults]);
    sweepPlaceholders();
    expect(tree(root).sort()).toEqual([...ordinary, '.bashrc'].sort());
  });

  it('holds what exists: agent config, every repository\'s hooks and config, submodules, worktrees and pointers, while git still commits', async () => {
    const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
    git(root, 'init', '-q');
    write('a.txt', 'a\n');
    write('.mcp.json', '{}\n');
    write('.claude/settings.json', '{}\n');
    write('.vscode/tasks.json', '{}\n');
    write('.gitmodules', '');
    write('.bashrc', '# mine\n');
    write('.config/git/config', '[user]\n');
    git(root, 'add', 'a.txt');
    git(root, 'commit', '-qm', 'first');
    // A submodule's folder in .git/modules, with the pointer file of its working tree.
    mkdirSync(join(root, '.git/modules/lib/hooks'), { recursive: true });
    write('.git/modules/lib/HEAD', 'ref: refs/heads/main\n');
    write('.git/modules/lib/config', '[core]\n');
    write('vendor/lib/.git', 'gitdir: ../../.git/modules/lib\n');
    // A linked worktree's administrative folder.
    write('.git/worktrees/w/config.worktree', '[core]\n');
    write('.git/worktrees/w/commondir', '../..\n');
    write('.git/worktrees/w/gitdir', `${root}/w/.git\n`);
    // A nested repository of its own.
    git(root, 'init', '-q', 'packages/inner');
    chmodSync(join(root, '.git/hooks'), 0o755);
    const refusals: [string, string][] = [
      ['.mcp.json', 'echo pwned > .mcp.json'],
      ['.claude/settings.json', 'echo pwned > .claude/settings.json'],
      ['.claude/new', 'echo pwned > .claude/commands.md'],
      ['.vscode/tasks.json', 'echo pwned > .vscode/tasks.json'],
      ['.gitmodules', 'echo "[submodule \\"x\\"]" >> .gitmodules'],
      ['.bashrc', 'echo pwned >> .bashrc'],
      ['.config/git/config', 'echo pwned >> .config/git/config'],
      ['.config/git/attributes', 'echo pwned > .config/git/attributes'],
      ['.git/config', 'git config core.fsmonitor "touch /tmp/pwned"'],
      ['.git/config.worktree', 'echo pwned > .git/config.worktree'],
      ['.git/hooks/pre-commit', 'echo pwned > .git/hooks/pre-commit'],
      ['.git/info/attributes', 'echo "* filter=x" > .git/info/attributes'],
      ['modules/lib/config', 'echo pwned >> .git/modules/lib/config'],
      ['modules/lib/hooks', 'echo pwned > .git/modules/lib/hooks/post-checkout'],
      ['modules/lib/info', 'mkdir .git/modules/lib/info/x'],
      ['vendor/lib/.git', 'echo "gitdir: /tmp/evil" > vendor/lib/.git'],
      ['worktrees/w/config.worktree', 'echo pwned >> .git/worktrees/w/config.worktree'],
      ['worktrees/w/commondir', 'echo /tmp/evil > .git/worktrees/w/commondir'],
      ['inner/.git/config', 'git -C packages/inner config core.fsmonitor "touch /tmp/pwned"'],
      ['inner/.git/hooks', 'echo pwned > packages/inner/.git/hooks/pre-commit'],
    ];
    const allowed: [string, string][] = [
      ['git commit', 'echo b > b.txt && git add b.txt && git -c user.name=t -c user.email=t@t commit -qm second'],
      ['git branch', 'git branch topic'],
      ['inner git commit', 'cd packages/inner && echo c > c.txt && git add c.txt && git -c user.name=t -c user.email=t@t commit -qm inner'],
    ];
    const output = await sandboxed([...refusals, ...allowed].map(([name, command]) => attempt(name, command)).join('\n'));
    expect(output.trimEnd().split('\n')).toEqual([...refusals.map(([name]) => `${name}: refused`), ...allowed.map(([name]) => `${name}: WRITTEN`)]);
    expect(readFileSync(join(root, '.mcp.json'), 'utf8')).toBe('{}\n');
    expect(readFileSync(join(root, '.git/config'), 'utf8')).not.toContain('fsmonitor');
    expect(readFileSync(join(root, 'packages/inner/.git/config'), 'utf8')).not.toContain('fsmonitor');
    expect(git(root, 'log', '--format=%s')).toBe('second\nfirst\n');
  });

  it('holds the parts of a repository whose .git is a symlink, and of one whose pointer names a folder in the root', async () => {
    execFileSync('git', ['init', '-q', join(root, 'real')]);
    mkdirSync(join(root, 'linked'));
    symlinkSync('../real/.git', join(root, 'linked/.git'));
    mkdirSync(join(root, 'store'));
    execFileSync('git', ['init', '-q', '--separate-git-dir', join(root, 'store/pointed.git'), join(root, 'pointer')]);
    const output = await sandboxed(
      [attempt('through the link', 'echo pwned > linked/.git/hooks/pre-commit'), attempt('the pointed folder', 'echo pwned > store/pointed.git/hooks/pre-commit'), attempt('the pointer', 'echo "gitdir: /tmp/x" > pointer/.git'), attempt('objects', 'touch store/pointed.git/objects/x')].join('\n'),
    );
    expect(output).toBe('through the link: refused\nthe pointed folder: refused\nthe pointer: refused\nobjects: WRITTEN\n');
  });

  it('holds the target of a symlink, and what a dangling symlink points to', async () => {
    write('dotfiles/npmrc', '# mine\n');
    symlinkSync('dotfiles/npmrc', join(root, '.npmrc'));
    mkdirSync(join(root, 'dotfiles/later'));
    symlinkSync('dotfiles/later/envrc', join(root, '.envrc'));
    const output = await sandboxed([attempt('through a link', 'echo pwned >> .npmrc'), attempt('the target', 'echo pwned >> dotfiles/npmrc'), attempt('dangling', 'echo pwned > dotfiles/later/envrc')].join('\n'));
    expect(output).toBe('through a link: refused\nthe target: refused\ndangling: refused\n');
    expect(readFileSync(join(root, 'dotfiles/npmrc'), 'utf8')).toBe('# mine\n');
    sweepPlaceholders();
    expect(existsSync(join(root, 'dotfiles/later/envrc'))).toBe(false);
  });

  it('leaves placeholders while another live server has a lease, and removes a killed server\'s', async () => {
    const leases = process.env['BULKHEAD_HELD_DIR']!;
    // A live server (this test's parent process) with a sandbox running, and one that died leaving a placeholder.
    writeFileSync(join(leases, String(process.ppid)), '');
    mkdirSync(join(root, 'left-by-the-dead'));
    const deadPid = 2 ** 22 + 1;
    writeFileSync(join(leases, `${deadPid}.made`), join(root, 'left-by-the-dead'));
    await sandboxed('true');
    sweepPlaceholders();
    expect(readdirSync(root)).toContain('.mcp.json');
    rmSync(join(leases, String(process.ppid)));
    sweepPlaceholders();
    expect(readdirSync(root)).toEqual([]);
    expect(readdirSync(leases).filter((name) => name !== 'empty')).toEqual([]);
  });

  it('keeps a placeholder while another sandbox still holds it, and removes it after the last one', async () => {
    const slow = start(`sleep 1; ${attempt('late write', 'echo pwned > .mcp.json')}`);
    await sandboxed('true');
    await sandboxed('true');
    await slow.running.done;
    expect(slow.output()).toBe('late write: refused\n');
    expect(existsSync(join(root, '.mcp.json'))).toBe(true);
    sweepPlaceholders();
    expect(readdirSync(root)).toEqual([]);
  });

  it('holds them for run_shell through the server, which says so in the output', async () => {
    const h = await startShell({ files: { 'notes.txt': 'mine\n' } });
    try {
      const result = await h.call<{ exit_code: number }>('run_shell', { command: 'echo "{}" > .mcp.json; mkdir -p .claude/commands; echo "$ ok" > .envrc; echo fine >> notes.txt; cat notes.txt' });
      expect(result.text.replace(/[‘’]/g, "'").split('\n').slice(0, 5)).toEqual([
        `${bashPathForTest()}: line 1: .mcp.json: Is a directory`,
        "mkdir: cannot create directory '.claude/commands': Read-only file system",
        `${bashPathForTest()}: line 1: .envrc: Is a directory`,
        'mine',
        'fine',
      ]);
      // On the host: the empty placeholders (until 5 s after the last command), nothing the command wrote.
      expect(readdirSync(h.ws.path('.mcp.json'))).toEqual([]);
      expect(readdirSync(h.ws.path('.claude'))).toEqual([]);
      expect(readFileSync(h.ws.path('notes.txt'), 'utf8')).toBe('mine\nfine\n');
    } finally {
      await h.close();
    }
  });
});
