// Makes a fresh clone usable with nothing but Node.js and npm: finds or fetches pnpm, installs
// from the lockfile when node_modules is missing or stale, rebuilds better-sqlite3 when its
// binding was built for another Node (after switching Node versions), and builds when a source is
// newer than its build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeGypEnv } from './node-headers.mjs';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '12.4.2';
/** Written after a successful `pnpm run build`, which also type-checks the tests (tsconfig.test.json emits nothing). */
const BUILD_STAMP = join(repo, 'node_modules', '.cache', 'bulkhead', 'build.stamp');

export function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8', shell: false });
  if (probe.status === 0) return ['pnpm'];
  return ['npx', '--yes', `pnpm@${PNPM_VERSION}`];
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: repo, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    process.stderr.write(`\n${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
}

/** The packages tsc builds: shared and every server, each with src/ and dist/. */
function builtPackages() {
  const servers = readdirSync(join(repo, 'servers'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(repo, 'servers', entry.name, 'tsconfig.json')))
    .map((entry) => join(repo, 'servers', entry.name));
  return [join(repo, 'shared'), ...servers];
}

/**
 * The newest file under `path` (or `path` itself; folders count, as a deletion changes them):
 * `{ ms, path }`, ms 0 when missing. Symlinks are not followed and node_modules is skipped.
 */
function newest(path) {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return { ms: 0, path };
  }
  let best = { ms: stat.mtimeMs, path };
  if (!stat.isDirectory()) return best;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    const found = newest(join(path, entry));
    if (found.ms > best.ms) best = found;
  }
  return best;
}

function later(a, b) {
  return b.ms > a.ms ? b : a;
}

/**
 * Why a build is needed, or undefined when every package's dist is newer than everything it is
 * built from (its src/, its tsconfig.json and package.json, the root's tsconfig files and
 * package.json). With `tests`, also when a test file changed since the last `pnpm run build`, so
 * `npm test` still type-checks changed tests. tsc -b touches dist/.tsbuildinfo on every build,
 * also when it finds a touched file unchanged.
 */
export function buildNeeded({ tests = false } = {}) {
  let source = ['tsconfig.base.json', 'tsconfig.json', 'package.json'].map((file) => newest(join(repo, file))).reduce(later);
  let oldestBuild = Infinity;
  for (const dir of builtPackages()) {
    const built = newest(join(dir, 'dist', '.tsbuildinfo')).ms;
    if (built === 0) return `${dir.slice(repo.length + 1)} has no build`;
    oldestBuild = Math.min(oldestBuild, built);
    for (const input of ['src', 'tsconfig.json', 'package.json']) source = later(source, newest(join(dir, input)));
  }
  const name = (path) => path.slice(repo.length + 1);
  if (source.ms > oldestBuild) return `${name(source.path)} is newer than the build`;
  if (tests) {
    const stamp = newest(BUILD_STAMP).ms;
    if (stamp === 0) return 'the tests were not type-checked yet';
    const testInputs = ['tsconfig.test.json', 'vitest.config.ts', 'test', ...builtPackages().map((dir) => `${name(dir)}/test`)];
    const changed = testInputs.map((input) => newest(join(repo, input))).reduce(later, source);
    if (changed.ms > stamp) return `${name(changed.path)} changed since the tests were type-checked`;
  }
  return undefined;
}

/**
 * Why better-sqlite3's binding cannot be loaded by the node at `execPath` (the ladder's storage),
 * or undefined when it opens a database. Tried in a child process, so a bad binding cannot hurt
 * this one. `kind` is 'mismatch' (built for another Node), 'missing' (never built) or 'other'.
 */
export function sqliteBindingProblem(execPath = process.execPath) {
  let entry;
  try {
    entry = createRequire(join(repo, 'servers', 'ladder', 'package.json')).resolve('better-sqlite3');
  } catch {
    return { kind: 'other', detail: 'better-sqlite3 is not installed in servers/ladder' };
  }
  const probe = spawnSync(execPath, ['-e', `new (require(${JSON.stringify(entry)}))(':memory:').close()`], { encoding: 'utf8', timeout: 30_000 });
  if (probe.status === 0) return undefined;
  const text = `${probe.stderr ?? ''}${probe.error?.message ?? ''}`;
  const versions = /NODE_MODULE_VERSION (\d+)[\s\S]*?NODE_MODULE_VERSION (\d+)/.exec(text);
  if (versions) return { kind: 'mismatch', detail: `built for NODE_MODULE_VERSION ${versions[1]}, this Node needs ${versions[2]}` };
  if (/Could not locate the bindings file/.test(text)) return { kind: 'missing', detail: 'its binding was never built' };
  if (/ERR_DLOPEN_FAILED/.test(text)) return { kind: 'mismatch', detail: text.split('\n').find((line) => line.includes('Error')) ?? 'the binding does not load' };
  return { kind: 'other', detail: text.trim().split('\n').slice(0, 3).join(' ') };
}

export function ensureInstalledAndBuilt({ quiet = false, tests = false } = {}) {
  const pnpm = pnpmCommand();
  const marker = join(repo, 'node_modules', '.modules.yaml');
  const lock = join(repo, 'pnpm-lock.yaml');
  const env = nodeGypEnv(process.env, { quiet });
  if (!existsSync(marker) || statSync(lock).mtimeMs > statSync(marker).mtimeMs) {
    if (!quiet) process.stderr.write('Installing dependencies from the lockfile…\n');
    run(pnpm[0], [...pnpm.slice(1), 'install', '--frozen-lockfile'], { env });
  }
  const sqlite = sqliteBindingProblem();
  if (sqlite && sqlite.kind !== 'other') {
    // Said even when quiet: a rebuild takes a minute or two and compiles C++.
    process.stderr.write(`better-sqlite3 does not load in Node ${process.version} (${sqlite.detail}): rebuilding it${env.npm_config_nodedir ? ` against the headers in ${env.npm_config_nodedir}` : ''}…\n`);
    run(pnpm[0], [...pnpm.slice(1), '--filter', '@bulkhead/ladder', 'rebuild', 'better-sqlite3'], { env });
    const after = sqliteBindingProblem();
    if (after) process.stderr.write(`better-sqlite3 still does not load after the rebuild (${after.detail}); every ladder tool will fail\n`);
  }
  const why = buildNeeded({ tests });
  if (!why) return pnpm;
  if (!quiet) process.stderr.write(`Building (${why})…\n`);
  const started = new Date();
  run(pnpm[0], [...pnpm.slice(1), 'run', 'build'], { env });
  mkdirSync(dirname(BUILD_STAMP), { recursive: true });
  writeFileSync(BUILD_STAMP, '');
  utimesSync(BUILD_STAMP, started, started); // a file changed during the build is newer than the stamp
  return pnpm;
}

export function nodeVersionOk() {
  const [major] = process.versions.node.split('.').map(Number);
  return major >= 20;
}

export { execFileSync };
