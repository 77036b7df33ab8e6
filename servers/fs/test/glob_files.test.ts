import { utimesSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_GLOBS } from '@bulkhead/core';
import { gitInit, startFs, type FsHarness } from './helpers.js';

/** Files and their modification times (seconds): the newest comes first in results. */
const FILES: Record<string, [content: string, mtime: number]> = {
  '.gitignore': ['ignored.ts\nbuild/\n', 500],
  'a.ts': ['a', 1000],
  'src/c.ts': ['c', 2000],
  'b.ts': ['b', 3000],
  'src/e.js': ['e', 4000],
  'src/deep/d.ts': ['d', 5000],
  'ignored.ts': ['i', 6000],
  'build/out.ts': ['o', 7000],
  '.hidden.ts': ['h', 8000],
  '.github/workflows/ci.yml': ['ci', 9000],
  '.env': ['SECRET', 9500],
  'key.pem': ['SECRET', 9600],
  'src/id_rsa.ts': ['SECRET', 9700],
  'secrets/prod.yaml': ['SECRET', 9800],
  'secrets/dev.yaml': ['dev', 9900],
};

async function startGlobWorkspace(engine: 'ripgrep' | 'builtin', limits: Record<string, number> = {}): Promise<FsHarness> {
  const fs = await startFs(Object.fromEntries(Object.entries(FILES).map(([path, [content]]) => [path, content])), {
    policy: { search_engine: engine, deny_read: [...SECRET_GLOBS, 'secrets/prod.yaml'], limits },
  });
  gitInit(fs.ws.root); // ripgrep honours .gitignore inside a git repository
  for (const [path, [, mtime]] of Object.entries(FILES)) utimesSync(fs.ws.path(path), mtime, mtime);
  return fs;
}

describe.each(['ripgrep', 'builtin'] as const)('glob_files with the %s engine', (engine) => {
  let fs: FsHarness;
  const glob = (args: Record<string, unknown>) => fs.call('glob_files', args);
  beforeAll(async () => {
    fs = await startGlobWorkspace(engine);
  });
  afterAll(async () => {
    await fs.close();
  });

  it('returns paths relative to the root, newest first', async () => {
    expect(await glob({ pattern: '**/*.ts' })).toMatchObject({ isError: false, text: 'src/deep/d.ts\nb.ts\nsrc/c.ts\na.ts' });
  });

  it('matches only the top level with * and every level with **', async () => {
    expect((await glob({ pattern: '*.ts' })).text).toBe('b.ts\na.ts');
    expect((await glob({ pattern: 'src/*' })).text).toBe('src/e.js\nsrc/c.ts');
    expect((await glob({ pattern: 'src/**' })).text).toBe('src/deep/d.ts\nsrc/e.js\nsrc/c.ts');
  });

  it('searches in path and still shows paths relative to the root', async () => {
    expect((await glob({ pattern: '*.ts', path: 'src' })).text).toBe('src/c.ts');
    expect((await glob({ pattern: '**/*', path: 'src' })).text).toBe('src/deep/d.ts\nsrc/e.js\nsrc/c.ts');
    expect((await glob({ pattern: '*.{ts,js}', path: 'src' })).text).toBe('src/e.js\nsrc/c.ts');
  });

  it('skips git-ignored files unless include_ignored is true', async () => {
    expect((await glob({ pattern: 'ignored.ts' })).text).toBe('No files match "ignored.ts". (git-ignored files were skipped; include_ignored: true includes them)');
    expect((await glob({ pattern: 'build/**' })).text).toBe('No files match "build/**". (git-ignored files were skipped; include_ignored: true includes them)');
    expect((await glob({ pattern: '**/*.ts', include_ignored: true })).text).toBe('build/out.ts\nignored.ts\nsrc/deep/d.ts\nb.ts\nsrc/c.ts\na.ts');
  });

  it('skips hidden files unless hidden is true or the pattern names a dot folder', async () => {
    expect((await glob({ pattern: '**/*.yml' })).text).toBe('No files match "**/*.yml". (git-ignored files were skipped; include_ignored: true includes them)');
    expect((await glob({ pattern: '**/*.yml', hidden: true })).text).toBe('.github/workflows/ci.yml');
    expect((await glob({ pattern: '.github/**' })).text).toBe('.github/workflows/ci.yml');
    expect((await glob({ pattern: '*.ts', hidden: true })).text).toBe('.hidden.ts\nb.ts\na.ts');
    expect((await glob({ pattern: '**/*', hidden: true })).text).toBe(
      '.github/workflows/ci.yml\n.hidden.ts\nsrc/deep/d.ts\nsrc/e.js\nb.ts\nsrc/c.ts\na.ts\n.gitignore\nsecrets/dev.yaml'.split('\n').sort(byMtime).join('\n'),
    );
  });

  it('never returns deny_read secrets, whatever the pattern, path or flags', async () => {
    const skipped = ' (git-ignored files were skipped; include_ignored: true includes them)';
    const everything = ['secrets/dev.yaml', '.github/workflows/ci.yml', '.hidden.ts', 'build/out.ts', 'ignored.ts', 'src/deep/d.ts', 'src/e.js', 'b.ts', 'src/c.ts', 'a.ts', '.gitignore'];
    expect((await glob({ pattern: '**/*', hidden: true, include_ignored: true })).text).toBe(everything.join('\n'));
    expect((await glob({ pattern: '.env' })).text).toBe(`No files match ".env".${skipped}`);
    expect((await glob({ pattern: '.env*', hidden: true, include_ignored: true })).text).toBe('No files match ".env*".');
    expect((await glob({ pattern: '*.pem' })).text).toBe(`No files match "*.pem".${skipped}`);
    expect((await glob({ pattern: '**/id_rsa*' })).text).toBe(`No files match "**/id_rsa*".${skipped}`);
    expect((await glob({ pattern: '**/*', path: 'secrets' })).text).toBe('secrets/dev.yaml');
    expect((await glob({ pattern: 'prod.yaml', path: 'secrets', include_ignored: true })).text).toBe('No files match "prod.yaml" in secrets.');
  });

  it('refuses ".." in the pattern', async () => {
    expect(await glob({ pattern: '../*.ts' })).toMatchObject({ isError: true, text: 'pattern may not contain ".."; use path to choose the folder to search in' });
    expect(await glob({ pattern: 'src/../../x' })).toMatchObject({ isError: true, text: 'pattern may not contain ".."; use path to choose the folder to search in' });
  });

  it('says so when nothing matches', async () => {
    expect(await glob({ pattern: '*.zzz' })).toMatchObject({ isError: false, text: 'No files match "*.zzz". (git-ignored files were skipped; include_ignored: true includes them)' });
    expect((await glob({ pattern: '*.zzz', include_ignored: true })).text).toBe('No files match "*.zzz".');
    expect((await glob({ pattern: '*.zzz', path: 'src' })).text).toBe('No files match "*.zzz" in src. (git-ignored files were skipped; include_ignored: true includes them)');
  });

  it('refuses a path that is a file or lies outside the roots', async () => {
    expect(await glob({ pattern: '*.ts', path: 'a.ts' })).toMatchObject({ isError: true, text: 'a.ts is not a folder; give the folder to search in as path' });
    expect(await glob({ pattern: '*', path: '..' })).toMatchObject({ isError: true, text: `.. is outside the allowed roots (${fs.ws.root}); give a path inside them` });
  });
});

function byMtime(a: string, b: string): number {
  return FILES[b]![1] - FILES[a]![1];
}

describe.each(['ripgrep', 'builtin'] as const)('glob_files result cap (%s)', (engine) => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startGlobWorkspace(engine, { glob_max_results: 2 });
  });
  afterAll(async () => {
    await fs.close();
  });

  it('returns the newest glob_max_results paths and says how many more matched', async () => {
    expect((await fs.call('glob_files', { pattern: '**/*.ts' })).text).toBe('src/deep/d.ts\nb.ts\n[2 more files matched; narrow the pattern or path]');
    expect((await fs.call('glob_files', { pattern: '**/*.ts', include_ignored: true })).text).toBe('build/out.ts\nignored.ts\n[4 more files matched; narrow the pattern or path]');
    expect((await fs.call('glob_files', { pattern: '*.ts' })).text).toBe('b.ts\na.ts');
  });
});

describe('glob_files: equal modification times', () => {
  it('orders files with the same mtime by path', async () => {
    const fs = await startFs({ 'c.txt': '', 'a.txt': '', 'b.txt': '' });
    try {
      for (const name of ['a.txt', 'b.txt', 'c.txt']) utimesSync(fs.ws.path(name), 1000, 1000);
      expect((await fs.call('glob_files', { pattern: '*.txt' })).text).toBe('a.txt\nb.txt\nc.txt');
    } finally {
      await fs.close();
    }
  });
});
