import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { gitCallLog, refused, repoState, startAttackServer, type AttackServer, type GitCallLog } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * Option injection through every argument a model controls. A value that starts with "-" is
 * refused before git runs (the git wrapper on PATH proves git never started); one that holds an
 * option after a space, a newline or a NUL either is refused or reaches git only where git reads
 * it as data: after --end-of-options or --, inside one --key=value argument, or on stdin.
 */
let h: AttackServer;
let scratch: TempWorkspace;
let calls: GitCallLog;
let repo: string;
let head: string;
let pwned: string;
const savedPath = process.env['PATH'];

beforeAll(async () => {
  scratch = tempWorkspace({}, 'bulkhead-git-injection-');
  calls = gitCallLog(scratch.root);
  // The server builds git's PATH from its own at each run; the tests' git (helpers) keeps the real one.
  process.env['PATH'] = `${calls.bin}:${savedPath}`;
  h = await startAttackServer({ policy: { allow_write: true } });
  repo = initRepo(h.ws.path('repo'));
  commit(repo, 'one', { 'a.txt': 'a\n', 'dir/b.txt': 'b\n' });
  head = commit(repo, 'two', { 'a.txt': 'a2\n' });
  git(repo, ['branch', 'feature']);
  pwned = h.ws.path('PWNED');
});
afterAll(async () => {
  process.env['PATH'] = savedPath;
  await h.close();
  scratch.cleanup();
});

/** No file an injected option could have made: the marker (absolute), a relative one in git's working folder, an --output file. */
function noMarkers(): void {
  expect(existsSync(pwned)).toBe(false);
  expect(readdirSync(repo).filter((name) => /PWNED|output/i.test(name))).toEqual([]);
  expect(readdirSync(h.ws.root).filter((name) => /PWNED|output/i.test(name))).toEqual([]);
}

/** Values git would take for options. Each is under 80 characters, so errors quote it whole. */
const optionLike = () => [
  `--output=${pwned}`,
  `--upload-pack=touch ${pwned}`,
  `-c core.pager=touch ${pwned}`,
  `-ccore.fsmonitor=touch ${pwned}`,
  `--exec=touch ${pwned}`,
  `--open-files-in-pager=touch ${pwned}`,
  `-O${pwned}`,
  '-p',
  '--no-index /etc/passwd',
  '-L1,1:/etc/passwd',
  '--all',
  '--end-of-options',
  '--',
  '-',
];

const startsWithDash = (argument: string, value: string) => `${argument} ${JSON.stringify(value)} starts with "-", so git could take it for an option; it is refused and git was not run`;

describe('a value that starts with "-" is refused before git runs, in every argument of every tool', () => {
  afterEach(() => {
    noMarkers();
  });

  const cases: [tool: string, argument: string, args: (value: string) => Record<string, unknown>][] = [
    ['git_log', 'rev', (v) => ({ rev: v })],
    ['git_log', 'rev (right side)', (v) => ({ rev: `HEAD..${v}` })],
    ['git_log', 'path', (v) => ({ path: v })],
    ['git_log', 'since', (v) => ({ since: v })],
    ['git_log', 'until', (v) => ({ until: v })],
    ['git_log', 'author', (v) => ({ author: v })],
    ['git_log', 'grep', (v) => ({ grep: v })],
    ['git_diff', 'from', (v) => ({ from: v })],
    ['git_diff', 'to', (v) => ({ from: 'HEAD~1', to: v })],
    ['git_diff', 'path', (v) => ({ path: v })],
    ['git_show', 'rev', (v) => ({ rev: v })],
    ['git_show_file', 'rev', (v) => ({ rev: v, path: 'a.txt' })],
    ['git_show_file', 'path', (v) => ({ rev: 'HEAD', path: v })],
    ['git_blame', 'rev', (v) => ({ path: 'a.txt', rev: v })],
    ['git_blame', 'path', (v) => ({ path: v })],
    ['commit_changeset', 'branch', (v) => ({ branch: v, expected_head: head, message: 'm', files: [{ path: 'x.txt', content: 'x' }] })],
    ['commit_changeset', 'expected_head', (v) => ({ branch: 'main', expected_head: v, message: 'm', files: [{ path: 'x.txt', content: 'x' }] })],
    ['commit_changeset', 'files[0].path', (v) => ({ branch: 'main', expected_head: head, message: 'm', files: [{ path: v, content: 'x' }] })],
    ['commit_changeset', 'files[1].path', (v) => ({ branch: 'main', expected_head: head, message: 'm', files: [{ path: 'ok.txt', content: 'x' }, { path: v, delete: true }] })],
  ];

  for (const [tool, argument, args] of cases) {
    it(`${tool} ${argument}`, async () => {
      const before = repoState(repo);
      for (const value of optionLike()) {
        calls.clear();
        expect(await h.outcome(tool, { repo: 'repo', ...args(value) }), value).toEqual(refused(startsWithDash(argument, value)));
        expect(calls.calls(), value).toEqual([]);
      }
      expect(repoState(repo)).toEqual(before);
    });
  }

  it('commit_changeset author (the whole "Name <email>" is checked)', async () => {
    const before = repoState(repo);
    for (const value of optionLike()) {
      calls.clear();
      const author = `${value} <a@b>`;
      expect(await h.outcome('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'm', author, files: [{ path: 'x.txt', content: 'x' }] })).toEqual(
        refused(startsWithDash('author', author)),
      );
      expect(calls.calls()).toEqual([]);
    }
    expect(repoState(repo)).toEqual(before);
  });
});

describe('a value with a control character (newline, carriage return, NUL, tab) is refused before git runs where one line is needed', () => {
  afterEach(() => {
    noMarkers();
  });

  const controls = () => [`HEAD\n--output=${pwned}`, `HEAD\r--output=${pwned}`, `HEAD\0--output=${pwned}`, `HEAD\t--output=${pwned}`, 'HEAD\u007f'];
  const oneLine = (argument: string, value: string) => `${argument} ${JSON.stringify(value)} holds a control character (a newline?); give one line`;

  const cases: [tool: string, argument: string, args: (value: string) => Record<string, unknown>][] = [
    ['git_log', 'rev', (v) => ({ rev: v })],
    ['git_log', 'since', (v) => ({ since: v })],
    ['git_log', 'until', (v) => ({ until: v })],
    ['git_log', 'author', (v) => ({ author: v })],
    ['git_log', 'grep', (v) => ({ grep: v })],
    ['git_diff', 'from', (v) => ({ from: v })],
    ['git_diff', 'to', (v) => ({ from: 'HEAD~1', to: v })],
    ['git_show', 'rev', (v) => ({ rev: v })],
    ['git_show_file', 'rev', (v) => ({ rev: v, path: 'a.txt' })],
    ['git_blame', 'rev', (v) => ({ path: 'a.txt', rev: v })],
    ['commit_changeset', 'branch', (v) => ({ branch: v, expected_head: head, message: 'm', files: [{ path: 'x.txt', content: 'x' }] })],
    ['commit_changeset', 'expected_head', (v) => ({ branch: 'main', expected_head: v, message: 'm', files: [{ path: 'x.txt', content: 'x' }] })],
  ];
  for (const [tool, argument, args] of cases) {
    it(`${tool} ${argument}`, async () => {
      const before = repoState(repo);
      for (const value of controls()) {
        calls.clear();
        expect(await h.outcome(tool, { repo: 'repo', ...args(value) }), JSON.stringify(value)).toEqual(refused(oneLine(argument, value)));
        expect(calls.calls()).toEqual([]);
      }
      expect(repoState(repo)).toEqual(before);
    });
  }

  it('paths: a NUL is refused everywhere; a newline only where git reads the path from a line of stdin', async () => {
    const before = repoState(repo);
    const nul = `a.txt\0--output=${pwned}`;
    for (const [tool, args] of [
      ['git_log', { path: nul }],
      ['git_diff', { path: nul }],
      ['git_show_file', { rev: 'HEAD', path: nul }],
      ['git_blame', { path: nul }],
    ] as const) {
      calls.clear();
      expect(await h.outcome(tool, { repo: 'repo', ...args }), tool).toEqual(refused('path contains a NUL byte; remove it'));
      expect(calls.calls()).toEqual([]);
    }
    calls.clear();
    expect(await h.outcome('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'm', files: [{ path: nul, content: 'x' }] })).toEqual(
      refused('files[0].path contains a NUL byte; remove it'),
    );
    const newline = `a.txt\n--output=${pwned}`;
    for (const tool of ['git_show_file', 'git_blame']) {
      expect(await h.outcome(tool, { repo: 'repo', rev: 'HEAD', path: newline }), tool).toEqual(
        refused(`path ${JSON.stringify(newline)} holds a newline, which git cat-file cannot be asked for`),
      );
    }
    expect(calls.calls()).toEqual([]);
    expect(repoState(repo)).toEqual(before);
  });

  it('commit_changeset: a NUL in the message, and an author that is not one line', async () => {
    const before = repoState(repo);
    calls.clear();
    expect(await h.outcome('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: `m\0--output=${pwned}`, files: [{ path: 'x.txt', content: 'x' }] })).toEqual(
      refused('message contains a NUL byte; remove it'),
    );
    for (const author of ['A <a@b>\nCommitter: x', 'A\0B <a@b>', 'A <a@b> <c@d>', 'A\rB <a@b>', 'A <a@b\n>']) {
      expect(await h.outcome('commit_changeset', { repo: 'repo', branch: 'main', expected_head: head, message: 'm', author, files: [{ path: 'x.txt', content: 'x' }] }), JSON.stringify(author)).toEqual(
        refused(`author ${JSON.stringify(author)} is not "Name <email>" (one line, no other angle brackets)`),
      );
    }
    expect(calls.calls()).toEqual([]);
    expect(repoState(repo)).toEqual(before);
  });
});

/** The arguments of the last git run that holds `needle` (whole, or as the value of `--key=`). */
function runWith(needle: string): string[] {
  const run = calls
    .calls()
    .reverse()
    .find((args) => args.some((arg) => arg === needle || arg.endsWith(`=${needle}`) || arg.endsWith(`${needle}^{commit}`)));
  if (!run) throw new Error(`no git run got ${JSON.stringify(needle)}: ${JSON.stringify(calls.calls())}`);
  return run;
}

/** Where `needle` sits in git's arguments: after --end-of-options, after --, or inside one --key=value. */
function placeOf(needle: string): string {
  const args = runWith(needle);
  const at = args.findIndex((arg) => arg === needle || arg.endsWith(`=${needle}`) || arg.endsWith(`${needle}^{commit}`));
  const arg = args[at]!;
  if (arg.startsWith('--') && arg.endsWith(`=${needle}`)) return `inside ${arg.slice(0, arg.indexOf('=') + 1)}`;
  if (args.lastIndexOf('--', at) !== -1 && args.lastIndexOf('--', at) < at) return 'after --';
  if (args.indexOf('--end-of-options') !== -1 && args.indexOf('--end-of-options') < at) return 'after --end-of-options';
  return `as an option: ${JSON.stringify(args)}`;
}

/** Every place `needle` reached git's arguments in: each one data, none an option. */
function expectOnlyAsData(needle: string): void {
  for (const args of calls.calls()) {
    args.forEach((arg, at) => {
      if (!arg.includes(needle)) return;
      const data =
        (arg.startsWith('--') && arg.indexOf('=') !== -1 && arg.indexOf('=') < arg.indexOf(needle)) ||
        (args.indexOf('--') !== -1 && args.indexOf('--') < at) ||
        (args.indexOf('--end-of-options') !== -1 && args.indexOf('--end-of-options') < at) ||
        (args[at - 1] === '-m' && !arg.startsWith('-'));
      expect(data, `${JSON.stringify(arg)} in ${JSON.stringify(args)}`).toBe(true);
    });
  }
}

describe('option text after a space reaches git only as data, and does nothing', () => {
  afterEach(() => {
    noMarkers();
  });

  it('git_log: rev, path, since, until, author and grep', async () => {
    const before = repoState(repo);
    const rev = `HEAD --output=${pwned}`;
    calls.clear();
    expect(await h.outcome('git_log', { repo: 'repo', rev })).toEqual(refused(`rev ${JSON.stringify(rev)} does not exist (or is not a commit) in repo`));
    expect(placeOf(rev)).toBe('after --end-of-options');
    const right = `HEAD~1..HEAD -p --output=${pwned}`;
    expect(await h.outcome('git_log', { repo: 'repo', rev: right })).toEqual(refused(`rev (right side) "HEAD -p --output=${pwned}" does not exist (or is not a commit) in repo`));
    const path = `a.txt --output=${pwned}`;
    expect(await h.call('git_log', { repo: 'repo', path })).toMatchObject({ isError: false, structured: { commits: [], skip: 0, next_skip: null } });
    expect(placeOf(`:(literal)${path}`)).toBe('after --');
    for (const key of ['since', 'until', 'author', 'grep']) {
      const value = `x --output=${pwned} -c core.pager=touch ${pwned}`;
      calls.clear();
      const result = await h.call('git_log', { repo: 'repo', [key]: value });
      expect(result.isError, key).toBe(false);
      expect(placeOf(value), key).toBe(`inside --${key}=`);
    }
    expect(repoState(repo)).toEqual(before);
  });

  it('git_diff: from, to and path', async () => {
    const before = repoState(repo);
    const from = `HEAD --output=${pwned}`;
    expect(await h.outcome('git_diff', { repo: 'repo', from })).toEqual(refused(`from ${JSON.stringify(from)} does not exist (or is not a commit) in repo`));
    expect(placeOf(from)).toBe('after --end-of-options');
    expect(await h.outcome('git_diff', { repo: 'repo', from: 'HEAD~1', to: from })).toEqual(refused(`to ${JSON.stringify(from)} does not exist (or is not a commit) in repo`));
    const path = `a.txt -p --output=${pwned}`;
    expect(await h.outcome('git_diff', { repo: 'repo', from: 'HEAD~1', to: 'HEAD', path })).toEqual({ isError: false, text: 'No differences.' });
    expect(placeOf(`:(literal)${path}`)).toBe('after --');
    expect(repoState(repo)).toEqual(before);
  });

  it('git_show, git_show_file and git_blame: rev and path', async () => {
    const before = repoState(repo);
    calls.clear();
    const rev = ` --output=${pwned}`;
    expect(await h.outcome('git_show', { repo: 'repo', rev })).toEqual(refused(`rev ${JSON.stringify(rev)} does not exist (or is not a commit) in repo`));
    expect(await h.outcome('git_show_file', { repo: 'repo', rev, path: 'a.txt' })).toEqual(refused(`rev ${JSON.stringify(rev)} does not exist (or is not a commit) in repo`));
    expect(await h.outcome('git_blame', { repo: 'repo', rev, path: 'a.txt' })).toEqual(refused(`rev ${JSON.stringify(rev)} does not exist (or is not a commit) in repo`));
    const path = `a.txt --output=${pwned}`;
    expect(await h.outcome('git_show_file', { repo: 'repo', rev: 'HEAD', path })).toEqual(refused(`${path} does not exist at HEAD (${head.slice(0, 12)})`));
    expect(await h.outcome('git_blame', { repo: 'repo', path })).toEqual(refused(`${path} does not exist at HEAD (${head.slice(0, 12)})`));
    // Paths go in on stdin; a revision, if given as an argument at all, only after --end-of-options.
    expect(calls.calls().flat().filter((arg) => arg.includes(path))).toEqual([]);
    expectOnlyAsData('--output');
    expect(repoState(repo)).toEqual(before);
  });

  it('commit_changeset: branch, message, author and file paths', async () => {
    const before = repoState(repo);
    const workBefore = repoState(repo, { internals: false });
    const mainBefore = git(repo, ['rev-parse', 'main']);
    const branch = `x --output=${pwned}`;
    expect(await h.outcome('commit_changeset', { repo: 'repo', branch, expected_head: head, message: 'm', files: [{ path: 'x.txt', content: 'x' }] })).toEqual(
      refused(`branch ${JSON.stringify(branch)} is not a valid branch name`),
    );
    expect(repoState(repo)).toEqual(before);

    // The message goes in on stdin, the author in the environment, paths on stdin: all land as data.
    calls.clear();
    const message = `--output=${pwned}\n\n-c core.pager=touch ${pwned}\n--exec=touch ${pwned}\n`;
    const author = `Mallory --output=${pwned} <--exec=x@evil>`;
    const path = `dir/--output=${pwned.replaceAll('/', '_')}`;
    const result = await h.call('commit_changeset', { repo: 'repo', branch: 'feature', expected_head: head, message, author, files: [{ path, content: '--upload-pack=touch PWNED\n' }] });
    expect(result.isError, result.text).toBe(false);
    const made = (result.structured as { commit: string }).commit;
    expect(git(repo, ['log', '-1', '--format=%an%n%ae%n%B', made])).toBe(`Mallory --output=${pwned}\n--exec=x@evil\n${message}\n`);
    expect(git(repo, ['show', `${made}:${path}`])).toBe('--upload-pack=touch PWNED\n');
    // Only update-ref's reflog message (the value of -m, and never starting with "-") repeats the subject.
    const mentions = calls.calls().flatMap((args) => args.flatMap((arg, i) => (arg.includes('--output') || arg.includes('--exec') ? [[args[i - 1], arg]] : [])));
    expect(mentions).toEqual([['-m', `commit_changeset: --output=${pwned}`]]);
    expectOnlyAsData('--output');
    expectOnlyAsData('--exec');
    // Only the branch moved: main, the index and the working tree are as they were.
    expect(git(repo, ['rev-parse', 'main'])).toBe(mainBefore);
    git(repo, ['update-ref', 'refs/heads/feature', head]);
    expect(repoState(repo, { internals: false })).toEqual(workBefore);
  });
});

describe('arguments that are not strings are checked by their schema before the tool runs', () => {
  it('refuses numbers out of range, other types, other values and unknown keys, and git never runs', async () => {
    const before = repoState(repo);
    calls.clear();
    const invalid = (tool: string, why: string) => refused(`Invalid arguments for git:${tool}: ${why}`);
    for (const [tool, args, why] of [
      ['git_log', { max_count: -1 }, '`max_count`: Too small: expected number to be >=1'],
      ['git_log', { skip: -5 }, '`skip`: Too small: expected number to be >=0'],
      ['git_log', { max_count: 1.5 }, '`max_count`: Invalid input: expected int, received number'],
      ['git_log', { rev: ['--output=x'] }, '`rev`: Invalid input: expected string, received array'],
      ['git_log', { extra: '--output=x' }, 'unknown argument `extra`'],
      ['git_diff', { context_lines: -1 }, '`context_lines`: Too small: expected number to be >=0'],
      ['git_diff', { context_lines: 101 }, '`context_lines`: Too big: expected number to be <=100'],
      ['git_show_file', { rev: 'HEAD', path: 'a.txt', offset: 0 }, '`offset`: offset counts from 1; use a negative number to count from the end'],
      ['git_blame', { path: 'a.txt', start_line: 0 }, '`start_line`: Too small: expected number to be >=1'],
      ['git_refs', { kind: '--output=x' }, '`kind`: Invalid option: expected one of "branches"|"tags"|"all"'],
      ['commit_changeset', { branch: 'main', expected_head: head, message: 'm', files: [{ path: 'x', content: 'x', mode: '120000' }] }, 'unknown argument `mode`'],
      ['commit_changeset', { branch: 'main', expected_head: head, message: 'm', files: [{ path: 'x', delete: false }] }, '`files.0`: Invalid input'],
      ['commit_changeset', { branch: 'main', expected_head: head, message: 'm', files: [] }, '`files`: Too small: expected array to have >=1 items'],
    ] as const) {
      expect(await h.outcome(tool, { repo: 'repo', ...args }), `${tool} ${JSON.stringify(args)}`).toEqual(invalid(tool, why));
    }
    expect(calls.calls()).toEqual([]);
    expect(repoState(repo)).toEqual(before);
    noMarkers();
  });
});

it('the git wrapper really records runs (the checks above are not vacuous)', async () => {
  calls.clear();
  expect((await h.outcome('git_log', { repo: 'repo', max_count: 1 })).isError).toBe(false);
  expect(calls.calls().length).toBeGreaterThan(0);
  expect(calls.calls().every((args) => args.includes(`--git-dir=${join(repo, '.git')}`))).toBe(true);
});
