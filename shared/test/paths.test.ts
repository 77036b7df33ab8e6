import { chmodSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync, existsSync, lstatSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConfinedFile, PathGlobSet, Roots, SECRET_GLOBS, writeFileSafely, type ConfinedPath } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let outer: TempWorkspace;
let root: string;
let roots: Roots;

beforeEach(() => {
  outer = tempWorkspace({ 'root/src/a.ts': 'a\n', 'root/.env': 'SECRET=1\n', 'outside/secret.txt': 'outside\n', 'root_evil/x.txt': 'evil\n' });
  root = outer.path('root');
  roots = new Roots([root], { controlDir: join(root, '.bulkhead'), denyRead: SECRET_GLOBS, denyReadSource: 'fs_policy.yaml' });
});
afterEach(() => outer.cleanup());

async function refusal(input: string, purpose: 'read' | 'write' = 'read'): Promise<string> {
  try {
    await roots.confine(input, purpose);
  } catch (error) {
    return (error as Error).message.replaceAll(outer.root, '<tmp>');
  }
  throw new Error(`confine(${input}) was expected to refuse`);
}

describe('Roots.confine', () => {
  it('resolves relative and absolute paths inside the root', async () => {
    expect(await roots.confine('src/a.ts', 'read')).toBe(join(root, 'src/a.ts'));
    expect(await roots.confine(join(root, 'src/../src/a.ts'), 'read')).toBe(join(root, 'src/a.ts'));
    expect(await roots.confine('.', 'read')).toBe(root);
  });

  it('refuses .., absolute paths outside, and ~', async () => {
    expect(await refusal('../outside/secret.txt')).toBe('../outside/secret.txt is outside the allowed roots (<tmp>/root); give a path inside them');
    expect(await refusal('/etc/passwd')).toBe('/etc/passwd is outside the allowed roots (<tmp>/root); give a path inside them');
    expect(await refusal('~/.ssh/id_rsa')).toBe('"~" is not expanded: give a path relative to the root (<tmp>/root) or an absolute path inside it');
  });

  it('refuses a sibling folder whose name starts with the root name', async () => {
    expect(await refusal(join(outer.root, 'root_evil/x.txt'))).toBe('<tmp>/root_evil/x.txt is outside the allowed roots (<tmp>/root); give a path inside them');
    expect(await refusal('../root_evil/x.txt')).toBe('../root_evil/x.txt is outside the allowed roots (<tmp>/root); give a path inside them');
  });

  it('refuses symlinks to files and folders outside', async () => {
    symlinkSync(outer.path('outside/secret.txt'), join(root, 'link.txt'));
    symlinkSync(outer.path('outside'), join(root, 'linkdir'));
    expect(await refusal('link.txt')).toBe('link.txt resolves through a symlink to <tmp>/outside/secret.txt, which is outside the allowed roots (<tmp>/root)');
    expect(await refusal('linkdir/secret.txt')).toBe('linkdir/secret.txt resolves through a symlink to <tmp>/outside/secret.txt, which is outside the allowed roots (<tmp>/root)');
    expect(await refusal('linkdir/new.txt', 'write')).toBe('linkdir/new.txt resolves through a symlink to <tmp>/outside/new.txt, which is outside the allowed roots (<tmp>/root)');
  });

  it('refuses a dangling symlink for reads and writes', async () => {
    symlinkSync(outer.path('outside/not-yet.txt'), join(root, 'dangling'));
    expect(await refusal('dangling', 'write')).toBe('<tmp>/root/dangling is a dangling symlink (-> <tmp>/outside/not-yet.txt); it is refused rather than followed');
    expect(await refusal('dangling')).toBe('<tmp>/root/dangling is a dangling symlink (-> <tmp>/outside/not-yet.txt); it is refused rather than followed');
  });

  it('refuses NUL bytes, very long paths and over-long names', async () => {
    expect(await refusal('src/a.ts\0.png')).toBe('path contains a NUL byte; remove it');
    expect(await refusal('a/'.repeat(5000))).toBe('path is 10000 characters long; the limit is 4096');
    expect(await refusal('x'.repeat(300))).toBe('a path component is 300 bytes long; the limit is 255');
    expect(await refusal('')).toBe('path is empty: give a path relative to the root, or "." for the root itself');
  });

  it('treats Unicode look-alikes of dots and slashes as ordinary names', async () => {
    expect(await refusal('\uFF0E\uFF0E/outside/secret.txt')).toBe(`<tmp>/root/\uFF0E\uFF0E/outside/secret.txt does not exist`);
    expect(await refusal('..\uFF0Foutside')).toBe(`<tmp>/root/..\uFF0Foutside does not exist`);
    expect(await roots.confine('\u2024\u2024/new.txt', 'write')).toBe(join(root, '\u2024\u2024/new.txt'));
  });

  it('refuses secrets for reads', async () => {
    expect(await refusal('.env')).toBe('.env is a protected secret (matches `.env*` in deny_read of fs_policy.yaml); it cannot be read');
  });

  it('refuses the protected set and the control plane for writes', async () => {
    expect(await refusal('.git/hooks/pre-commit', 'write')).toBe('.git/hooks/pre-commit is in the protected set (`.git/`); tools never write there');
    expect(await refusal('.mcp.json', 'write')).toBe('.mcp.json is in the protected set (`.mcp.json`); tools never write there');
    expect(await refusal('.vscode/tasks.json', 'write')).toBe('.vscode/tasks.json is in the protected set (`.vscode/`); tools never write there');
    expect(await refusal('deploy/server.pem', 'write')).toBe('deploy/server.pem is in the protected set (`*.pem`); tools never write there');
    expect(await refusal('.bulkhead/permissions.yaml', 'write')).toBe('.bulkhead/permissions.yaml is inside the control-plane folder <tmp>/root/.bulkhead; tools never write there');
  });

  it('allows the control plane and code folders to be read', async () => {
    writeFileSync(outer.write('root/.vscode/settings.json', '{}'), '{}');
    expect(await roots.confine('.vscode/settings.json', 'read')).toBe(join(root, '.vscode/settings.json'));
  });
});

describe('openConfinedFile', () => {
  it('catches a symlink swapped to outside between confine and open', async () => {
    writeFileSync(join(root, 'inner.txt'), 'inside\n');
    symlinkSync(join(root, 'inner.txt'), join(root, 'swap'));
    const confined = await roots.confine('swap', 'read');
    expect(confined).toBe(join(root, 'inner.txt'));
    rmSync(join(root, 'src'), { recursive: true });
    symlinkSync(outer.path('outside'), join(root, 'src'));
    const through = join(root, 'src', 'secret.txt') as ConfinedPath;
    await expect(openConfinedFile(roots, through, 'src/secret.txt')).rejects.toThrow('src/secret.txt changed while it was being opened and now points outside the allowed roots; nothing was read');
  });

  it('refuses to follow a final symlink at open time', async () => {
    symlinkSync(outer.path('outside/secret.txt'), join(root, 'late'));
    await expect(openConfinedFile(roots, join(root, 'late') as ConfinedPath, 'late')).rejects.toThrow('late changed into a symlink while it was being opened; nothing was read');
  });
});

describe('writeFileSafely', () => {
  it('creates a new file exclusively', async () => {
    const target = await roots.confine('src/new.ts', 'write');
    expect(await writeFileSafely(target, 'new\n', 'src/new.ts')).toEqual({ created: true, mode: 0o644 });
    expect(readFileSync(target, 'utf8')).toBe('new\n');
  });

  it('replaces through a temp file and keeps the mode', async () => {
    const file = join(root, 'src/run.sh');
    writeFileSync(file, 'old\n');
    chmodSync(file, 0o750);
    const inodeBefore = statSync(file).ino;
    const result = await writeFileSafely(await roots.confine('src/run.sh', 'write'), 'new\n', 'src/run.sh');
    expect(result).toEqual({ created: false, mode: 0o750 });
    expect(statSync(file).mode & 0o7777).toBe(0o750);
    expect(statSync(file).ino).not.toBe(inodeBefore);
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    expect(readFileSync(outer.path('outside/secret.txt'), 'utf8')).toBe('outside\n');
  });

  it('never follows a symlink that appears at the target', async () => {
    const target = await roots.confine('src/victim.txt', 'write');
    symlinkSync(outer.path('outside/secret.txt'), target);
    await expect(writeFileSafely(target, 'pwned', 'src/victim.txt')).rejects.toThrow('src/victim.txt is a symlink; it is not followed and not replaced');
    expect(readFileSync(outer.path('outside/secret.txt'), 'utf8')).toBe('outside\n');
    expect(readlinkSync(target)).toBe(outer.path('outside/secret.txt'));
  });

  it('does not create a file outside through a dangling symlink', async () => {
    const target = await roots.confine('src/ghost.txt', 'write');
    symlinkSync(outer.path('outside/created-by-attack.txt'), target);
    await expect(writeFileSafely(target, 'pwned', 'src/ghost.txt')).rejects.toThrow('src/ghost.txt is a symlink; it is not followed and not replaced');
    expect(existsSync(outer.path('outside/created-by-attack.txt'))).toBe(false);
  });

  it('writes into the folder it checked even if the folder is swapped later', async () => {
    mkdirSync(join(root, 'out'));
    const target = await roots.confine('out/file.txt', 'write');
    rmSync(join(root, 'out'), { recursive: true });
    symlinkSync(outer.path('outside'), join(root, 'out'));
    await expect(writeFileSafely(target, 'x', 'out/file.txt')).rejects.toThrow('the folder of out/file.txt changed while it was being written (it is now a symlink or a file); nothing was written');
    expect(existsSync(outer.path('outside/file.txt'))).toBe(false);
    expect(lstatSync(join(root, 'out')).isSymbolicLink()).toBe(true);
    expect(dirname(target)).toBe(join(root, 'out'));
  });
});

describe('PathGlobSet', () => {
  it('matches names at any depth, folders, and anchored paths', () => {
    const set = new PathGlobSet(['.env*', '.ssh/', 'config/prod.yaml', '*.pem']);
    expect(set.match('.env')).toBe('.env*');
    expect(set.match('app/.env.local')).toBe('.env*');
    expect(set.match('home/.ssh/config')).toBe('.ssh/');
    expect(set.match('.ssh')).toBe('.ssh/');
    expect(set.match('config/prod.yaml')).toBe('config/prod.yaml');
    expect(set.match('x/config/prod.yaml')).toBeUndefined();
    expect(set.match('src/environment.ts')).toBeUndefined();
    expect(set.match('certs/a.pem')).toBe('*.pem');
  });
});
