import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UNWRITTEN_RELEASES_MAX_TAGS, type LadderTree } from '../src/ladder/ladder.js';
import { commit, git, ladderFixture, type LadderFixture } from './ladder-helpers.js';

const FILES = {
  'README.md': '# widgets\n',
  'src/index.js': 'export const a = 1;\n',
  'src/util.js': 'export const u = 1;\n',
  'docs/guide.md': 'how to\n',
};

let fx: LadderFixture;
let first: string;

beforeEach(async () => {
  fx = await ladderFixture(FILES);
  first = git(fx.dir, ['rev-parse', 'HEAD']).trim();
});
afterEach(() => fx.close());

async function writeBasics(): Promise<void> {
  await fx.ladder.writeRungs(
    fx.repo,
    [
      { path: '_repo', kind: 'repo', commit: 'HEAD', summary: 'A widget library' },
      { path: 'src', kind: 'directory', commit: first, summary: 'The library code' },
      { path: 'src/index.js', kind: 'file', commit: first, summary: 'Entry point', body: 'Exports a.' },
      { path: 'src/util.js', kind: 'file', commit: first, summary: 'Helpers' },
      { path: 'docs', kind: 'directory', commit: first, summary: 'Documentation' },
    ],
    'ada',
  );
}

describe('writing and reading rungs', () => {
  it('records the commit and the object id of the path, and reads the rung back fresh with its children', async () => {
    await writeBasics();
    const reading = await fx.ladder.readRung(fx.repo, 'src');
    expect(reading.freshness).toBe('fresh');
    expect(reading.checkedAt).toBe(first);
    expect(reading.rung).toMatchObject({ path: 'src', kind: 'directory', commit: first, summary: 'The library code', revision: 1, author: 'ada' });
    expect(reading.rung!.objectId).toBe(git(fx.dir, ['rev-parse', `${first}:src`]).trim());
    expect(reading.children.map((child) => [child.path, child.summary, child.freshness])).toEqual([
      ['src/index.js', 'Entry point', 'fresh'],
      ['src/util.js', 'Helpers', 'fresh'],
    ]);
    const file = await fx.ladder.readRung(fx.repo, './src/index.js');
    expect(file.rung).toMatchObject({ body: 'Exports a.', objectId: git(fx.dir, ['rev-parse', `${first}:src/index.js`]).trim() });
    expect(file.children).toEqual([]);
  });

  it('anchors _repo to the root tree and lists the top-level rungs as its children', async () => {
    await writeBasics();
    const reading = await fx.ladder.readRung(fx.repo, '_repo');
    expect(reading.rung!.objectId).toBe(git(fx.dir, ['rev-parse', `${first}^{tree}`]).trim());
    expect(reading.children.map((child) => child.path)).toEqual(['docs', 'src']);
  });

  it('resolves a branch name to its commit id', async () => {
    const [rung] = await fx.ladder.writeRungs(fx.repo, [{ path: 'README.md', kind: 'file', commit: 'main', summary: 'Readme' }], 'ada');
    expect(rung!.commit).toBe(first);
  });
});

describe('freshness after commits', () => {
  it('a commit that touches only docs keeps src and its files fresh, makes docs and _repo stale', async () => {
    await writeBasics();
    commit(fx.dir, 'docs only', { 'docs/guide.md': 'how to, revised\n' });
    const tree = await fx.ladder.tree(fx.repo);
    const freshness = Object.fromEntries(tree.rungs.map((entry) => [entry.path, entry.freshness]));
    expect(freshness).toEqual({ _repo: 'stale', docs: 'stale', src: 'fresh', 'src/index.js': 'fresh', 'src/util.js': 'fresh' });
    expect((await fx.ladder.readRung(fx.repo, 'src/index.js')).freshness).toBe('fresh');
    expect((await fx.ladder.readRung(fx.repo, 'docs')).freshness).toBe('stale');
  });

  it('a commit that touches a file makes the file, its directory and _repo stale, and not its sibling', async () => {
    await writeBasics();
    commit(fx.dir, 'change index', { 'src/index.js': 'export const a = 2;\n' });
    const reading = await fx.ladder.readRung(fx.repo, 'src');
    expect(reading.freshness).toBe('stale');
    expect(reading.rung!.currentObjectId).not.toBe(reading.rung!.objectId);
    expect(Object.fromEntries(reading.children.map((child) => [child.path, child.freshness]))).toEqual({ 'src/index.js': 'stale', 'src/util.js': 'fresh' });
    expect((await fx.ladder.readRung(fx.repo, '_repo')).freshness).toBe('stale');
  });

  it('an empty commit keeps everything fresh, and a given older commit is checked instead of HEAD', async () => {
    await writeBasics();
    commit(fx.dir, 'empty');
    expect((await fx.ladder.tree(fx.repo)).counts).toMatchObject({ fresh: 5, stale: 0, missing: 0 });
    commit(fx.dir, 'change util', { 'src/util.js': 'changed\n' });
    expect((await fx.ladder.readRung(fx.repo, 'src/util.js')).freshness).toBe('stale');
    expect((await fx.ladder.readRung(fx.repo, 'src/util.js', first)).freshness).toBe('fresh');
    expect((await fx.ladder.tree(fx.repo, first)).counts).toMatchObject({ fresh: 5, stale: 0 });
  });

  it('a deleted file or directory is missing', async () => {
    await writeBasics();
    commit(fx.dir, 'drop docs and util', { docs: null, 'src/util.js': null });
    const tree = await fx.ladder.tree(fx.repo);
    const freshness = Object.fromEntries(tree.rungs.map((entry) => [entry.path, entry.freshness]));
    expect(freshness).toMatchObject({ docs: 'missing', 'src/util.js': 'missing', 'src/index.js': 'fresh' });
    const reading = await fx.ladder.readRung(fx.repo, 'docs');
    expect(reading.freshness).toBe('missing');
    expect(reading.rung!.currentObjectId).toBeNull();
  });

  it('a path that became a directory where a file was is stale, not fresh', async () => {
    await writeBasics();
    commit(fx.dir, 'file to folder', { 'src/util.js': null });
    commit(fx.dir, 'folder', { 'src/util.js/inner.js': 'x\n' });
    expect((await fx.ladder.readRung(fx.repo, 'src/util.js')).freshness).toBe('stale');
  });
});

describe('unwritten paths', () => {
  it('ladder_tree lists every directory and file with no rung, and _repo until it has one', async () => {
    const empty = await fx.ladder.tree(fx.repo);
    expect(empty.rungs).toEqual([]);
    expect(empty.unwritten).toEqual([
      { path: '_repo', kind: 'repo' },
      { path: 'README.md', kind: 'file' },
      { path: 'docs', kind: 'directory' },
      { path: 'docs/guide.md', kind: 'file' },
      { path: 'src', kind: 'directory' },
      { path: 'src/index.js', kind: 'file' },
      { path: 'src/util.js', kind: 'file' },
    ]);
    await writeBasics();
    const tree = await fx.ladder.tree(fx.repo);
    expect(tree.unwritten.map((entry) => entry.path)).toEqual(['README.md', 'docs/guide.md']);
    expect(tree.counts).toEqual({ fresh: 5, stale: 0, missing: 0, unwritten: 2 });
  });

  it('reading a path with no rung says unwritten; a path that does not exist is refused', async () => {
    const reading = await fx.ladder.readRung(fx.repo, 'README.md');
    expect(reading).toMatchObject({ rung: null, freshness: 'unwritten' });
    await expect(fx.ladder.readRung(fx.repo, 'nope.txt')).rejects.toThrow(/nope\.txt has no rung and does not exist/);
  });
});

describe('names that are not UTF-8', () => {
  it('lists them escaped, and a rung written with the escaped name is checked against the right bytes', async () => {
    writeFileSync(Buffer.concat([Buffer.from(`${fx.dir}/bad`), Buffer.from([0xff]), Buffer.from('.txt')]), 'odd\n');
    commit(fx.dir, 'odd name');
    expect((await fx.ladder.tree(fx.repo)).unwritten.map((entry) => entry.path)).toContain('bad\\xff.txt');
    await fx.ladder.writeRungs(fx.repo, [{ path: 'bad\\xff.txt', kind: 'file', commit: 'HEAD', summary: 'An oddly named file' }], 'ada');
    expect((await fx.ladder.readRung(fx.repo, 'bad\\xff.txt')).freshness).toBe('fresh');
    writeFileSync(Buffer.concat([Buffer.from(`${fx.dir}/bad`), Buffer.from([0xff]), Buffer.from('.txt')]), 'changed\n');
    commit(fx.dir, 'change odd');
    expect((await fx.ladder.tree(fx.repo)).rungs.find((entry) => entry.path === 'bad\\xff.txt')!.freshness).toBe('stale');
  });
});

describe('releases and changesets', () => {
  it('a release rung anchors to its tag commit: fresh while the tag stays, stale when it moves, missing when deleted', async () => {
    git(fx.dir, ['tag', 'v1.0']);
    await fx.ladder.writeRungs(fx.repo, [{ path: '_release/v1.0', kind: 'release', commit: 'v1.0', summary: 'First release' }], 'ada');
    const second = commit(fx.dir, 'more', { 'new.txt': 'n\n' });
    expect((await fx.ladder.readRung(fx.repo, '_release/v1.0')).freshness).toBe('fresh');
    git(fx.dir, ['tag', '-f', 'v1.0', second]);
    expect((await fx.ladder.readRung(fx.repo, '_release/v1.0')).freshness).toBe('stale');
    git(fx.dir, ['tag', '-d', 'v1.0']);
    expect((await fx.ladder.tree(fx.repo)).rungs[0]).toMatchObject({ path: '_release/v1.0', freshness: 'missing' });
  });

  it('a release rung must cite the commit its tag points at, and the tag must exist', async () => {
    git(fx.dir, ['tag', 'v1.0']);
    const second = commit(fx.dir, 'more');
    await expect(fx.ladder.writeRungs(fx.repo, [{ path: '_release/v1.0', kind: 'release', commit: second, summary: 'x' }], 'ada')).rejects.toThrow(/tag v1\.0 points at .* not at/);
    await expect(fx.ladder.writeRungs(fx.repo, [{ path: '_release/v9', kind: 'release', commit: second, summary: 'x' }], 'ada')).rejects.toThrow(/tag v9 does not exist/);
  });

  it('a changeset rung anchors to its commit and stays fresh as HEAD moves', async () => {
    await fx.ladder.writeRungs(fx.repo, [{ path: '_changeset/cs-1', kind: 'changeset', commit: first, summary: 'Initial import' }], 'ada');
    commit(fx.dir, 'later', { 'README.md': 'changed\n' });
    const reading = await fx.ladder.readRung(fx.repo, '_changeset/cs-1');
    expect(reading.rung).toMatchObject({ objectId: first, commit: first });
    expect(reading.freshness).toBe('fresh');
  });
});

function unwrittenReleases(tree: LadderTree): string[] {
  return tree.unwritten.flatMap((entry) => (entry.kind === 'release' ? [entry.path] : []));
}

describe('unwritten releases', () => {
  it('ladder_tree lists lightweight and annotated tags with no rung as unwritten _release/<tag>, after the tree paths, by tag name', async () => {
    git(fx.dir, ['tag', '-a', '-m', 'Second release', 'v2.0']);
    git(fx.dir, ['tag', 'v1.0']);
    const tree = await fx.ladder.tree(fx.repo);
    expect(tree.unwritten[0]).toEqual({ path: '_repo', kind: 'repo' });
    expect(tree.unwritten.slice(-3)).toEqual([
      { path: 'src/util.js', kind: 'file' },
      { path: '_release/v1.0', kind: 'release' },
      { path: '_release/v2.0', kind: 'release' },
    ]);
    expect(tree.counts).toEqual({ fresh: 0, stale: 0, missing: 0, unwritten: 9 });
    expect(tree.unwrittenReleasesTruncated).toBe(false);
  });

  it('a release rung written for a tag takes it off the unwritten list and puts it among the rungs', async () => {
    git(fx.dir, ['tag', '-a', '-m', 'Second release', 'v2.0']);
    git(fx.dir, ['tag', 'v1.0']);
    await fx.ladder.writeRungs(fx.repo, [{ path: '_release/v2.0', kind: 'release', commit: 'v2.0', summary: 'Second release' }], 'ada');
    const tree = await fx.ladder.tree(fx.repo);
    expect(unwrittenReleases(tree)).toEqual(['_release/v1.0']);
    expect(tree.rungs).toEqual([expect.objectContaining({ path: '_release/v2.0', kind: 'release', freshness: 'fresh' })]);
    expect(tree.counts).toEqual({ fresh: 1, stale: 0, missing: 0, unwritten: 8 });
  });

  it('leaves out a tag of a blob or a tree, and a tag whose name no rung path can hold', async () => {
    git(fx.dir, ['tag', 'readme-blob', git(fx.dir, ['rev-parse', `${first}:README.md`]).trim()]);
    git(fx.dir, ['tag', '-a', '-m', 'The root tree', 'root-tree', git(fx.dir, ['rev-parse', `${first}^{tree}`]).trim()]);
    git(fx.dir, ['tag', 'v1.0']);
    // Names git takes through update-ref but parseRungPath refuses: option-like, and not UTF-8.
    git(fx.dir, ['update-ref', '--stdin'], Buffer.concat([Buffer.from(`create refs/tags/-rf ${first}\ncreate refs/tags/bad`), Buffer.from([0xff]), Buffer.from(` ${first}\n`)]));
    expect(git(fx.dir, ['for-each-ref', '--format=%(refname)', 'refs/tags/']).trim().split('\n')).toHaveLength(5);
    expect(unwrittenReleases(await fx.ladder.tree(fx.repo))).toEqual(['_release/v1.0']);
  });

  it('lists a tag named outside ASCII under its own name, and a rung can be written for it (git refuses spaces in tag names)', async () => {
    expect(() => git(fx.dir, ['tag', 'v 1'])).toThrow(/not a valid tag name/);
    const tag = 'версия-1.0-café';
    git(fx.dir, ['tag', tag]);
    expect(unwrittenReleases(await fx.ladder.tree(fx.repo))).toEqual([`_release/${tag}`]);
    await fx.ladder.writeRungs(fx.repo, [{ path: `_release/${tag}`, kind: 'release', commit: tag, summary: 'Version 1.0' }], 'ada');
    const tree = await fx.ladder.tree(fx.repo);
    expect(unwrittenReleases(tree)).toEqual([]);
    expect(tree.rungs).toEqual([expect.objectContaining({ path: `_release/${tag}`, freshness: 'fresh' })]);
  });

  it('lists every tag whatever commit the tree is measured at', async () => {
    const second = commit(fx.dir, 'more', { 'new.txt': 'n\n' });
    git(fx.dir, ['tag', 'v2.0', second]);
    const tree = await fx.ladder.tree(fx.repo, first);
    expect(tree.checkedAt).toBe(first);
    expect(tree.unwritten.map((entry) => entry.path)).not.toContain('new.txt');
    expect(unwrittenReleases(tree)).toEqual(['_release/v2.0']);
  });

  it(`lists the first ${UNWRITTEN_RELEASES_MAX_TAGS} tags by name when there are more, and says so`, async () => {
    const names = Array.from({ length: UNWRITTEN_RELEASES_MAX_TAGS + 1 }, (_, i) => `t${String(i).padStart(5, '0')}`);
    git(fx.dir, ['update-ref', '--stdin'], names.map((name) => `create refs/tags/${name} ${first}\n`).join(''));
    const tree = await fx.ladder.tree(fx.repo);
    expect(tree.unwrittenReleasesTruncated).toBe(true);
    expect(unwrittenReleases(tree)).toEqual(names.slice(0, UNWRITTEN_RELEASES_MAX_TAGS).map((name) => `_release/${name}`));
  });
});

describe('refusals', () => {
  it('refuses a commit that does not exist, naming the rung; nothing is written', async () => {
    await expect(
      fx.ladder.writeRungs(
        fx.repo,
        [
          { path: 'README.md', kind: 'file', commit: first, summary: 'Readme' },
          { path: 'src', kind: 'directory', commit: 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef', summary: 'x' },
        ],
        'ada',
      ),
    ).rejects.toThrow(/rungs\[1\]\.commit "deadbeef.*" does not exist/);
    await expect(fx.ladder.writeRungs(fx.repo, [{ path: 'src', kind: 'directory', commit: '--output=/tmp/x', summary: 'x' }], 'ada')).rejects.toThrow(/could take it for an option/);
    expect(await fx.store.list(fx.repo.name)).toEqual([]);
  });

  it.each([
    ['../etc/passwd', 'file', /contains "\.\."/],
    ['/etc/passwd', 'file', /is absolute/],
    ['-rf', 'file', /option/],
    ['src\nx', 'file', /control character/],
    ['.', 'directory', /whole repository/],
    ['_repo/x', 'file', /reserved/],
    ['_release/bad..tag', 'release', /not a valid tag name/],
    ['_changeset/../x', 'changeset', /changeset id/],
    ['src', 'release', /directory or file path, not a release/],
    ['_repo', 'directory', /repo path, not a directory/],
  ] as const)('refuses the path %j with kind %s', async (path, kind, message) => {
    await expect(fx.ladder.writeRungs(fx.repo, [{ path, kind, commit: first, summary: 'x' }], 'ada')).rejects.toThrow(message);
  });

  it('refuses a kind that does not match what git has at the commit, a missing path, an empty summary and a duplicate path', async () => {
    await expect(fx.ladder.writeRungs(fx.repo, [{ path: 'src', kind: 'file', commit: first, summary: 'x' }], 'ada')).rejects.toThrow(/src is a directory at .*write it with kind "directory"/);
    await expect(fx.ladder.writeRungs(fx.repo, [{ path: 'src/gone.js', kind: 'file', commit: first, summary: 'x' }], 'ada')).rejects.toThrow(/does not exist at/);
    await expect(fx.ladder.writeRungs(fx.repo, [{ path: 'src', kind: 'directory', commit: first, summary: '  ' }], 'ada')).rejects.toThrow(/summary is empty/);
    await expect(
      fx.ladder.writeRungs(
        fx.repo,
        [
          { path: 'src', kind: 'directory', commit: first, summary: 'x' },
          { path: 'src/', kind: 'directory', commit: first, summary: 'y' },
        ],
        'ada',
      ),
    ).rejects.toThrow(/appears twice/);
  });
});
