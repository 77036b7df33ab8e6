// `pnpm bench fs`: bulkhead-fs against @modelcontextprotocol/server-filesystem (and, for content
// search, which the peer lacks, against raw rg) on a large log file and a large source tree.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rgPath } from '@vscode/ripgrep';
import { NEEDLE_PATTERN, prepareData, readThrough } from './lib/fs-data.mjs';
import { Checker, formatMs, measureCold, measureProcess, measureWarm, SLOW_MS } from './lib/measure.mjs';
import { CALL_TIMEOUT_MS, startServer } from './lib/mcp.mjs';
import { stopChildrenOnExit } from './lib/processes.mjs';
import { markdownTable, ratio } from './lib/report.mjs';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const WORK = join(BENCH, '.work');
const OURS_CLI = join(REPO, 'servers', 'fs', 'dist', 'cli.js');
const PEER_DIR = join(BENCH, 'node_modules', '@modelcontextprotocol', 'server-filesystem');
const PEER_BIN = join(PEER_DIR, 'dist', 'index.js');

const SETS = {
  full: { name: 'full', logSizesMiB: [256, 512, 1024], treeDirs: 1000, filesPerDir: 100, runs: 5 },
  quick: { name: 'quick', logSizesMiB: [40, 52, 64], treeDirs: 100, filesPerDir: 100, runs: 3 },
};
const TAIL_LINES = 100;
const WINDOW_LINES = 100;
const GLOB = '**/*.ts';
/** Medians across file sizes count as flat when max ≤ FLAT_RATIO × min + FLAT_SLACK_MS (ms-scale noise). */
const FLAT_RATIO = 1.5;
const FLAT_SLACK_MS = 2;

const USAGE = `usage: pnpm bench fs [--runs N] [--quick]

  --runs N   timed calls per case after one warmup call (default 5; 3 with --quick)
  --quick    small data (40-64 MiB logs, 10,000 files) for a fast check; results go to bench/.work/
`;

function parseOptions(argv) {
  const values = benchFlags(argv, { runs: { type: 'string' }, quick: { type: 'boolean', default: false } }, USAGE);
  const set = values.quick ? SETS.quick : SETS.full;
  const runs = positiveInteger(values.runs, set.runs, '--runs');
  return { set, runs, command: ['pnpm bench fs', ...argv].join(' ') };
}

function newestMtime(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
}

/** The bench runs the built server; measuring an older build than the sources would mislead. */
function checkBuild() {
  try {
    statSync(OURS_CLI);
  } catch {
    process.stderr.write(`${relative(REPO, OURS_CLI)} is missing: run \`pnpm build\` first\n`);
    process.exit(2);
  }
  // tsc -b leaves unchanged outputs alone but rewrites .tsbuildinfo on every build that did something.
  const stale = ['servers/fs', 'shared'].filter((pkg) => newestMtime(join(REPO, pkg, 'src')) > statSync(join(REPO, pkg, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0);
  if (stale.length > 0) process.stderr.write(`warning: ${stale.join(' and ')} sources are newer than their last build; run \`pnpm build\` to bench the current code\n`);
  return stale;
}

function starters(data) {
  const controlDir = join(WORK, 'control');
  mkdirSync(controlDir, { recursive: true });
  return {
    ours: () => startServer({ command: process.execPath, args: [OURS_CLI, '--root', data.root, '--config', controlDir], requiredTools: ['read_file', 'glob_files', 'grep'] }),
    peer: () => startServer({ command: process.execPath, args: [PEER_BIN, data.root], requiredTools: ['read_text_file', 'search_files'] }),
  };
}

// ── result parsing and checks ───────────────────────────────────────────────────────────────

/** read_file output: `   123\ttext` lines followed by a bracketed footer. */
function numberedLines(text) {
  return text
    .split('\n')
    .map((line) => /^\s*(-?\d+)\t(.*)$/.exec(line))
    .filter(Boolean)
    .map((match) => ({ number: Number(match[1]), text: match[2] }));
}

function isLine(text, seq) {
  return text?.endsWith(` seq=${seq}`) ?? false;
}

function tailCheck(lines, log, expectedCount) {
  const ok = (expectedCount === undefined || lines.length === expectedCount) && lines.at(-1) === log.lastLine;
  return { ok, detail: `${lines.length} lines, last line ${ok ? 'matches the file' : `differs: "${lines.at(-1)?.slice(-30)}"`}` };
}

function windowCheck(lines, first) {
  const ok = lines.length === WINDOW_LINES && isLine(lines[0], first) && isLine(lines.at(-1), first + WINDOW_LINES - 1);
  return { ok, detail: ok ? `lines ${first}-${first + WINDOW_LINES - 1} correct` : `got ${lines.length} lines starting "${lines[0]?.slice(-20)}"` };
}

/** Paths a grep/glob reply lists plus the total its paging note reports. */
function listing(text, totalPattern) {
  const lines = text.split('\n').filter((line) => line.length > 0);
  const paths = lines.filter((line) => !line.startsWith('['));
  const note = lines.map((line) => totalPattern.exec(line)).find(Boolean);
  return { paths, note };
}

function countCheck(count, expected, what) {
  const found = `${count.toLocaleString('en-US')} ${what}`;
  return { ok: count === expected, detail: count === expected ? found : `${found}, expected ${expected.toLocaleString('en-US')}` };
}

// ── cases ───────────────────────────────────────────────────────────────────────────────────

function progress(label, ours, peer, peerName = 'peer') {
  const show = (m) => (m.error ? m.error : formatMs(m.median));
  process.stderr.write(`  ${label}: bulkhead ${show(ours)}, ${peerName} ${show(peer)}\n`);
}

function sizeLabel(log) {
  return log.target >= 1024 ** 3 ? `${log.target / 1024 ** 3} GiB` : `${log.target / 1024 ** 2} MiB`;
}

async function tailCase(ctx, log) {
  const label = `(a) last ${TAIL_LINES} lines of the ${sizeLabel(log)} log`;
  readThrough(log.absPath);
  const ours = await measureWarm(ctx.start.ours, { name: 'read_file', args: { path: log.relPath, offset: -TAIL_LINES } }, ctx.runs, (text) =>
    ctx.checker.verify(`${label} (bulkhead)`, tailCheck(numberedLines(text).map((line) => line.text), log, TAIL_LINES)),
  );
  // The peer's count is reported, not enforced: its tail counts the final newline as a line.
  readThrough(log.absPath);
  const peer = await measureWarm(ctx.start.peer, { name: 'read_text_file', args: { path: log.absPath, tail: TAIL_LINES } }, ctx.runs, (text) =>
    ctx.checker.verify(`${label} (peer)`, tailCheck(text.replace(/\n$/, '').split('\n'), log)),
  );
  progress(label, ours, peer);
  return { label, ours, peer, notes: `bulkhead read_file offset=-${TAIL_LINES}: ${ours.detail}; peer read_text_file tail=${TAIL_LINES}: ${peer.detail}` };
}

function isMiddle({ line, lines }) {
  return line === Math.floor(lines / 2);
}

/** Same line in every file (flat as the file grows?), then the middle of each larger file. */
function windows(logs) {
  const fixed = Math.floor(logs[0].lines / 2);
  return [...logs.map((log) => ({ log, line: fixed })), ...logs.slice(1).map((log) => ({ log, line: Math.floor(log.lines / 2) }))];
}

async function windowCases(ctx, { log, line }) {
  const base = `(b) ${WINDOW_LINES} lines at line ${line.toLocaleString('en-US')} of the ${sizeLabel(log)} log${isMiddle({ line, lines: log.lines }) ? ' (middle)' : ''}`;
  const ourRequest = { name: 'read_file', args: { path: log.relPath, offset: line, limit: WINDOW_LINES } };
  const ourCheck = (label) => (text) => ctx.checker.verify(`${label} (bulkhead)`, windowCheck(numberedLines(text).map((l) => l.text), line));
  readThrough(log.absPath);
  const cold = await measureCold(ctx.start.ours, ourRequest, ctx.runs, ourCheck(`${base}, cold`));
  const warm = await measureWarm(ctx.start.ours, ourRequest, ctx.runs, ourCheck(`${base}, warm`));
  const head = line + WINDOW_LINES - 1;
  readThrough(log.absPath);
  const peer = await measureWarm(ctx.start.peer, { name: 'read_text_file', args: { path: log.absPath, head } }, ctx.runs, (text) =>
    ctx.checker.verify(`${base} (peer)`, windowCheck(text.split('\n').slice(line - 1), line)),
  );
  progress(`${base}, cold`, cold, peer);
  progress(`${base}, warm`, warm, peer);
  const peerNote = `peer: read_text_file head=${head} (it has no offset), same measurement in the cold and warm rows`;
  const window = { file: log.name, line, lines: log.lines };
  return [
    { label: `${base} — cold`, ours: cold, peer, notes: `bulkhead: a fresh process per call, no line index yet; ${peerNote}`, window: { ...window, kind: 'cold' } },
    { label: `${base} — warm`, ours: warm, peer, notes: `bulkhead: after a warmup call built the line index; ${peerNote}`, window: { ...window, kind: 'warm' } },
  ];
}

/** Checks one reply and remembers the paths it lists, for the cross-check between both sides. */
function listingVerifier(ctx, label, parse) {
  const verifier = (text) => {
    const { paths, result } = parse(text);
    verifier.paths = paths;
    return ctx.checker.verify(label, result);
  };
  verifier.paths = [];
  return verifier;
}

function crossCheck(ctx, label, ours, theirs, toTheirs) {
  if (ours.paths.length === 0 || theirs.paths.length === 0) return;
  const known = new Set(theirs.paths);
  const foreign = ours.paths.filter((path) => !known.has(toTheirs(path)));
  if (foreign.length > 0) ctx.checker.verify(`${label} (cross-check)`, { ok: false, detail: `${foreign.length} bulkhead paths missing on the other side, e.g. ${foreign[0]}` });
}

async function globCase(ctx, tree) {
  const label = `(c) glob ${GLOB} in the ${tree.files.toLocaleString('en-US')}-file tree`;
  const ourVerifier = listingVerifier(ctx, `${label} (bulkhead)`, (text) => {
    const { paths, note } = listing(text, /^\[(\d+) more files matched/);
    return { paths, result: countCheck(paths.length + Number(note?.[1] ?? 0), tree.tsFiles, `files (${paths.length} listed, newest first)`) };
  });
  const peerVerifier = listingVerifier(ctx, `${label} (peer)`, (text) => {
    const paths = text.split('\n').filter((line) => line.endsWith('.ts'));
    return { paths: paths.map((path) => relative(ctx.data.root, path)), result: countCheck(paths.length, tree.tsFiles, 'files (all listed)') };
  });
  const ours = await measureWarm(ctx.start.ours, { name: 'glob_files', args: { pattern: GLOB, path: tree.relPath } }, ctx.runs, ourVerifier);
  const peer = await measureWarm(ctx.start.peer, { name: 'search_files', args: { path: tree.absPath, pattern: GLOB } }, ctx.runs, peerVerifier);
  crossCheck(ctx, label, ourVerifier, peerVerifier, (path) => path);
  progress(label, ours, peer);
  return { label, ours, peer, notes: `bulkhead glob_files "${GLOB}": ${ours.detail}; peer search_files "${GLOB}": ${peer.detail}` };
}

async function grepCase(ctx, tree, { mode, rgFlag, expected, what }) {
  const label = `(d) grep ${mode} /${NEEDLE_PATTERN}/ in the ${tree.files.toLocaleString('en-US')}-file tree`;
  const rgArgs = ['--no-config', rgFlag, NEEDLE_PATTERN];
  const ourVerifier = listingVerifier(ctx, `${label} (bulkhead)`, (text) => {
    const { paths, note } = listing(text, /^\[showing \d+-\d+ of (\d+)\+? result lines/);
    return { paths: paths.map((line) => line.split(':')[0]), result: countCheck(note ? Number(note[1]) : paths.length, expected, `${what} (${paths.length} shown, sorted by path)`) };
  });
  const rgVerifier = listingVerifier(ctx, `${label} (rg)`, (text) => {
    const lines = text.split('\n').filter(Boolean);
    return { paths: lines.map((line) => line.split(':')[0]), result: countCheck(lines.length, expected, what) };
  });
  const ours = await measureWarm(ctx.start.ours, { name: 'grep', args: { pattern: NEEDLE_PATTERN, path: tree.relPath, output_mode: mode } }, ctx.runs, ourVerifier);
  const rg = await measureProcess(rgPath, rgArgs, tree.absPath, ctx.runs, rgVerifier);
  crossCheck(ctx, label, ourVerifier, rgVerifier, (path) => relative(tree.relPath, path));
  progress(label, ours, rg, 'rg');
  return {
    label,
    ours,
    peer: rg,
    peerName: 'rg',
    notes: `peer column: raw \`rg ${rgArgs.join(' ')}\` in the tree (spawn to exit, all output read; the peer server has no content search); bulkhead: ${ours.detail}; rg: ${rg.detail}`,
  };
}

// ── targets and output ──────────────────────────────────────────────────────────────────────

function spread(rows) {
  const medians = rows.map((row) => row.ours.median);
  if (medians.some((m) => m === undefined)) return undefined;
  return { min: Math.min(...medians), max: Math.max(...medians), ratio: Math.max(...medians) / Math.min(...medians) };
}

function beatsPeer(row) {
  if (row.ours.error) return false;
  return row.peer.error !== undefined || ratio(row) > 1;
}

/** "timeout (120 s) ×2; 3.10 s ×1": the peer's result per window, without the time to each failure. */
function peerOutcomes(windowRows) {
  const counts = new Map();
  for (const peer of new Set(windowRows.map((row) => row.peer))) {
    const outcome = peer.error?.replace(/ after [^)]*$/, '') ?? formatMs(peer.median);
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }
  return [...counts].map(([outcome, n]) => `${outcome} ×${n}`).join('; ');
}

function targets(rows) {
  const tail = rows.filter((row) => row.label.startsWith('(a)'));
  const windowRows = rows.filter((row) => row.window);
  const fixedLine = windowRows[0].window.line;
  const flat = (kind, pick) => spread(windowRows.filter((row) => row.window.kind === kind && pick(row.window)));
  const atFixed = (w) => w.line === fixedLine;
  const flatness = [
    ['same line, cold', flat('cold', atFixed)],
    ['same line, warm', flat('warm', atFixed)],
    ['middle, cold', flat('cold', isMiddle)],
    ['middle, warm', flat('warm', isMiddle)],
  ];
  const glob = rows.filter((row) => row.label.startsWith('(c)'));
  const grep = rows.filter((row) => row.label.startsWith('(d)'));
  const verdict = (ok) => (ok ? '**met**' : '**not met**');
  const describeFlat = ([name, range]) => (range ? `${name} ${formatMs(range.min)}–${formatMs(range.max)} (${range.ratio.toFixed(2)}×)` : `${name} n/a`);
  const flatOk = (name) => {
    const range = flatness.find(([n]) => n === name)[1];
    return range !== undefined && range.max <= FLAT_RATIO * range.min + FLAT_SLACK_MS;
  };
  return [
    `- (a) faster than the peer: ${verdict(tail.every(beatsPeer))} (${tail.map((row) => `${ratio(row)?.toFixed(2) ?? 'n/a'}×`).join(', ')})`,
    `- (b) faster than the peer: ${verdict(windowRows.every(beatsPeer))} (peer: ${peerOutcomes(windowRows)})`,
    `- (b) flat as the file grows (bulkhead medians across file sizes within max ≤ ${FLAT_RATIO} × min + ${FLAT_SLACK_MS} ms): same line offset ${verdict(flatOk('same line, cold') && flatOk('same line, warm'))}, middle of the file warm ${verdict(flatOk('middle, warm'))}, middle cold ${verdict(flatOk('middle, cold'))} — ${flatness.map(describeFlat).join('; ')}`,
    `- (c) faster than the peer: ${verdict(glob.every(beatsPeer))} (${glob.map((row) => `${ratio(row)?.toFixed(2) ?? 'n/a'}×`).join(', ')})`,
    `- (d) within 1.3× of raw rg: ${verdict(grep.every((row) => row.ours.median <= 1.3 * row.peer.median))} (${grep.map((row) => `${(row.ours.median / row.peer.median).toFixed(2)}× rg`).join(', ')})`,
  ].join('\n');
}

function machine(stale) {
  const cpu = cpus();
  const rg = spawnSync(rgPath, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0];
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'servers/fs', 'shared'], { cwd: REPO, encoding: 'utf8' }).stdout.trim() !== '';
  const peerVersion = JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')).version;
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    ripgrep: rg,
    peer: `@modelcontextprotocol/server-filesystem ${peerVersion}`,
    commit: `${commit}${dirty ? ' (servers/fs or shared modified)' : ''}${stale.length > 0 ? `; built before the latest edits to ${stale.join(' and ')}` : ''}`,
  };
}

const FAIRNESS = `Notes on the comparison:
- Times are client-side \`tools/call\` round trips through the MCP SDK client over stdio (JSON-RPC, serialization and the pipe included), the median of the timed runs after one warmup call. † marks a case stopped after a single call slower than ${SLOW_MS / 1000} s; calls time out after ${CALL_TIMEOUT_MS / 1000} s.
- Bulkhead does more per call than the peer: it checks its permission policy and appends a hash-chained audit line for every call (both on by default).
- The OS page cache is warm: each log file is read through before each side's measurement (this VM runs DAMON proactive reclaim, which otherwise evicts idle data), and the tree is brought in by each side's warmup call. "Cold" in (b) means a fresh bulkhead process with no sparse line index yet, not a cold disk.
- (a): calls this short (a few ms) are dominated by per-call overhead and JIT warm-up, so this ratio swings from run to run. The peer's tail counts a file's final newline as a line, so tail=100 returns 99 lines; the bench reports that and checks only the last line.
- (b): the peer has no line offset. Its closest equivalent is \`read_text_file head=<last line of the window>\`, keeping the last ${WINDOW_LINES} lines client-side; it returns every line before the window, so the call fails: its reply outgrows the SDK stdio client's default 10 MiB message limit, or it has not answered within ${CALL_TIMEOUT_MS / 1000} s (the time shown is until that failure). A cold bulkhead call also pays the first-call costs of a fresh process (JIT warm-up, opening the audit log). A warm call scans from the nearest line its sparse index remembers (one every few thousand lines), so warm windows differ by where they fall between two of those, not by file size.
- (c): the peer lists every match as an absolute path in directory order; bulkhead stats every match to sort them newest first and returns the first 1000 plus a count of the rest, so the two replies differ in size.
- (d): the peer server has no content search, so the peer column is the same rg binary bulkhead uses, run directly and timed from spawn to exit with its whole output read through a pipe. Bulkhead adds \`--null\`, \`--max-columns\` and its deny-read globs, sorts by path and pages (head_limit 250); its RSS column is the server process only, not the rg child it spawns.
- Peak RSS is VmHWM of the server process, which is started fresh for each case (each cold call); for rg it comes from \`/usr/bin/time -f %M\` on one extra, untimed run.`;

function writeResults(dir, { command, runs, set, data, rows, checker, table, targetText, stale }) {
  mkdirSync(dir, { recursive: true });
  const info = machine(stale);
  const date = new Date().toISOString();
  const dataText = `Data: logs of ${data.logs.map((log) => `${sizeLabel(log)} (${log.lines.toLocaleString('en-US')} lines)`).join(', ')}; tree of ${data.tree.files.toLocaleString('en-US')} files in ${data.tree.dirs} folders (${data.tree.tsFiles.toLocaleString('en-US')} .ts, ${data.tree.needleFiles.toLocaleString('en-US')} files with the search pattern). ${runs} timed runs per case.`;
  const mismatchText = checker.mismatches.length ? `\n**Mismatches:**\n${checker.mismatches.map((m) => `- ${m}`).join('\n')}\n` : '\nAll result checks passed.\n';
  const md = `# fs benchmark\n\nCommand: \`${command}\`  \nDate: ${date}  \nMachine: ${info.cpus}, ${info.memory} RAM, ${info.os}, Node ${info.node}, ${info.ripgrep}  \nCompared with: ${info.peer}  \nBulkhead commit: ${info.commit}\n\n${dataText}\n\n${table}\n\nTargets:\n${targetText}\n${mismatchText}\n${FAIRNESS}\n`;
  writeResult(join(dir, 'fs.md'), md);
  const { absPath: _machinePath, ...tree } = data.tree;
  const json = { command, date, machine: info, set, runs, data: { logs: data.logs.map(({ name, bytes, lines }) => ({ name, bytes, lines })), tree }, rows, mismatches: checker.mismatches };
  writeResult(join(dir, 'fs.json'), `${JSON.stringify(json, null, 2)}\n`);
}

export async function main(argv) {
  const { set, runs, command } = parseOptions(argv);
  stopChildrenOnExit();
  const stale = checkBuild();
  const data = prepareData(join(WORK, set.name), set);
  const ctx = { data, runs, start: starters(data), checker: new Checker() };
  process.stderr.write(`Running the fs bench (${runs} runs per case after a warmup)\n`);
  const rows = [await tailCase(ctx, data.logs.at(-1))];
  for (const window of windows(data.logs)) rows.push(...(await windowCases(ctx, window)));
  rows.push(await globCase(ctx, data.tree));
  rows.push(await grepCase(ctx, data.tree, { mode: 'files_with_matches', rgFlag: '--files-with-matches', expected: data.tree.needleFiles, what: 'files' }));
  rows.push(await grepCase(ctx, data.tree, { mode: 'content', rgFlag: '--line-number', expected: data.tree.needleLines, what: 'matching lines' }));

  const table = markdownTable(rows);
  const targetText = targets(rows);
  const resultsDir = set === SETS.full ? join(BENCH, 'results') : join(WORK, 'results');
  writeResults(resultsDir, { command, runs, set: set.name, data, rows, checker: ctx.checker, table, targetText, stale });
  process.stdout.write(`\n${table}\n\nTargets:\n${targetText}\n\nWritten to ${relative(process.cwd(), join(resultsDir, 'fs.md'))} and fs.json\n`);
  if (ctx.checker.mismatches.length > 0) {
    process.stderr.write(`\n✗ ${ctx.checker.mismatches.length} MISMATCHES:\n${ctx.checker.mismatches.map((m) => `  - ${m}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}
