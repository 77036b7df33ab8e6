// Test data for the fs bench: log files of growing size and a large source tree, generated once
// under bench/.work/<set>/ and reused while their manifests still match what is on disk.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const MANIFEST_VERSION = 1;
const MiB = 1024 * 1024;
const CHUNK_BYTES = 4 * MiB;
/** A regex the agent would plausibly search for; only the generated needles match it. */
export const NEEDLE_PATTERN = 'BENCH_NEEDLE_[0-9]+';
/** One file in this many holds the needle. */
const NEEDLE_EVERY = 47;

/** Rewrites one status line on a terminal; elsewhere (CI logs, pipes) prints one line each. */
function status(text) {
  process.stderr.write(process.stderr.isTTY ? `\r${text}` : `${text}\n`);
}

function endStatus() {
  if (process.stderr.isTTY) process.stderr.write('\n');
}

/** xorshift32: fast, deterministic, good enough for varied text. */
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

function pick(rand, list) {
  return list[rand(list.length)];
}

function hex(rand, digits) {
  let out = '';
  while (out.length < digits) out += rand(0x10000).toString(16).padStart(4, '0');
  return out.slice(0, digits);
}

const LEVELS = ['INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'DEBUG', 'DEBUG', 'WARN', 'ERROR'];
const SERVICES = ['api', 'worker', 'billing', 'auth', 'search', 'gateway'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const ROUTES = ['/api/v1/orders', '/api/v1/users', '/api/v1/cart', '/api/v2/search', '/api/v1/invoices', '/api/v1/sessions'];
const STATUSES = [200, 200, 200, 200, 201, 204, 304, 400, 404, 500];
const TABLES = ['orders', 'order_items', 'users', 'invoices', 'audit_events'];
const PROVIDERS = ['stripe', 'adyen', 'paypal', 'mailgun', 's3'];

function logMessage(rand, level) {
  switch (level) {
    case 'DEBUG':
      return `cache ${rand(3) ? 'hit' : 'miss'} key=session:${hex(rand, 8)} ttl=${rand(3600)}s shard=${rand(16)}`;
    case 'WARN':
      return `slow query on ${pick(rand, TABLES)} took ${500 + rand(5000)}ms rows=${rand(100000)} plan=seq_scan`;
    case 'ERROR':
      return `upstream ${pick(rand, PROVIDERS)} timeout after ${1 + rand(3)}000ms order=o${rand(1_000_000)} attempt=${1 + rand(5)}/5`;
    default:
      return `${pick(rand, METHODS)} ${pick(rand, ROUTES)}/${rand(100000)} -> ${pick(rand, STATUSES)} in ${1 + rand(900)}ms user=u${rand(50000)}`;
  }
}

/** Log lines end in `seq=<line number>` so the bench can check which line a tool returned. */
function logChunk(rand, state) {
  let text = '';
  while (text.length < CHUNK_BYTES) {
    state.time += rand(40);
    state.seq++;
    const level = pick(rand, LEVELS);
    text += `${new Date(state.time).toISOString()} ${level.padEnd(5)} ${pick(rand, SERVICES)}-${rand(8)} [req ${hex(rand, 12)}] ${logMessage(rand, level)} seq=${state.seq}\n`;
  }
  return Buffer.from(text);
}

function countNewlines(buffer) {
  let count = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) count++;
  return count;
}

function lastLine(path) {
  const { size } = statSync(path);
  const length = Math.min(size, 64 * 1024);
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').replace(/\n$/, '').split('\n').at(-1);
}

/**
 * Writes all log files in one pass from one generator, so each smaller file is a line-aligned
 * prefix of the larger ones: line N is the same line in every file.
 */
function generateLogs(dir, sizesMiB) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rand = random(0x5eed);
  const state = { time: Date.UTC(2026, 2, 14, 6, 0, 0), seq: 0 };
  const files = sizesMiB.map((mib) => ({ name: `log-${mib}m.log`, target: mib * MiB, bytes: 0, lines: 0, fd: -1, open: true }));
  for (const file of files) file.fd = openSync(join(dir, file.name), 'w');
  const largest = files.at(-1);
  const step = largest.target / 16;
  let nextReport = 0;
  try {
    while (files.some((file) => file.open)) {
      const chunk = logChunk(rand, state);
      for (const file of files.filter((f) => f.open)) {
        const room = file.target - file.bytes;
        const part = chunk.length <= room ? chunk : chunk.subarray(0, chunk.lastIndexOf(10, room - 1) + 1);
        writeSync(file.fd, part);
        file.bytes += part.length;
        file.lines += countNewlines(part);
        if (part.length < chunk.length) file.open = false;
      }
      if (largest.bytes >= nextReport || !largest.open) {
        status(`  logs: ${Math.round(largest.bytes / MiB)} / ${largest.target / MiB} MiB`);
        nextReport += step;
      }
    }
  } finally {
    for (const file of files) closeSync(file.fd);
  }
  endStatus();
  return files.map(({ name, target, bytes, lines }) => ({ name, target, bytes, lines, lastLine: lastLine(join(dir, name)) }));
}

const TS_TEMPLATE = (k, needle) => `import { helper${k % 97} } from '../util/helper${k % 97}';
import type { Context } from '../context';

export interface Record${k} {
  id: string;
  createdAt: Date;
  tags: string[];
}

/** Keeps the records that carry more than ${k % 7} tags. ${needle}*/
export function process${k}(input: Record${k}[], ctx: Context): number {
  ctx.log.debug('process${k}', { count: input.length });
  return input.filter((r) => r.tags.length > ${k % 7}).map(helper${k % 97}).length;
}
`;

const JS_TEMPLATE = (k, needle) => `'use strict';
// ${needle || `module ${k}`}
const { format } = require('./format${k % 31}');

module.exports = function render${k}(items) {
  return items.map((item, i) => format(item, i + ${k % 13})).join('\\n');
};
`;

const MD_TEMPLATE = (k, needle) => `# Module ${k}

This module turns incoming records into report rows. It is called from the nightly job
and from the /reports endpoint.

## Notes

- Batch size: ${100 + (k % 400)}
- Owner: team-${k % 12}
${needle ? `- Tracking: ${needle}\n` : ''}`;

const JSON_TEMPLATE = (k, needle) =>
  `${JSON.stringify({ name: `@bench/module-${k}`, version: `1.${k % 20}.${k % 7}`, private: true, description: needle || `module ${k}`, dependencies: { lodash: '^4.17.21' } }, null, 2)}\n`;

/** Extensions by file index within a folder: 40% ts, 25% js, 20% md, 15% json. */
const KINDS = [...Array(8).fill(['ts', TS_TEMPLATE]), ...Array(5).fill(['js', JS_TEMPLATE]), ...Array(4).fill(['md', MD_TEMPLATE]), ...Array(3).fill(['json', JSON_TEMPLATE])];

function folderOf(d) {
  return join(`pkg-${Math.floor(d / 100)}`, `mod-${Math.floor(d / 10) % 10}`, `dir-${d % 10}`);
}

function generateTree(dir, dirs, filesPerDir) {
  rmSync(dir, { recursive: true, force: true });
  const counts = { dirs, filesPerDir, files: 0, tsFiles: 0, needleFiles: 0, needleLines: 0 };
  for (let d = 0; d < dirs; d++) {
    const folder = join(dir, folderOf(d));
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < filesPerDir; i++) {
      const k = d * filesPerDir + i;
      const [ext, template] = KINDS[i % KINDS.length];
      const needle = k % NEEDLE_EVERY === 7 ? `BENCH_NEEDLE_${k}` : '';
      writeFileSync(join(folder, `file-${i}.${ext}`), template(k, needle));
      counts.files++;
      if (ext === 'ts') counts.tsFiles++;
      if (needle) {
        counts.needleFiles++;
        counts.needleLines++;
      }
    }
    if ((d + 1) % 100 === 0 || d + 1 === dirs) status(`  tree: ${counts.files} / ${dirs * filesPerDir} files`);
  }
  endStatus();
  return counts;
}

function countTreeFiles(dir, dirs) {
  let files = 0;
  for (let d = 0; d < dirs; d++) {
    try {
      files += readdirSync(join(dir, folderOf(d))).length;
    } catch {
      return -1;
    }
  }
  return files;
}

function readManifest(path) {
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8'));
    return manifest.version === MANIFEST_VERSION ? manifest : undefined;
  } catch {
    return undefined;
  }
}

function logsUsable(manifest, dir, sizesMiB) {
  if (!manifest || manifest.logs.length !== sizesMiB.length) return false;
  return manifest.logs.every((log, i) => log.target === sizesMiB[i] * MiB && existsSync(join(dir, log.name)) && statSync(join(dir, log.name)).size === log.bytes);
}

function treeUsable(manifest, dir, dirs, filesPerDir) {
  return manifest?.dirs === dirs && manifest.filesPerDir === filesPerDir && countTreeFiles(dir, dirs) === manifest.files;
}

/** Reads a whole file so that a case starts with it in the page cache, whatever happened before. */
export function readThrough(path) {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const fd = openSync(path, 'r');
  try {
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd);
  }
}

/** Returns the data set, generating whatever part is missing or does not match its manifest. */
export function prepareData(setDir, { logSizesMiB, treeDirs, filesPerDir }) {
  const logsDir = join(setDir, 'logs');
  const treeDir = join(setDir, 'tree');
  const logsManifest = join(setDir, 'logs.json');
  const treeManifest = join(setDir, 'tree.json');
  mkdirSync(setDir, { recursive: true });

  let generated = false;
  let logs = readManifest(logsManifest);
  if (!logsUsable(logs, logsDir, logSizesMiB)) {
    generated = true;
    process.stderr.write(`Generating ${logSizesMiB.join(' + ')} MiB of logs in ${logsDir} (once; later runs reuse them)\n`);
    logs = { version: MANIFEST_VERSION, logs: generateLogs(logsDir, logSizesMiB) };
    writeFileSync(logsManifest, `${JSON.stringify(logs, null, 2)}\n`);
  }
  let tree = readManifest(treeManifest);
  if (!treeUsable(tree, treeDir, treeDirs, filesPerDir)) {
    generated = true;
    process.stderr.write(`Generating a ${treeDirs * filesPerDir}-file tree in ${treeDir} (once; later runs reuse it)\n`);
    tree = { version: MANIFEST_VERSION, ...generateTree(treeDir, treeDirs, filesPerDir) };
    writeFileSync(treeManifest, `${JSON.stringify(tree, null, 2)}\n`);
  }
  // Gigabytes of dirty pages flushed in the background would slow the first cases down.
  if (generated) spawnSync('sync');
  return {
    root: setDir,
    logs: logs.logs.map((log) => ({ ...log, relPath: join('logs', log.name), absPath: join(logsDir, log.name) })),
    tree: { ...tree, relPath: 'tree', absPath: treeDir },
  };
}
