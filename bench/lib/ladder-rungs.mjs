// The Ladder's read paths, measured on the built ladder (servers/ladder/dist):
//   - ladder_search p50/p99 over 100,000 rungs in 10 repositories (Zipf-distributed words, so
//     common terms match most rungs, as they do in real summaries);
//   - ladder_tree on a 20,000-file repository with 5,000 rungs, after a commit touching 200 files.
// `node bench/lib/ladder-rungs.mjs [--rungs N] [--files N]`; `pnpm bench ladder` can import both.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { GitRepository, Roots } from '../../servers/ladder/node_modules/@bulkhead/core/dist/index.js';
import { Ladder } from '../../servers/ladder/dist/ladder/ladder.js';
import { openDatabase } from '../../servers/ladder/dist/store/database.js';
import { SqliteRungStore } from '../../servers/ladder/dist/store/rungs-sqlite.js';

const GIT_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };

function git(cwd, args) {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A seeded generator, so every run searches the same text with the same queries. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Words of a 5,000-word vocabulary drawn with Zipf's law (s = 1): word 0 is the most common. */
function zipfWords(next, vocabulary) {
  const weights = vocabulary.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative = [];
  let sum = 0;
  for (const weight of weights) cumulative.push((sum += weight / total));
  return (count) => {
    const words = [];
    for (let i = 0; i < count; i++) {
      const r = next();
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid] < r) lo = mid + 1;
        else hi = mid;
      }
      words.push(vocabulary[lo]);
    }
    return words.join(' ');
  };
}

function syllableWord(next) {
  const syllables = ['ka', 'lo', 'mi', 're', 'tu', 'sen', 'dor', 'pa', 'vi', 'qua', 'zel', 'no', 'fi', 'gra', 'bet', 'ush'];
  const length = 2 + Math.floor(next() * 3);
  let word = '';
  for (let i = 0; i < length; i++) word += syllables[Math.floor(next() * syllables.length)];
  return word;
}

/**
 * `database`: a file to load (when empty) and keep, so later runs measure queries only and the
 * plans can be looked at afterwards.
 */
export async function benchSearch({ rungs = 100_000, queries = 1_000, database } = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ladder-search-bench-')));
  const db = openDatabase(database ?? join(dir, 'ladder.db'));
  try {
    const store = new SqliteRungStore(db);
    return await searchWorkload({ store, ladder: new Ladder(store), rungs, queries, countRungs: async () => db.prepare('SELECT count(*) FROM rungs').pluck().get() });
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The search workload on any RungStore (SQLite here, PostgreSQL in ladder-postgres.mjs): loads
 * `rungs` rungs when the store holds none (then runs `afterLoad`), then times the same seeded
 * queries through `ladder`.
 */
export async function searchWorkload({ store, ladder, rungs, queries = 1_000, countRungs, afterLoad }) {
  const next = random(42);
  const vocabulary = [...new Set(Array.from({ length: 8_000 }, () => syllableWord(next)))].slice(0, 5_000);
  const words = zipfWords(next, vocabulary);
  const started = performance.now();
  const repos = 10;
  const perRepo = Math.ceil(rungs / repos);
  const loaded = await countRungs();
  for (let r = 0; r < repos && loaded === 0; r++) {
    for (let offset = 0; offset < perRepo; offset += 500) {
      const batch = [];
      for (let i = offset; i < Math.min(perRepo, offset + 500); i++) {
        batch.push({
          path: `pkg${i % 50}/dir${i % 400}/file${i}.ts`,
          kind: 'file',
          commit: '0'.repeat(40),
          objectId: (i + 1).toString(16).padStart(40, '0'),
          summary: words(6 + Math.floor(next() * 10)),
          body: next() < 0.6 ? words(30 + Math.floor(next() * 120)) : undefined,
        });
      }
      await store.write(`bench/repo${r}`, batch, 'bench');
    }
  }
  const loadMs = performance.now() - started;
  if (loaded === 0) await afterLoad?.();
  const nextQuery = random(7);
  const queryWords = zipfWords(nextQuery, vocabulary);
  const queryTexts = Array.from({ length: queries }, () => queryWords(1 + Math.floor(nextQuery() * 3)));
  for (const query of queryTexts.slice(0, 50)) await ladder.search(query); // warm the page cache
  const times = [];
  let hits = 0;
  let broad = 0;
  for (const [i, query] of queryTexts.entries()) {
    const t = performance.now();
    const found = await ladder.search(query, { limit: 20, ...(i % 4 === 3 ? { repo: `bench/repo${i % repos}` } : {}) });
    times.push(performance.now() - t);
    hits += found.hits.length;
    if (found.broad) broad++;
  }
  const common = [];
  for (const word of vocabulary.slice(0, 5)) {
    const t = performance.now();
    await ladder.search(word, { limit: 20 });
    common.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { rungs: await countRungs(), loadMs: loaded === 0 ? loadMs : null, queries, p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1), meanHits: hits / queries, broadQueries: broad, mostCommonWordsMs: common };
}

export async function benchTree({ files = 20_000, rungs = 5_000, runs = 7 } = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ladder-tree-bench-')));
  const repoDir = join(dir, 'repo');
  mkdirSync(repoDir);
  const db = openDatabase(join(dir, 'ladder.db'));
  try {
    git(repoDir, ['init', '-q']);
    const paths = [];
    for (let i = 0; i < files; i++) {
      const path = `pkg${i % 20}/dir${i % 400}/file${i}.ts`;
      mkdirSync(join(repoDir, `pkg${i % 20}/dir${i % 400}`), { recursive: true });
      writeFileSync(join(repoDir, path), `export const v${i} = ${i};\n`);
      paths.push(path);
    }
    git(repoDir, ['add', '-A']);
    git(repoDir, ['commit', '-q', '-m', 'files']);
    const roots = new Roots([repoDir], { controlDir: join(dir, 'control'), denyRead: [] });
    const repo = { name: 'bench/tree', git: await GitRepository.open(roots, repoDir, { timeoutMs: 60_000, maxOutputBytes: 1024 * 1024 }) };
    const ladder = new Ladder(new SqliteRungStore(db));
    rungs = Math.min(rungs, files);
    const writeStarted = performance.now();
    for (let offset = 0; offset < rungs; offset += 500) {
      const batch = paths.slice(offset, Math.min(rungs, offset + 500)).map((path) => ({ path, kind: 'file', commit: 'HEAD', summary: `Summary of ${path}` }));
      await ladder.writeRungs(repo, batch, 'bench');
    }
    const writeMs = performance.now() - writeStarted;
    for (let i = 0; i < files; i += files / 200) writeFileSync(join(repoDir, paths[i]), 'changed\n');
    git(repoDir, ['commit', '-q', '-am', 'touch 200 files']);
    const times = [];
    let last;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      last = await ladder.tree(repo);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const readTimes = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await ladder.readRung(repo, paths[i * 7]);
      readTimes.push(performance.now() - t);
    }
    readTimes.sort((a, b) => a - b);
    return { files, rungs, writeMsPer500: writeMs / Math.ceil(rungs / 500), treeMedianMs: percentile(times, 50), treeMaxMs: times.at(-1), counts: last.counts, readRungMedianMs: percentile(readTimes, 50) };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const option = (name, fallback) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
  };
  const round = (value) => (typeof value === 'number' ? Math.round(value * 100) / 100 : value);
  const show = (result) => JSON.stringify(result, (_, value) => (Array.isArray(value) ? value.map(round) : round(value)), 2);
  process.stdout.write(`ladder_search: ${show(await benchSearch({ rungs: option('rungs', 100_000) }))}\n`);
  process.stdout.write(`ladder_tree: ${show(await benchTree({ files: option('files', 20_000) }))}\n`);
}
