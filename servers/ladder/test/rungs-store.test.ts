import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pgSearchQuery } from '../src/store/pg/rung-search.js';
import { ftsQuery } from '../src/store/rung-search.js';
import { commit, git, ladderBackend, ladderFixture, RUNG_BACKENDS, type LadderFixture } from './ladder-helpers.js';

describe.each(RUNG_BACKENDS)('the rung store on %s', (backendName) => {
  const backend = ladderBackend(backendName);
  let fx: LadderFixture;
  let now: number;
  let first: string;

  beforeEach(async () => {
    now = Date.UTC(2026, 0, 1);
    fx = await ladderFixture({ 'src/index.js': 'a\n', 'src/util.js': 'u\n', 'README.md': 'r\n' }, () => now, backend);
    first = git(fx.dir, ['rev-parse', 'HEAD']).trim();
  });
  afterEach(() => fx.close());

  describe('revisions and history', () => {
    it('counts revisions and keeps every one, newest first, with author and time', async () => {
      await fx.ladder.writeRungs(fx.repo, [{ path: 'src/index.js', kind: 'file', commit: first, summary: 'v1' }], 'ada');
      now += 1000;
      const second = commit(fx.dir, 'edit', { 'src/index.js': 'b\n' });
      const [rewritten] = await fx.ladder.writeRungs(fx.repo, [{ path: 'src/index.js', kind: 'file', commit: second, summary: 'v2', body: 'more', expected_revision: 1 }], 'bob');
      expect(rewritten).toMatchObject({ revision: 2, author: 'bob', commit: second, summary: 'v2', writtenAt: now });
      const history = await fx.ladder.history(fx.repo, 'src/index.js');
      expect(history.map((rung) => [rung.revision, rung.summary, rung.author, rung.commit, rung.body])).toEqual([
        [2, 'v2', 'bob', second, 'more'],
        [1, 'v1', 'ada', first, null],
      ]);
      expect(history[0]!.objectId).not.toBe(history[1]!.objectId);
      expect(await fx.ladder.history(fx.repo, 'README.md')).toEqual([]);
    });

    it('an expected_revision mismatch fails the whole batch, names every conflict and writes nothing', async () => {
      await fx.ladder.writeRungs(fx.repo, [{ path: 'src/index.js', kind: 'file', commit: first, summary: 'v1' }], 'ada');
      for (let i = 2; i <= 4; i++) await fx.ladder.writeRungs(fx.repo, [{ path: 'src/index.js', kind: 'file', commit: first, summary: `v${i}` }], 'ada');
      const attempt = fx.ladder.writeRungs(
        fx.repo,
        [
          { path: 'README.md', kind: 'file', commit: first, summary: 'new', expected_revision: 0 },
          { path: 'src/index.js', kind: 'file', commit: first, summary: 'stale edit', expected_revision: 3 },
          { path: 'src/util.js', kind: 'file', commit: first, summary: 'u', expected_revision: 2 },
        ],
        'bob',
      );
      await expect(attempt).rejects.toThrow('src/index.js is at revision 4; you expected 3');
      await expect(attempt).rejects.toThrow('src/util.js has no rung yet; you expected revision 2');
      await expect(attempt).rejects.toThrow(/read it again and merge/);
      expect((await fx.store.list(fx.repo.name)).map((rung) => [rung.path, rung.revision, rung.summary])).toEqual([['src/index.js', 4, 'v4']]);
      expect(await fx.store.history(fx.repo.name, 'README.md')).toEqual([]);
      expect((await fx.store.search('new', { limit: 10 })).hits).toEqual([]);
    });

    it('expected_revision 0 creates, and fails once the rung exists; the matching revision succeeds', async () => {
      await fx.ladder.writeRungs(fx.repo, [{ path: 'README.md', kind: 'file', commit: first, summary: 'one', expected_revision: 0 }], 'ada');
      await expect(fx.ladder.writeRungs(fx.repo, [{ path: 'README.md', kind: 'file', commit: first, summary: 'two', expected_revision: 0 }], 'bob')).rejects.toThrow(
        'README.md is at revision 1; you expected 0',
      );
      const [rung] = await fx.ladder.writeRungs(fx.repo, [{ path: 'README.md', kind: 'file', commit: first, summary: 'two', expected_revision: 1 }], 'bob');
      expect(rung!.revision).toBe(2);
    });

    it('rungs of different repositories with the same path are separate', async () => {
      await fx.ladder.writeRungs(fx.repo, [{ path: 'README.md', kind: 'file', commit: first, summary: 'widgets readme' }], 'ada');
      await fx.ladder.writeRungs({ ...fx.repo, name: 'acme/gadgets' }, [{ path: 'README.md', kind: 'file', commit: first, summary: 'gadgets readme' }], 'ada');
      expect((await fx.store.get('acme/widgets', 'README.md'))!.revision).toBe(1);
      expect((await fx.store.get('acme/gadgets', 'README.md'))!.summary).toBe('gadgets readme');
    });
  });

  describe('search', () => {
    async function seed(): Promise<void> {
      const filler = 'This part of the code reads configuration and handles many unrelated concerns at length. '.repeat(20);
      await fx.ladder.writeRungs(
        fx.repo,
        [
          { path: 'src/util.js', kind: 'file', commit: first, summary: 'Helpers for strings and dates', body: `${filler} It also retries requests. ${filler}` },
          { path: 'src/index.js', kind: 'file', commit: first, summary: 'Retries failed requests with backoff', body: 'The entry point.' },
          { path: 'README.md', kind: 'file', commit: first, summary: 'Project overview', body: 'Install and use.' },
        ],
        'ada',
      );
      await fx.ladder.writeRungs({ ...fx.repo, name: 'acme/gadgets' }, [{ path: 'README.md', kind: 'file', commit: first, summary: 'Gadget retries overview' }], 'ada');
    }

    it('ranks a rung naming the term in its summary above one mentioning it once in a long body, across repositories', async () => {
      await seed();
      const { hits, broad } = await fx.ladder.search('retries');
      expect(broad).toBe(false);
      // Both summary hits come first (the shorter summary first: bm25 and ts_rank_cd with length normalization both weigh length), then the body hit.
      expect(hits.map((hit) => `${hit.repo}:${hit.path}`)).toEqual(['acme/gadgets:README.md', 'acme/widgets:src/index.js', 'acme/widgets:src/util.js']);
      expect(hits[1]!.score!).toBeGreaterThan(hits[2]!.score!);
      expect(hits[1]!.snippet).toContain('[Retries]');
      expect(hits[2]!.snippet).toContain('[retries]');
      expect(hits[2]!.snippet.length).toBeLessThan(300);
    });

    it('filters by repository, honours the limit, stems and matches prefixes and paths', async () => {
      await seed();
      expect((await fx.ladder.search('retries', { repo: 'acme/gadgets' })).hits.map((hit) => hit.repo)).toEqual(['acme/gadgets']);
      expect((await fx.ladder.search('retries', { limit: 1 })).hits).toHaveLength(1);
      expect((await fx.ladder.search('retrying')).hits.length).toBe(3);
      expect((await fx.ladder.search('backo*')).hits.map((hit) => hit.path)).toEqual(['src/index.js']);
      expect((await fx.ladder.search('util.js')).hits.map((hit) => hit.path)).toEqual(['src/util.js']);
      expect((await fx.ladder.search('retries overview')).hits.map((hit) => hit.repo)).toEqual(['acme/gadgets']);
      await expect(fx.ladder.search('x', { limit: 0 })).rejects.toThrow(/limit/);
    });

    it('a query matching more rungs than are ranked is broad: only the newest 2,000 matches are ranked, still filtered by repository', async () => {
      const strong = 'common words, common words and common words again';
      const rungs = (repoIndex: number, strongAt: number) =>
        Array.from({ length: 500 }, (_, i) => ({ path: `f${i}.js`, kind: 'file' as const, commit: first, objectId: first, summary: i === strongAt ? strong : `common words here ${repoIndex}-${i}` }));
      // acme/r0 is written first, so its 500 rungs fall outside the newest 2,000 of the 2,500 matches.
      for (let r = 0; r < 5; r++) await fx.store.write(`acme/r${r}`, rungs(r, r === 0 ? 7 : r === 3 ? 250 : -1), 'ada');
      const everywhere = await fx.ladder.search('common words', { limit: 3 });
      expect(everywhere.broad).toBe(true);
      expect(everywhere.hits[0]).toMatchObject({ repo: 'acme/r3', path: 'f250.js' });
      expect(everywhere.hits.map((hit) => hit.repo)).not.toContain('acme/r0');
      const scores = everywhere.hits.map((hit) => hit.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(scores[0]).toBeGreaterThan(scores[1]!);
      expect(everywhere.hits[1]!.snippet).toContain('[common] [words]');
      const oneRepo = await fx.ladder.search('common words', { repo: 'acme/r0', limit: 2 });
      expect(oneRepo.broad).toBe(false);
      expect(oneRepo.hits.map((hit) => `${hit.repo}:${hit.path}`)[0]).toBe('acme/r0:f7.js');
      const narrowed = await fx.ladder.search('common 3-17');
      expect(narrowed.broad).toBe(false);
      expect(narrowed.hits.map((hit) => `${hit.repo}:${hit.path}`)).toEqual(['acme/r3:f17.js']);
    });

    it('a rewrite replaces the rung in the index', async () => {
      await seed();
      await fx.ladder.writeRungs(fx.repo, [{ path: 'src/index.js', kind: 'file', commit: first, summary: 'Entry point only' }], 'ada');
      expect((await fx.ladder.search('backoff')).hits.map((hit) => hit.path)).toEqual([]);
      expect((await fx.ladder.search('entry')).hits.map((hit) => hit.path)).toEqual(['src/index.js']);
    });

    it.each(['"', '"retries', 'retries"', '*', 'retr*', '-retries', 'NOT retries', 'NEAR(retries', 'NEAR(a b, 2)', 'retries OR', 'OR', 'AND', '(', 'summary:retries', '^retries', "'", '', '   ', 'a"b"c*'])(
      'the query %j does not throw',
      async (query) => {
        await seed();
        await expect(fx.ladder.search(query)).resolves.toMatchObject({ hits: expect.any(Array) });
      },
    );

    it('FTS syntax in a query is searched as text', async () => {
      await seed();
      expect((await fx.ladder.search('-retries')).hits.length).toBe(3);
      expect((await fx.ladder.search('NEAR(retries')).hits.length).toBe(0);
    });
  });

  describe('reindex and the schema', () => {
    it('rebuilds one repository search rows and recomputes freshness', async () => {
      await fx.ladder.writeRungs(
        fx.repo,
        [
          { path: 'src/index.js', kind: 'file', commit: first, summary: 'Entry point' },
          { path: 'README.md', kind: 'file', commit: first, summary: 'Overview' },
        ],
        'ada',
      );
      await fx.ladder.writeRungs({ ...fx.repo, name: 'acme/gadgets' }, [{ path: 'README.md', kind: 'file', commit: first, summary: 'Overview of gadgets' }], 'ada');
      await fx.dropSearchEntries();
      expect((await fx.ladder.search('overview')).hits).toEqual([]);
      commit(fx.dir, 'edit readme', { 'README.md': 'changed\n', 'src/index.js': null });
      const result = await fx.ladder.reindex(fx.repo);
      expect(result).toMatchObject({ indexed: 2, counts: { fresh: 0, stale: 1, missing: 1 } });
      expect(result.outdated).toEqual([
        { path: 'README.md', freshness: 'stale' },
        { path: 'src/index.js', freshness: 'missing' },
      ]);
      expect((await fx.ladder.search('overview')).hits.map((hit) => hit.repo)).toEqual(['acme/widgets']);
      expect(await fx.ladder.reindex(fx.repo)).toMatchObject({ indexed: 2 });
      expect((await fx.ladder.search('overview')).hits).toHaveLength(1);
    });

    it('migrates idempotently, and a second store on the same database sees the first one rungs', async () => {
      await fx.ladder.writeRungs(fx.repo, [{ path: 'README.md', kind: 'file', commit: first, summary: 'Overview' }], 'ada');
      expect(await fx.migrateAgain()).toEqual([1]);
      const other = await fx.openAnother();
      expect((await other.get(fx.repo.name, 'README.md'))!.summary).toBe('Overview');
      expect((await other.search('overview', { limit: 5 })).hits.map((hit) => hit.path)).toEqual(['README.md']);
    });
  });
});

describe('query parsing: user text is words, never query syntax', () => {
  it('SQLite: every term a quoted phrase, a trailing * a prefix', () => {
    expect(ftsQuery('a "b" NEAR( c* -d OR')).toBe('"a" """b""" "NEAR(" "c"* "-d" "OR"');
    expect(ftsQuery('" * ( )')).toBeUndefined();
  });

  it('PostgreSQL: every word quoted, the words of a term a phrase, terms ANDed, a trailing * a prefix', () => {
    expect(pgSearchQuery("a 'b' src/lexer.ts c* -d!&|:(x) <->")).toEqual({
      all: "('a') & ('b') & ('src' <-> 'lexer' <-> 'ts') & ('c':*) & ('d' <-> 'x')",
      any: "('a') | ('b') | ('src' <-> 'lexer' <-> 'ts') | ('c':*) | ('d' <-> 'x')",
    });
    expect(pgSearchQuery('util.j* \\ \x00 retries\x00backoff')!.all).toBe("('util' <-> 'j':*) & ('retries' <-> 'backoff')");
    expect(pgSearchQuery("' * ( ) <-> & | ! : \\")).toBeUndefined();
    expect(pgSearchQuery(`${'x'.repeat(2_047)} y`)!.all).toBe(`('${'x'.repeat(2_047)}') & ('y')`);
    expect(pgSearchQuery(`${'x'.repeat(2_048)} y`)).toBeUndefined();
    expect(pgSearchQuery(Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '))!.all.split(' & ')).toHaveLength(32);
  });
});
