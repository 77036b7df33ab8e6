import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_GLOBS } from '@bulkhead/core';
import { gitInit, lineFile, startFs, type FsHarness } from './helpers.js';

const WORKSPACE: Record<string, string | Uint8Array> = {
  'src/a.ts': 'const alpha = 1;\nconst beta = 2;\n// TODO alpha\n',
  'src/b.ts': 'export function Alpha() {}\n',
  'src/c.js': 'alpha();\nfoo\nbar\nbaz\nqux\nalpha();\n',
  'docs/readme.md': '# Alpha docs\nalpha beta\n',
  '.gitignore': '*.log\nbuild/\n',
  'debug.log': 'alpha in a log\n',
  'build/out.ts': 'alpha built\n',
  '.hidden/h.ts': 'alpha hidden\n',
  '.env': 'alpha=SECRET\n',
  '.env.local': 'alpha=SECRET\n',
  'key.pem': 'alpha pem\n',
  'id_rsa': 'alpha rsa\n',
  '.ssh/config': 'alpha ssh\n',
  'nested/.ssh/known_hosts': 'alpha known\n',
  'bin.dat': Buffer.from('alpha\0binary alpha\n'),
  'dash.txt': 'use --files here\n-e too\n',
  'multi.txt': 'start\nmiddle\nend\n',
  'paren.txt': 'a (b) c\n',
  'many.txt': lineFile(300, (n) => `hit ${n}`),
};

const ROOT_ALPHA = 'docs/readme.md\nsrc/a.ts\nsrc/c.js';
const ROOT_ALPHA_CONTENT = 'docs/readme.md:2:alpha beta\nsrc/a.ts:1:const alpha = 1;\nsrc/a.ts:3:// TODO alpha\nsrc/c.js:1:alpha();\nsrc/c.js:6:alpha();';

describe.each(['ripgrep', 'builtin'] as const)('grep with the %s engine', (engine) => {
  let fs: FsHarness;
  const grep = (args: Record<string, unknown>) => fs.call('grep', args);
  beforeAll(async () => {
    fs = await startFs(WORKSPACE, { policy: { search_engine: engine } });
    gitInit(fs.ws.root); // ripgrep honours .gitignore inside a git repository
  });
  afterAll(async () => {
    await fs.close();
  });

  it('lists matching files sorted by path (files_with_matches is the default)', async () => {
    expect(await grep({ pattern: 'alpha' })).toEqual({ isError: false, text: ROOT_ALPHA, content: [{ type: 'text', text: ROOT_ALPHA }] });
    expect((await grep({ pattern: 'alpha', output_mode: 'files_with_matches' })).text).toBe(ROOT_ALPHA);
  });

  it('shows matching lines as path:line:text in content mode', async () => {
    expect(await grep({ pattern: 'alpha', output_mode: 'content' })).toMatchObject({ isError: false, text: ROOT_ALPHA_CONTENT });
  });

  it('counts matching lines per file in count mode, with a total', async () => {
    expect((await grep({ pattern: 'alpha', output_mode: 'count' })).text).toBe('docs/readme.md:1\nsrc/a.ts:2\nsrc/c.js:2\n[5 matching lines in 3 files]');
  });

  it('pages with head_limit and offset and says where the next page starts', async () => {
    expect((await grep({ pattern: 'alpha', output_mode: 'content', head_limit: 2 })).text).toBe(
      'docs/readme.md:2:alpha beta\nsrc/a.ts:1:const alpha = 1;\n[showing 1-2 of 5 result lines; next: offset=2]',
    );
    expect((await grep({ pattern: 'alpha', output_mode: 'content', head_limit: 2, offset: 2 })).text).toBe(
      'src/a.ts:3:// TODO alpha\nsrc/c.js:1:alpha();\n[showing 3-4 of 5 result lines; next: offset=4]',
    );
    expect((await grep({ pattern: 'alpha', output_mode: 'content', head_limit: 2, offset: 4 })).text).toBe('src/c.js:6:alpha();');
    expect((await grep({ pattern: 'alpha', head_limit: 1 })).text).toBe('docs/readme.md\n[showing 1-1 of 3 result lines; next: offset=1]');
    expect((await grep({ pattern: 'alpha', output_mode: 'count', head_limit: 1 })).text).toBe(
      'docs/readme.md:1\n[5 matching lines in 3 files]\n[showing 1-1 of 3 result lines; next: offset=1]',
    );
    expect(await grep({ pattern: 'alpha', output_mode: 'content', offset: 40 })).toMatchObject({ isError: false, text: '[offset 40 is past the 5 result lines]' });
  });

  it('returns at most 250 result lines by default', async () => {
    const result = await grep({ pattern: '^hit \\d+$', output_mode: 'content' });
    const expected = Array.from({ length: 250 }, (_, i) => `many.txt:${i + 1}:hit ${i + 1}`);
    expect(result.text).toBe(`${expected.join('\n')}\n[showing 1-250 of 300 result lines; next: offset=250]`);
    const rest = await grep({ pattern: '^hit \\d+$', output_mode: 'content', offset: 250 });
    expect(rest.text).toBe(Array.from({ length: 50 }, (_, i) => `many.txt:${i + 251}:hit ${i + 251}`).join('\n'));
  });

  it('shows context lines with "-" and separates distant groups with --', async () => {
    expect((await grep({ pattern: 'alpha', output_mode: 'content', context: 1, path: 'src' })).text).toBe(
      [
        'src/a.ts:1:const alpha = 1;',
        'src/a.ts-2-const beta = 2;',
        'src/a.ts:3:// TODO alpha',
        'src/c.js:1:alpha();',
        'src/c.js-2-foo',
        '--',
        'src/c.js-5-qux',
        'src/c.js:6:alpha();',
      ].join('\n'),
    );
  });

  it('ignores case when asked', async () => {
    expect((await grep({ pattern: 'alpha', case_insensitive: true })).text).toBe('docs/readme.md\nsrc/a.ts\nsrc/b.ts\nsrc/c.js');
    expect((await grep({ pattern: 'ALPHA', case_insensitive: true, output_mode: 'count', path: 'docs' })).text).toBe('docs/readme.md:2\n[2 matching lines in 1 files]');
  });

  it('lets a pattern span lines with multiline', async () => {
    expect((await grep({ pattern: 'start.middle', multiline: true, output_mode: 'content' })).text).toBe('multi.txt:1:start\nmulti.txt:2:middle');
    expect((await grep({ pattern: 'start.middle', output_mode: 'content' })).text).toBe('No matches for "start.middle" in the root.');
  });

  it('searches a literal string with literal', async () => {
    expect((await grep({ pattern: 'a (b', literal: true, output_mode: 'content' })).text).toBe('paren.txt:1:a (b) c');
  });

  it('filters files with glob, comma lists and ! exclusions', async () => {
    expect((await grep({ pattern: 'alpha', glob: '*.ts' })).text).toBe('src/a.ts');
    expect((await grep({ pattern: 'alpha', glob: '*.ts,*.md' })).text).toBe('docs/readme.md\nsrc/a.ts');
    expect((await grep({ pattern: 'alpha', glob: '!*.ts' })).text).toBe('docs/readme.md\nsrc/c.js');
    expect((await grep({ pattern: 'alpha', glob: '*.js, !src/**' })).text).toBe('No matches for "alpha" in the root.');
    expect((await grep({ pattern: 'alpha', glob: 'src/*.js' })).text).toBe('src/c.js');
  });

  it('honours .gitignore, also when a glob names the ignored files', async () => {
    expect((await grep({ pattern: 'built|in a log' })).text).toBe('No matches for "built|in a log" in the root.');
    expect((await grep({ pattern: 'alpha', glob: '*.log' })).text).toBe('No matches for "alpha" in the root.');
    expect((await grep({ pattern: 'alpha', glob: 'build/**' })).text).toBe('No matches for "alpha" in the root.');
    // A file named by path is searched even when ignored: the caller asked for it.
    expect((await grep({ pattern: 'alpha', path: 'debug.log', output_mode: 'content' })).text).toBe('debug.log:1:alpha in a log');
  });

  it('skips hidden files unless hidden is true', async () => {
    expect((await grep({ pattern: 'alpha hidden' })).text).toBe('No matches for "alpha hidden" in the root.');
    expect((await grep({ pattern: 'alpha', hidden: true })).text).toBe(`.hidden/h.ts\n${ROOT_ALPHA}`);
  });

  it('skips binary files', async () => {
    expect((await grep({ pattern: 'binary alpha' })).text).toBe('No matches for "binary alpha" in the root.');
  });

  it('never shows deny_read secrets, in any mode, even with hidden and globs that name them', async () => {
    for (const output_mode of ['files_with_matches', 'content', 'count']) {
      for (const glob of [undefined, '.env*,*.pem,id_rsa', '**/.ssh/**', '**']) {
        const result = await grep({ pattern: 'alpha', hidden: true, output_mode, ...(glob ? { glob } : {}) });
        expect(result.isError).toBe(false);
        expect(result.text).not.toMatch(/\.env|\.pem|id_rsa|\.ssh|SECRET|known/);
      }
    }
    expect(await grep({ pattern: 'alpha', path: '.env' })).toMatchObject({
      isError: true,
      text: '.env is a protected secret (matches `.env*` in deny_read of fs_policy.yaml); it cannot be read',
    });
    expect(await grep({ pattern: 'alpha', path: '.ssh', hidden: true })).toMatchObject({
      isError: true,
      text: '.ssh is a protected secret (matches `.ssh/` in deny_read of fs_policy.yaml); it cannot be read',
    });
    expect(await grep({ pattern: 'alpha', path: 'nested/.ssh/known_hosts' })).toMatchObject({
      isError: true,
      text: 'nested/.ssh/known_hosts is a protected secret (matches `.ssh/` in deny_read of fs_policy.yaml); it cannot be read',
    });
  });

  it('treats a pattern that starts with "-" as a pattern, never an option', async () => {
    expect((await grep({ pattern: '--files', output_mode: 'content' })).text).toBe('dash.txt:1:use --files here');
    expect((await grep({ pattern: '-e', output_mode: 'content' })).text).toBe('dash.txt:2:-e too');
    expect((await grep({ pattern: '--version' })).text).toBe('No matches for "--version" in the root.');
  });

  it('refuses an invalid regular expression with a clear error', async () => {
    const result = await grep({ pattern: '(unclosed' });
    expect(result.isError).toBe(true);
    if (engine === 'ripgrep') {
      expect(result.text).toBe(
        'Invalid regular expression: rg: regex parse error:\n    (?:(unclosed)\n    ^\nerror: unclosed group\n(Rust regex syntax: escape literal characters such as ( [ { with a backslash, or pass literal: true.)',
      );
    } else {
      expect(result.text).toBe('Invalid regular expression: /(unclosed/g: Unterminated group');
    }
  });

  it('says so when nothing matches', async () => {
    expect(await grep({ pattern: 'zzzz' })).toMatchObject({ isError: false, text: 'No matches for "zzzz" in the root.' });
    expect(await grep({ pattern: 'zzzz', path: 'src' })).toMatchObject({ isError: false, text: 'No matches for "zzzz" in src.' });
  });

  it('searches a single file given as path', async () => {
    expect((await grep({ pattern: 'alpha', path: 'src/a.ts', output_mode: 'content' })).text).toBe('src/a.ts:1:const alpha = 1;\nsrc/a.ts:3:// TODO alpha');
    expect((await grep({ pattern: 'alpha', path: 'src/c.js', output_mode: 'count' })).text).toBe('src/c.js:2\n[2 matching lines in 1 files]');
    expect((await grep({ pattern: 'alpha', path: 'src/a.ts' })).text).toBe('src/a.ts');
  });

  it('searches a sub-folder and shows paths relative to the root', async () => {
    expect((await grep({ pattern: 'alpha', path: 'src' })).text).toBe('src/a.ts\nsrc/c.js');
    expect((await grep({ pattern: 'alpha', path: fs.ws.path('docs'), output_mode: 'content' })).text).toBe('docs/readme.md:2:alpha beta');
  });

  it('refuses a path outside the roots', async () => {
    expect(await grep({ pattern: 'alpha', path: '../' })).toMatchObject({
      isError: true,
      text: `../ is outside the allowed roots (${fs.ws.root}); give a path inside them`,
    });
    expect(await grep({ pattern: 'root', path: '/etc' })).toMatchObject({ isError: true, text: `/etc is outside the allowed roots (${fs.ws.root}); give a path inside them` });
  });

  it('filters by file type with ripgrep, and says the built-in engine cannot', async () => {
    const result = await grep({ pattern: 'alpha', type: 'js' });
    if (engine === 'ripgrep') expect(result).toMatchObject({ isError: false, text: 'src/c.js' });
    else expect(result).toMatchObject({ isError: true, text: 'type filters need ripgrep, which is not available here; use glob (for example "*.ts") instead' });
  });
});

describe('grep: ripgrep-only errors', () => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs({ 'a.txt': 'x\n' }, { policy: { search_engine: 'ripgrep' } });
  });
  afterAll(async () => {
    await fs.close();
  });

  it('names an unknown file type', async () => {
    expect(await fs.call('grep', { pattern: 'x', type: 'nosuch' })).toMatchObject({
      isError: true,
      text: 'rg: unrecognized file type: nosuch (see `rg --type-list` names such as ts, py, rust, go, js, md)',
    });
  });

  it('reports an invalid glob as a glob error, not a regex error', async () => {
    expect(await fs.call('grep', { pattern: 'x', glob: '[' })).toMatchObject({
      isError: true,
      text: "Invalid glob: rg: error parsing glob '[': unclosed character class; missing ']'",
    });
  });
});

describe.each(['ripgrep', 'builtin'] as const)('grep: deny_read globs with a folder (%s)', (engine) => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs(
      { 'secrets/prod.yaml': 'token alpha\n', 'secrets/dev.yaml': 'alpha\n', 'other/prod.yaml': 'alpha\n' },
      { policy: { search_engine: engine, deny_read: [...SECRET_GLOBS, 'secrets/prod.yaml'] } },
    );
  });
  afterAll(async () => {
    await fs.close();
  });

  it('keeps the denied file out whichever folder is searched', async () => {
    expect((await fs.call('grep', { pattern: 'alpha' })).text).toBe('other/prod.yaml\nsecrets/dev.yaml');
    expect((await fs.call('grep', { pattern: 'alpha', path: 'secrets' })).text).toBe('secrets/dev.yaml');
    expect((await fs.call('grep', { pattern: 'token', path: 'secrets', output_mode: 'content' })).text).toBe('No matches for "token" in secrets.');
  });
});

describe('grep: a regular expression that would backtrack forever', () => {
  const files = { 'evil.txt': `${'a'.repeat(40)}!\n`, 'ok.txt': 'aaa\n' };

  it('is stopped at the timeout by the built-in engine, and the server keeps serving', async () => {
    // 2 s: long enough for the follow-up search's worker to start on a loaded machine.
    const fs = await startFs(files, { policy: { search_engine: 'builtin', limits: { grep_timeout_ms: 2000 } } });
    try {
      expect(await fs.call('grep', { pattern: '(a+)+$', output_mode: 'content' })).toMatchObject({
        isError: false,
        text: 'No matches for "(a+)+$" in the root.\n[the search stopped after 2000 ms; results are partial — narrow it with path, glob or type]',
      });
      expect(await fs.read('ok.txt')).toMatchObject({ isError: false, text: '     1\taaa' });
      expect((await fs.call('grep', { pattern: 'a+', path: 'ok.txt' })).text).toBe('ok.txt');
    } finally {
      await fs.close();
    }
  });

  it('needs no timeout with ripgrep, which does not backtrack', async () => {
    const fs = await startFs(files, { policy: { search_engine: 'ripgrep', limits: { grep_timeout_ms: 10_000 } } });
    try {
      // The built-in engine would still be backtracking at 10 s; ripgrep finishes with the exact answer and no timeout note.
      expect(await fs.call('grep', { pattern: '(a+)+$', output_mode: 'content' })).toMatchObject({ isError: false, text: 'ok.txt:1:aaa' });
    } finally {
      await fs.close();
    }
  });
});
