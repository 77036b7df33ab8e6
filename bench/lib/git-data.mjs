// The git bench's repository: 100,000 commits over 20,000 files, written by one `git fast-import`
// stream from a seeded generator (same commit hashes on every machine with the same git object
// format), cached under bench/.work/git/ and rebuilt only when missing or when GENERATOR_VERSION
// changes. Besides the ordinary churn it holds the three things the cases need:
//   - assets/dataset.csv: a large file (100,000 lines) added early and rewritten in an old commit
//     (tag bench/large-old), then changed again much later, so the old version is not HEAD's;
//   - src/core/engine.txt: a long file for blame, touched by one commit in every 50;
//   - bench/range-from..bench/range-to: ten commits that together change exactly 1,000 files.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { rawGitEnv } from './git-measure.mjs';
import { track, untrack } from './processes.mjs';

export const GENERATOR_VERSION = 1;

const COMMITS = 100_000;
const FILES = 20_000;
/** Ordinary files; the large file and the blame file make up the 20,000. */
const PLAIN_FILES = FILES - 2;
const PLAIN_LINES = 10;
const DIRS = 200;
const LARGE_PATH = 'assets/dataset.csv';
const LARGE_LINES = 100_000;
const LARGE_ADDED_AT = 1_000;
const LARGE_OLD_AT = 2_000;
const LARGE_LATER_AT = 70_000;
/** Every this many lines of the large file change in the old commit. */
const LARGE_OLD_EVERY = 20;
const BLAME_PATH = 'src/core/engine.txt';
const BLAME_LINES = 1_500;
const BLAME_ADDED_AT = 100;
const BLAME_EVERY = 50;
const RANGE_FIRST = 90_001;
const RANGE_COMMITS = 10;
const RANGE_FILES_PER_COMMIT = 100;
const START_TIME = Date.UTC(2015, 0, 1) / 1000;
const STEP_SECONDS = 1_800;
const AUTHORS = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth', 'Margaret Hamilton', 'Ken Thompson', 'Frances Allen', 'Dennis Ritchie', 'Radia Perlman', 'John McCarthy'];
const VERBS = ['Fix', 'Refactor', 'Tune', 'Update', 'Simplify', 'Document', 'Harden', 'Rename'];
const AREAS = ['parser', 'cache', 'scheduler', 'storage', 'network layer', 'config loader', 'renderer', 'indexer'];
/** Commits written per pipe write, and between progress lines. */
const BATCH = 500;
const PROGRESS_EVERY = 10_000;

/** Rewrites one status line on a terminal; elsewhere (CI logs, pipes) prints one line each. */
function status(text) {
  process.stderr.write(process.stderr.isTTY ? `\r\x1b[K${text}` : `${text}\n`);
}

function endStatus() {
  if (process.stderr.isTTY) process.stderr.write('\n');
}

/** xorshift32: fast and deterministic. */
function random(seed) {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

export function plainPath(id) {
  return `src/d${String(id % DIRS).padStart(3, '0')}/f${String(id).padStart(5, '0')}.txt`;
}

function plainContent(id, revs) {
  let text = '';
  for (let line = 0; line < PLAIN_LINES; line++) text += `file ${id} line ${line + 1} revision ${revs[id * PLAIN_LINES + line]}\n`;
  return text;
}

/** Line `n` (1-based) of the large file in `version` 1 (added), 2 (the old commit) or 3 (later). */
export function largeLine(n, version) {
  const changed = version >= 2 && n % LARGE_OLD_EVERY === 0 ? 2 : 1;
  const current = version === 3 && n % 1_000 === 0 ? 3 : changed;
  const checksum = ((n * 2654435761) >>> 0).toString(16).padStart(8, '0');
  return `${n},sensor-${n % 97},${checksum},${(n * 7) % 1000}.${n % 10},v${current}`;
}

export function largeContent(version) {
  const lines = new Array(LARGE_LINES);
  for (let n = 1; n <= LARGE_LINES; n++) lines[n - 1] = largeLine(n, version);
  return `${lines.join('\n')}\n`;
}

function blameContent(lines) {
  return `${lines.join('\n')}\n`;
}

function data(text) {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

function repoPaths(root) {
  return { root, repo: join(root, 'repo'), stamp: join(root, 'repo', '.git', 'bench-generator.json') };
}

/**
 * The stream for `git fast-import`, yielded in batches of commits. `state` collects what the
 * bench needs to know about the result (range files, blame touches).
 */
function* stream(state) {
  const rand = random(0x61742e67);
  const revs = new Uint32Array(PLAIN_FILES * PLAIN_LINES);
  const blame = Array.from({ length: BLAME_LINES }, (_, i) => `engine line ${i + 1}: initial`);
  // Range files: a fixed shuffle of the plain files, 100 per range commit, never repeated.
  const order = Array.from({ length: PLAIN_FILES }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rand(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  state.rangeFiles = order.slice(0, RANGE_COMMITS * RANGE_FILES_PER_COMMIT).map(plainPath).sort();
  let out = '';
  for (let n = 1; n <= COMMITS; n++) {
    const author = AUTHORS[rand(AUTHORS.length)];
    const email = `${author.split(' ')[0].toLowerCase()}@example.com`;
    const when = `${START_TIME + n * STEP_SECONDS} +0000`;
    const changes = [];
    let subject;
    if (n === 1) {
      for (let id = 0; id < PLAIN_FILES; id++) changes.push(`M 100644 inline ${plainPath(id)}\n${data(plainContent(id, revs))}`);
      subject = 'Initial import';
    } else if (n >= RANGE_FIRST && n < RANGE_FIRST + RANGE_COMMITS) {
      const part = n - RANGE_FIRST;
      for (const id of order.slice(part * RANGE_FILES_PER_COMMIT, (part + 1) * RANGE_FILES_PER_COMMIT)) {
        revs[id * PLAIN_LINES + 2] = n;
        revs[id * PLAIN_LINES + 7] = n;
        changes.push(`M 100644 inline ${plainPath(id)}\n${data(plainContent(id, revs))}`);
      }
      subject = `Migrate batch ${part + 1} of ${RANGE_COMMITS} to the new format`;
    } else {
      const count = 1 + rand(2);
      const touched = [];
      for (let k = 0; k < count; k++) {
        const id = rand(PLAIN_FILES);
        revs[id * PLAIN_LINES + rand(PLAIN_LINES)] = n;
        touched.push(id);
        changes.push(`M 100644 inline ${plainPath(id)}\n${data(plainContent(id, revs))}`);
      }
      subject = `${VERBS[rand(VERBS.length)]} the ${AREAS[rand(AREAS.length)]} (f${touched.join(', f')})`;
    }
    if (n === BLAME_ADDED_AT || (n > BLAME_ADDED_AT && n % BLAME_EVERY === 0)) {
      if (n > BLAME_ADDED_AT) for (let k = 1 + rand(3); k > 0; k--) blame[rand(BLAME_LINES)] = `engine line: tuned in commit ${n}`;
      changes.push(`M 100644 inline ${BLAME_PATH}\n${data(blameContent(blame))}`);
      state.blameTouches++;
    }
    if (n === LARGE_ADDED_AT) changes.push(`M 100644 inline ${LARGE_PATH}\n${data(largeContent(1))}`);
    if (n === LARGE_OLD_AT) changes.push(`M 100644 inline ${LARGE_PATH}\n${data(largeContent(2))}`);
    if (n === LARGE_LATER_AT) changes.push(`M 100644 inline ${LARGE_PATH}\n${data(largeContent(3))}`);
    const body = n % 7 === 0 ? `\n\nCommit ${n} of the generated history.\nReviewed-by: ${AUTHORS[(n * 5) % AUTHORS.length]}\n` : '\n';
    out += `commit refs/heads/main\nmark :${n}\nauthor ${author} <${email}> ${when}\ncommitter ${author} <${email}> ${when}\n${data(subject + body)}${changes.join('')}\n`;
    if (n === LARGE_OLD_AT) out += `reset refs/tags/bench/large-old\nfrom :${n}\n\n`;
    if (n === RANGE_FIRST - 1) out += `reset refs/tags/bench/range-from\nfrom :${n}\n\n`;
    if (n === RANGE_FIRST + RANGE_COMMITS - 1) out += `reset refs/tags/bench/range-to\nfrom :${n}\n\n`;
    if (n % BATCH === 0 || n === COMMITS || out.length > 8 * 1024 * 1024) {
      yield { text: out, commits: n };
      out = '';
    }
  }
}

function git(repo, args) {
  const result = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: rawGitEnv() });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr.trim().slice(0, 500)}`);
  return result.stdout;
}

async function fastImport(repo, state) {
  const child = spawn('git', ['-C', repo, 'fast-import', '--quiet', '--done'], { stdio: ['pipe', 'ignore', 'pipe'], env: rawGitEnv() });
  track(child.pid);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      untrack(child.pid);
      resolve(code);
    });
  });
  const started = performance.now();
  let reported = 0;
  for (const { text, commits } of stream(state)) {
    if (!child.stdin.write(text)) await new Promise((resolve) => child.stdin.once('drain', resolve));
    if (commits - reported >= PROGRESS_EVERY || commits === COMMITS) {
      reported = commits;
      status(`  fast-import: ${commits.toLocaleString('en-US')} / ${COMMITS.toLocaleString('en-US')} commits streamed (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
  }
  child.stdin.end('done\n');
  const code = await exited;
  endStatus();
  if (code !== 0) throw new Error(`git fast-import exited with ${code}: ${stderr.trim()}`);
}

function describe(repo, state) {
  const rev = (name) => git(repo, ['rev-parse', '--verify', `${name}^{commit}`]).trim();
  return {
    generator: GENERATOR_VERSION,
    gitVersion: git(repo, ['--version']).trim(),
    commits: COMMITS,
    files: Number(git(repo, ['ls-tree', '-r', '--name-only', 'HEAD']).split('\n').filter(Boolean).length),
    head: rev('HEAD'),
    large: { path: LARGE_PATH, lines: LARGE_LINES, rev: rev('refs/tags/bench/large-old'), version: 2, bytes: Buffer.byteLength(largeContent(2)) },
    blame: { path: BLAME_PATH, lines: BLAME_LINES, touches: state.blameTouches },
    range: { from: rev('refs/tags/bench/range-from'), to: rev('refs/tags/bench/range-to'), files: state.rangeFiles },
  };
}

/**
 * Returns the repository under `root` (bench/.work/git), generating it first when it is missing,
 * half-written or from another generator version.
 */
export async function prepareRepo(root) {
  const paths = repoPaths(root);
  if (existsSync(paths.stamp)) {
    const stamp = JSON.parse(readFileSync(paths.stamp, 'utf8'));
    if (stamp.generator === GENERATOR_VERSION) {
      process.stderr.write(`Using the cached repository in ${paths.repo} (generator v${GENERATOR_VERSION})\n`);
      return { ...stamp, repo: paths.repo };
    }
    process.stderr.write(`The cached repository is from generator v${stamp.generator}; regenerating\n`);
  }
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  process.stderr.write(`Generating the git bench repository (${COMMITS.toLocaleString('en-US')} commits, ${FILES.toLocaleString('en-US')} files) in ${paths.repo}\n`);
  const building = `${paths.repo}.partial`;
  rmSync(building, { recursive: true, force: true });
  rmSync(paths.repo, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  git(building, ['init', '-q', '-b', 'main']);
  git(building, ['config', 'gc.auto', '0']);
  const state = { blameTouches: 0, rangeFiles: [] };
  await fastImport(building, state);
  status(`  commit-graph (as \`git gc\` would write it) ... ${elapsed()}`);
  git(building, ['commit-graph', 'write', '--reachable']);
  endStatus();
  status(`  checking out ${FILES.toLocaleString('en-US')} files ... ${elapsed()}`);
  git(building, ['reset', '-q', '--hard', 'main']);
  endStatus();
  const info = describe(building, state);
  if (info.files !== FILES) throw new Error(`generated ${info.files} files, expected ${FILES}`);
  writeFileSync(join(building, '.git', 'bench-generator.json'), `${JSON.stringify(info, null, 2)}\n`);
  renameSync(building, paths.repo);
  process.stderr.write(`  done in ${elapsed()}: HEAD ${info.head.slice(0, 12)}\n`);
  return { ...info, repo: paths.repo };
}
