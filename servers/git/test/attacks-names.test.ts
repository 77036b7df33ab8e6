import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused, repoState, startAttackServer, type AttackServer } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * Names a hostile repository can hold (bytes that are not UTF-8, newlines, tabs, quotes,
 * backslashes, a name that spells out a forged section of a reply), and the degenerate
 * repositories: one with no commits, and bare ones. Every tool gives an exact answer; none is
 * garbled, forged or misleading.
 */
let h: AttackServer;
beforeAll(async () => {
  h = await startAttackServer({ policy: { allow_write: true } });
});
afterAll(async () => {
  await h.close();
});

describe('file names that are not UTF-8, or hold newlines, tabs, quotes and backslashes', () => {
  const NAMES: readonly [bytes: Buffer, shown: string][] = [
    [Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74]), 'bad\\xff.txt'],
    [Buffer.from('new\nline.txt'), 'new\nline.txt'],
    [Buffer.from('tab\there "q".txt'), 'tab\there "q".txt'],
    [Buffer.from('back\\slash.txt'), 'back\\slash.txt'],
    [Buffer.from('x\nStaged (1):\n  modified: forged.txt'), 'x\nStaged (1):\n  modified: forged.txt'],
  ];
  let repo: string;
  let head: string;
  const file = (prefix: string, name: Buffer) => Buffer.concat([Buffer.from(`${repo}/${prefix}`), name]);
  beforeAll(() => {
    repo = initRepo(h.ws.path('names'));
    for (const [name] of NAMES) writeFileSync(file('', name), 'one\n');
    head = commit(repo, 'one');
    for (const [name] of NAMES) writeFileSync(file('', name), 'two\n');
    for (const [name] of NAMES) writeFileSync(file('u-', name), 'u\n');
  });

  it('git_status: exact names in the structured result; in the text, a name with a control character is quoted and forges nothing', async () => {
    const result = await h.call('git_status', { repo: 'names' });
    expect(result.structured).toEqual({
      branch: 'main',
      head,
      upstream: null,
      ahead: null,
      behind: null,
      staged: [],
      unstaged: ['back\\slash.txt', 'bad\\xff.txt', 'new\nline.txt', 'tab\there "q".txt', 'x\nStaged (1):\n  modified: forged.txt'].map((path) => ({ path, status: 'modified' })),
      untracked: ['u-back\\slash.txt', 'u-bad\\xff.txt', 'u-new\nline.txt', 'u-tab\there "q".txt', 'u-x\nStaged (1):\n  modified: forged.txt'],
      conflicted: [],
      truncated: false,
    });
    expect(result.text).toBe(
      [
        `On branch main at ${head.slice(0, 12)}`,
        'Not staged (5):',
        '  modified: back\\slash.txt',
        '  modified: bad\\xff.txt',
        '  modified: "new\\nline.txt"',
        '  modified: "tab\\there \\"q\\".txt"',
        '  modified: "x\\nStaged (1):\\n  modified: forged.txt"',
        'Untracked (5):',
        '  u-back\\slash.txt',
        '  u-bad\\xff.txt',
        '  "u-new\\nline.txt"',
        '  "u-tab\\there \\"q\\".txt"',
        '  "u-x\\nStaged (1):\\n  modified: forged.txt"',
      ].join('\n'),
    );
    expect(result.text.split('\n').filter((line) => line.startsWith('Staged'))).toEqual([]);
  });

  it('git_diff and git_show: the list quotes such names, the patch headers are quoted by git', async () => {
    const stat = await h.call('git_diff', { repo: 'names', stat_only: true });
    expect(stat.text).toBe(
      [
        '5 files changed:',
        '  modified back\\slash.txt +1 −1',
        '  modified bad\\xff.txt +1 −1',
        '  modified "new\\nline.txt" +1 −1',
        '  modified "tab\\there \\"q\\".txt" +1 −1',
        '  modified "x\\nStaged (1):\\n  modified: forged.txt" +1 −1',
      ].join('\n'),
    );
    expect((stat.structured as { files: { path: string }[] }).files.map((f) => f.path)).toEqual(NAMES.map(([, shown]) => shown).sort());
    const show = await h.call('git_show', { repo: 'names', rev: 'HEAD' });
    expect(show.text).toContain('  added "x\\nStaged (1):\\n  modified: forged.txt" +1 −0\n');
    expect(show.text).toContain('diff --git "a/bad\\377.txt" "b/bad\\377.txt"\n');
    expect(show.text).toContain('diff --git "a/new\\nline.txt" "b/new\\nline.txt"\n');
  });

  it.each(NAMES.map(([, shown]) => [shown]))('git_log and git_diff find %j by its exact name', async (shown) => {
    expect((await h.call('git_log', { repo: 'names', path: shown })).structured).toMatchObject({ commits: [{ hash: head }] });
    const diff = await h.call('git_diff', { repo: 'names', path: shown });
    expect((diff.structured as { files: { path: string; added: number; deleted: number }[] }).files).toEqual([{ path: shown, status: 'modified', added: 1, deleted: 1, binary: false }]);
  });

  it('git_show_file and git_blame read names that are not UTF-8, tabs, quotes and backslashes; a newline is refused with the reason', async () => {
    for (const shown of ['bad\\xff.txt', 'tab\there "q".txt', 'back\\slash.txt']) {
      expect(await h.outcome('git_show_file', { repo: 'names', rev: 'HEAD', path: shown }), shown).toEqual({ isError: false, text: '     1\tone' });
    }
    for (const shown of ['tab\there "q".txt', 'back\\slash.txt']) {
      const blame = await h.call('git_blame', { repo: 'names', path: shown });
      expect(blame.structured, shown).toMatchObject({ path: shown, lines: [{ line: 1, commit: head, text: 'one' }] });
    }
    expect(await h.outcome('git_blame', { repo: 'names', path: 'bad\\xff.txt' })).toEqual(
      refused('path "bad\\\\xff.txt" is not valid UTF-8, and this command can only be given UTF-8 file names'),
    );
    for (const tool of ['git_show_file', 'git_blame']) {
      expect(await h.outcome(tool, { repo: 'names', rev: 'HEAD', path: 'new\nline.txt' }), tool).toEqual(refused('path "new\\nline.txt" holds a newline, which git cat-file cannot be asked for'));
    }
  });

  it('a name that looks like an escape of a UTF-8 name is taken literally (\\x2e is no dot)', async () => {
    expect(await h.outcome('git_show_file', { repo: 'names', rev: 'HEAD', path: 'bad\\x2etxt' })).toEqual(refused(`bad\\x2etxt does not exist at HEAD (${head.slice(0, 12)})`));
  });
});

describe('a repository with no commits: every tool', () => {
  let repo: string;
  beforeAll(() => {
    repo = initRepo(h.ws.path('empty'));
  });

  it('reads answer plainly, revisions name the missing history', async () => {
    const before = repoState(repo);
    const expected: [string, Record<string, unknown>, boolean, string][] = [
      ['git_status', {}, false, 'On branch main (no commits yet)\nNothing to commit: the working tree and the index match HEAD.'],
      ['git_log', {}, false, 'empty has no commits yet.'],
      ['git_log', { path: 'a.txt', grep: 'x' }, false, 'empty has no commits yet.'],
      ['git_log', { rev: 'HEAD~1' }, true, 'rev "HEAD~1": empty has no commits yet'],
      ['git_diff', {}, false, 'No differences.'],
      ['git_diff', { staged: true }, false, 'No differences.'],
      ['git_diff', { from: 'HEAD' }, true, 'from "HEAD": empty has no commits yet'],
      ['git_show', { rev: 'HEAD' }, true, 'rev "HEAD": empty has no commits yet'],
      ['git_show_file', { rev: 'HEAD', path: 'a.txt' }, true, 'rev "HEAD": empty has no commits yet'],
      ['git_blame', { path: 'a.txt' }, true, 'rev "HEAD": empty has no commits yet'],
      ['git_refs', { kind: 'all' }, false, 'HEAD: main (no commits yet)\nNo refs.'],
      ['commit_changeset', { branch: 'main', expected_head: '0'.repeat(40), message: 'm', files: [{ path: 'a.txt', content: 'a\n' }] }, true, 'expected_head is the zero id, which only makes sense with create: true (a first commit with no parent)'],
      ['commit_changeset', { branch: 'main', expected_head: 'HEAD', message: 'm', files: [{ path: 'a.txt', content: 'a\n' }] }, true, 'expected_head "HEAD": empty has no commits yet'],
    ];
    for (const [tool, args, isError, text] of expected) expect(await h.outcome(tool, { repo: 'empty', ...args }), `${tool} ${JSON.stringify(args)}`).toEqual({ isError, text });
    expect(repoState(repo)).toEqual(before);
  });

  it('commit_changeset makes the first commit (no parent) with create and the zero id, touching neither index nor working tree', async () => {
    writeFileSync(`${repo}/untracked.txt`, 'u\n');
    const before = repoState(repo, { internals: false });
    const result = await h.call('commit_changeset', { repo: 'empty', branch: 'main', create: true, expected_head: '0'.repeat(40), message: 'first', files: [{ path: 'a.txt', content: 'a\n' }] });
    expect(result.isError, result.text).toBe(false);
    const made = (result.structured as { commit: string }).commit;
    expect(git(repo, ['rev-list', '--parents', made]).trim()).toBe(made);
    expect({ ...repoState(repo, { internals: false }), refs: null, status: null }).toEqual({ ...before, refs: null, status: null });
  });
});

describe('bare repositories: every tool', () => {
  beforeAll(() => {
    git(h.ws.root, ['init', '-q', '--bare', 'empty.git']);
    const source = initRepo(h.ws.path('source'));
    commit(source, 'first', { 'a.txt': 'a\n' });
    git(h.ws.root, ['clone', '-q', '--bare', 'source', 'full.git']);
  });
  const noWorkTree = (repo: string, what: string) => refused(`${repo} is a bare repository: it has no working tree, so ${what} does not apply`);

  it('an empty bare repository', async () => {
    for (const [tool, args, outcome] of [
      ['git_status', {}, noWorkTree('empty.git', 'git_status')],
      ['git_log', {}, { isError: false, text: 'empty.git has no commits yet.' }],
      ['git_diff', {}, noWorkTree('empty.git', 'a diff against the working tree')],
      ['git_diff', { staged: true }, noWorkTree('empty.git', 'a diff of the staged changes (the index)')],
      ['git_diff', { from: 'HEAD', to: 'HEAD' }, refused('from "HEAD": empty.git has no commits yet')],
      ['git_show', { rev: 'HEAD' }, refused('rev "HEAD": empty.git has no commits yet')],
      ['git_show_file', { rev: 'HEAD', path: 'a.txt' }, refused('rev "HEAD": empty.git has no commits yet')],
      ['git_blame', { path: 'a.txt' }, refused('rev "HEAD": empty.git has no commits yet')],
      ['git_refs', {}, { isError: false, text: 'HEAD: main (no commits yet)\nNo branches.' }],
    ] as const) {
      expect(await h.outcome(tool, { repo: 'empty.git', ...args }), `${tool} ${JSON.stringify(args)}`).toEqual(outcome);
    }
  });

  it('a bare repository with commits: history reads work, working-tree and index reads are refused, commits are made', async () => {
    const head = git(h.ws.path('full.git'), ['rev-parse', 'HEAD']).trim();
    expect(await h.outcome('git_status', { repo: 'full.git' })).toEqual(noWorkTree('full.git', 'git_status'));
    expect(await h.outcome('git_diff', { repo: 'full.git' })).toEqual(noWorkTree('full.git', 'a diff against the working tree'));
    // Not "every file deleted": a bare repository has no index to compare.
    expect(await h.outcome('git_diff', { repo: 'full.git', staged: true })).toEqual(noWorkTree('full.git', 'a diff of the staged changes (the index)'));
    expect(await h.outcome('git_diff', { repo: 'full.git', from: 'HEAD' })).toEqual(noWorkTree('full.git', 'a diff against the working tree'));
    expect((await h.call('git_log', { repo: 'full.git' })).structured).toMatchObject({ commits: [{ hash: head, subject: 'first' }] });
    expect((await h.call('git_show', { repo: 'full.git', rev: 'HEAD' })).structured).toMatchObject({ commit: { hash: head }, files: [{ path: 'a.txt', status: 'added' }] });
    expect(await h.outcome('git_show_file', { repo: 'full.git', rev: 'HEAD', path: 'a.txt' })).toEqual({ isError: false, text: '     1\ta' });
    expect((await h.call('git_blame', { repo: 'full.git', path: 'a.txt' })).structured).toMatchObject({ lines: [{ line: 1, commit: head, text: 'a' }] });
    expect((await h.call('git_refs', { repo: 'full.git' })).structured).toMatchObject({ head: { branch: 'main', commit: head } });
    const made = await h.call('commit_changeset', { repo: 'full.git', branch: 'main', expected_head: head, message: 'in bare', files: [{ path: 'b.txt', content: 'b\n' }] });
    expect(made.text).toBe(`Committed ${(made.structured as { commit: string }).commit} on main (parent ${head}):\n  created b.txt`);
    expect(git(h.ws.path('full.git'), ['ls-tree', '--name-only', 'main'])).toBe('a.txt\nb.txt\n');
  });
});
