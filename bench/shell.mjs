// `pnpm bench shell`: per-command overhead of bulkhead-shell's run_shell over raw `bash -c`, without
// and with the bubblewrap sandbox, side by side with mcp-server-commands' run_command in one run, on
// 500 trivial commands; then the time to classify 10,000 commands (bench/shell-classify.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { CallError, CALL_TIMEOUT_MS, startServer } from './lib/mcp.mjs';
import { formatMs } from './lib/measure.mjs';
import { stopChildrenOnExit, track, untrack } from './lib/processes.mjs';
import { launchVariants, measureIdleJoin, measureLaunches, splitLaunch } from './lib/shell-launch.mjs';
import { checkReply, commandAt, COMMANDS, readBulkhead, readPeer, readRaw } from './lib/shell-commands.mjs';
import { run as runClassify, TARGET_PER_SECOND } from './shell-classify.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const WORK = join(BENCH, '.work', 'shell');
const ROOT = join(WORK, 'root');
const OURS_CLI = join(REPO, 'servers', 'shell', 'dist', 'cli.js');
const CLASSIFY_MODULE = join(REPO, 'servers', 'shell', 'dist', 'classify', 'classify.js');
const PEER_DIR = join(BENCH, 'node_modules', 'mcp-server-commands');
const PEER_BIN = join(PEER_DIR, 'build', 'index.js');
const TRACE_MODULE = join(BENCH, 'lib', 'shell-trace.mjs');
const TRACE_FILE = join(WORK, 'trace.jsonl');

const COMMAND_COUNT = 500;
const WARMUP = 20;
const PROFILE_CALLS = 100;
/** Runs of each launch variant (after 10 warmups) in the launch breakdown. */
const LAUNCH_ROUNDS = 100;
/** The paced pass: this many commands per side with IDLE_MS of idle before each, closer to an agent's pace. */
const PACED_COMMANDS = 40;
const PACED_WARMUP = 5;
const IDLE_MS = 200;
const IDLE_JOIN_ROUNDS = 30;
const CLASSIFY_COUNT = 10_000;
/** Targets from issue 7 (ms of overhead per command over raw bash -c). */
const TARGETS = { none: 15, bubblewrap: 30, classifyPerSecond: TARGET_PER_SECOND };

const SIDES = {
  bash: { label: 'raw `bash -c` (spawned from node)', short: 'raw bash -c' },
  sh: { label: 'raw `sh -c` (dash; reference for the peer)', short: 'raw sh -c' },
  none: { label: 'bulkhead run_shell, sandbox: none', short: 'bulkhead (no sandbox)' },
  bubblewrap: { label: 'bulkhead run_shell, sandbox: bubblewrap', short: 'bulkhead (bubblewrap)' },
  peer: { label: 'mcp-server-commands run_command', short: 'mcp-server-commands' },
};
const SIDE_KEYS = Object.keys(SIDES);

const USAGE = `usage: pnpm bench shell [--commands N] [--sides LIST] [--no-profile] [--no-classify]

  --commands N   timed commands per side after ${WARMUP} warmup commands each (default ${COMMAND_COUNT}); the
                 sides take turns command by command, the one going first rotating each time
  --sides LIST   comma-separated subset of ${SIDE_KEYS.join(',')} (default: all)
  --no-profile   skip the untimed profile pass that splits a bulkhead call into its parts
  --no-classify  skip the classification rate (${CLASSIFY_COUNT.toLocaleString('en-US')} commands)

Run \`pnpm build\` first. A full run writes bench/results/shell.{md,json}; any other run writes to
bench/.work/shell/results/.
`;

function parseOptions(argv) {
  const values = benchFlags(argv, { commands: { type: 'string' }, sides: { type: 'string' }, 'no-profile': { type: 'boolean', default: false }, 'no-classify': { type: 'boolean', default: false } }, USAGE);
  const asked = values.sides === undefined ? SIDE_KEYS : values.sides.split(',').map((key) => key.trim()).filter(Boolean);
  const unknown = asked.filter((key) => !SIDE_KEYS.includes(key));
  if (unknown.length > 0 || asked.length === 0) {
    process.stderr.write(`--sides expects a comma-separated subset of ${SIDE_KEYS.join(',')}, got ${values.sides}\n`);
    process.exit(2);
  }
  const sides = SIDE_KEYS.filter((key) => asked.includes(key));
  const count = positiveInteger(values.commands, COMMAND_COUNT, '--commands');
  const profile = !values['no-profile'];
  const classify = !values['no-classify'];
  return {
    count,
    sides,
    profile,
    classify,
    official: count === COMMAND_COUNT && sides.length === SIDE_KEYS.length && profile && classify,
    command: ['pnpm bench shell', ...argv].join(' '),
  };
}

function checkBuild() {
  for (const file of [OURS_CLI, CLASSIFY_MODULE]) {
    if (!existsSync(file)) {
      process.stderr.write(`${relative(REPO, file)} is missing: run \`pnpm build\` first\n`);
      process.exit(2);
    }
  }
  if (!existsSync(PEER_BIN)) {
    process.stderr.write(`${relative(REPO, PEER_BIN)} is missing: run \`pnpm install\` first\n`);
    process.exit(2);
  }
  const built = statSync(join(REPO, 'servers', 'shell', 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? statSync(OURS_CLI).mtimeMs;
  const newest = readdirSync(join(REPO, 'servers', 'shell', 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((latest, entry) => Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
  const stale = newest > built;
  if (stale) process.stderr.write('warning: servers/shell sources are newer than their last build; run `pnpm build` to bench the current code\n');
  return stale;
}

// ── the sides ───────────────────────────────────────────────────────────────────────────────

/** The root the commands run in (holding marker.txt) and one control folder per sandbox setting. */
function prepareFolders() {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  writeFileSync(join(ROOT, 'marker.txt'), 'marker\n');
  const root = realpathSync(ROOT);
  const control = (sandbox) => {
    const dir = join(WORK, `control-${sandbox}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'shell_policy.yaml'), `enabled: true\nsandbox: ${sandbox}\n`);
    writeFileSync(join(dir, 'permissions.yaml'), 'allow:\n  - shell\n');
    return dir;
  };
  return { root, control: { none: control('none'), bubblewrap: control('bubblewrap') } };
}

/** The environment raw processes get: what bulkhead passes its commands (PATH, HOME, LANG, LC_*, TERM=dumb). */
function rawEnvironment() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) if (['PATH', 'HOME', 'LANG'].includes(name) || name.startsWith('LC_')) env[name] = value;
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.TERM = 'dumb';
  return env;
}

/** One raw process: spawn to exit with both pipes read (what a server around it cannot avoid). */
function runRaw(argv, cwd, env) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    track(child.pid);
    const out = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => out.push(chunk));
    child.on('error', (error) => resolve({ ms: performance.now() - started, error: error.message }));
    child.on('close', (code) => {
      untrack(child.pid);
      resolve({ ms: performance.now() - started, text: Buffer.concat(out).toString('utf8'), code });
    });
  });
}

function oursArgs(root, controlDir) {
  return [OURS_CLI, '--root', root, '--config', controlDir];
}

async function startSides(sides, folders, serverArgs = oursArgs, serverCommand = process.execPath) {
  const env = rawEnvironment();
  const runners = {};
  for (const key of sides) {
    if (key === 'bash') runners.bash = { run: (spec) => runRaw(['bash', '--noprofile', '--norc', '-c', spec.command], folders.root, env).then((r) => ({ ms: r.ms, error: r.error, reply: r.error ? undefined : readRaw(r) })) };
    if (key === 'sh') runners.sh = { run: (spec) => runRaw(['/bin/sh', '-c', spec.command], folders.root, env).then((r) => ({ ms: r.ms, error: r.error, reply: r.error ? undefined : readRaw(r) })) };
    if (key === 'none' || key === 'bubblewrap') {
      const server = await startServer({ command: serverCommand, args: serverArgs(folders.root, folders.control[key]), requiredTools: ['run_shell'] });
      runners[key] = { server, run: (spec) => callServer(server, 'run_shell', { command: spec.command }, readBulkhead) };
    }
    if (key === 'peer') {
      const server = await startServer({ command: process.execPath, args: [PEER_BIN], requiredTools: ['run_command'] });
      runners.peer = { server, run: (spec) => callServer(server, 'run_command', { command: spec.command, workdir: folders.root }, readPeer) };
    }
  }
  return runners;
}

async function callServer(server, tool, args, read) {
  try {
    const { ms, text } = await server.call(tool, args);
    return { ms, reply: read(text) };
  } catch (error) {
    if (!(error instanceof CallError)) throw error;
    return { ms: error.ms, error: error.message };
  }
}

async function stopSides(runners) {
  for (const runner of Object.values(runners)) await runner.server?.close();
}

// ── measuring ───────────────────────────────────────────────────────────────────────────────

function percentile(values, p) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const median = (values) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const mean = (values) => (values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length);

/**
 * WARMUP untimed commands, then `count` timed ones; command i goes to every side back to back, the
 * side that goes first rotating by one each command. Every reply, warmups included, is checked.
 */
async function runCommands(runners, sides, count, root, { warmup = WARMUP, pauseMs = 0 } = {}) {
  const WARMUP = warmup;
  const results = Object.fromEntries(sides.map((key) => [key, { times: [], wrong: [], errors: [] }]));
  const total = WARMUP + count;
  const started = performance.now();
  let lastReport = 0;
  for (let i = 0; i < total; i++) {
    const spec = commandAt(i);
    const shift = i % sides.length;
    for (const key of [...sides.slice(shift), ...sides.slice(0, shift)]) {
      if (pauseMs > 0) await sleep(pauseMs);
      const result = results[key];
      const outcome = await runners[key].run(spec);
      if (outcome.error) {
        if (result.errors.length < 5) result.errors.push(`\`${spec.command}\`: ${outcome.error}`);
        result.errorCount = (result.errorCount ?? 0) + 1;
      } else {
        const check = checkReply(spec, root, outcome.reply);
        if (!check.ok) {
          if (result.wrong.length < 5) result.wrong.push(check.detail);
          result.wrongCount = (result.wrongCount ?? 0) + 1;
          process.stderr.write(`\n  ✗ MISMATCH ${SIDES[key].short}: ${check.detail}\n`);
        }
      }
      if (i >= WARMUP && !outcome.error) result.times.push(outcome.ms);
    }
    const now = performance.now();
    if (now - lastReport > 2000 || i === total - 1) {
      lastReport = now;
      const phase = i < WARMUP ? `warmup ${i + 1}/${WARMUP}` : `command ${i + 1 - WARMUP}/${count}`;
      process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}  ${phase} (${formatMs(now - started)})${process.stderr.isTTY ? '' : '\n'}`);
    }
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  return Object.fromEntries(
    sides.map((key) => {
      const r = results[key];
      return [key, { calls: total, timed: r.times.length, median: median(r.times), p90: percentile(r.times, 90), p99: percentile(r.times, 99), mean: mean(r.times), min: Math.min(...r.times), wrongCount: r.wrongCount ?? 0, errorCount: r.errorCount ?? 0, wrong: r.wrong, errors: r.errors, times: r.times.map((t) => Number(t.toFixed(3))) }];
    }),
  );
}

// ── profile ─────────────────────────────────────────────────────────────────────────────────

/** Per-command classification of the bench's own commands, in this process (the server does the same once per call). */
async function classifyCost(root) {
  const { CommandClassifier } = await import(pathToFileURL(CLASSIFY_MODULE).href);
  const classifier = await CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: [] });
  const tiers = {};
  for (const spec of COMMANDS) tiers[spec.command] = classifier.classify(spec.command, root).tier;
  const rounds = 200;
  const started = performance.now();
  for (let r = 0; r < rounds; r++) for (const spec of COMMANDS) classifier.classify(spec.command, root);
  return { perCommandMs: (performance.now() - started) / (rounds * COMMANDS.length), tiers };
}

/**
 * An untimed pass after the timed one: each bulkhead side again, on a server preloaded with
 * shell-trace.mjs, PROFILE_CALLS commands after the warmup; each call split into its parts.
 */
async function profileSides(sides, folders) {
  const profiles = {};
  const launches = {};
  for (const key of sides.filter((side) => side === 'none' || side === 'bubblewrap')) {
    rmSync(TRACE_FILE, { force: true });
    // The SDK's stdio transport passes the server only a few variables of ours: env(1) sets the trace file.
    const traced = (root, controlDir) => [`BULKHEAD_SHELL_TRACE=${TRACE_FILE}`, process.execPath, '--import', TRACE_MODULE, ...oursArgs(root, controlDir)];
    const runners = await startSides([key], folders, traced, 'env');
    const client = [];
    try {
      // Back to back first, then with IDLE_MS of idle before each call.
      for (let i = 0; i < WARMUP + PROFILE_CALLS + PACED_COMMANDS; i++) {
        if (i >= WARMUP + PROFILE_CALLS) await sleep(IDLE_MS);
        const outcome = await runners[key].run(commandAt(i));
        if (outcome.error) throw new Error(`profile pass, ${key}: ${outcome.error}`);
        if (i >= WARMUP) client.push(outcome.ms);
      }
    } finally {
      await stopSides(runners);
    }
    const records = readFileSync(TRACE_FILE, 'utf8').trim().split('\n').map((line) => JSON.parse(line)).slice(WARMUP);
    profiles[key] = summarizeProfile(records.slice(0, PROFILE_CALLS), client.slice(0, PROFILE_CALLS));
    profiles[`${key}-idle`] = summarizeProfile(records.slice(PROFILE_CALLS), client.slice(PROFILE_CALLS));
    const first = records[0]?.spawns[0];
    if (first) launches[key] = splitLaunch(first.file, first.args);
    for (const name of [key, `${key}-idle`]) process.stderr.write(`  profile ${profileLabel(name)}: ${formatMs(profiles[name].client.median)} a call (p90 ${formatMs(profiles[name].client.p90)}), spawn to exit ${formatMs(profiles[name].spawnToExit.median)} (p90 ${formatMs(profiles[name].spawnToExit.p90)})\n`);
  }
  rmSync(TRACE_FILE, { force: true });
  const variants = launchVariants(launches);
  process.stderr.write(`Launch breakdown: ${variants.length} process trees × ${LAUNCH_ROUNDS} runs, replayed from the bench ...\n`);
  const launchTimes = await measureLaunches(variants, {
    commandAt,
    cwd: folders.root,
    env: rawEnvironment(),
    warmup: 10,
    rounds: LAUNCH_ROUNDS,
    check: (spec, run) => checkReply(spec, folders.root, readRaw(run)).ok,
  });
  for (const row of launchTimes) process.stderr.write(`  ${row.id.padEnd(18)} ${formatMs(row.median)}${row.wrong ? `, ${row.wrong} wrong` : ''}\n`);
  process.stderr.write(`Cgroup join after ${IDLE_MS} ms idle: ${IDLE_JOIN_ROUNDS} runs with and without the cgroups ...\n`);
  const idleJoin = await measureIdleJoin(launches.none, {
    commandAt,
    cwd: folders.root,
    env: rawEnvironment(),
    idleMs: IDLE_MS,
    rounds: IDLE_JOIN_ROUNDS,
    check: (spec, run) => checkReply(spec, folders.root, readRaw(run)).ok,
  });
  for (const row of idleJoin?.rows ?? []) process.stderr.write(`  ${row.id.padEnd(18)} ${formatMs(row.median)} (p90 ${formatMs(row.p90)})\n`);
  return { profiles, launches, launchTimes, idleJoin };
}

function profileLabel(name) {
  const [key, idle] = name.split('-');
  return `${SIDES[key].short}, ${idle ? `${IDLE_MS} ms idle before each` : 'back to back'}`;
}

/** Median and p90 (nearest rank) of a segment over the traced calls. */
function spread(values) {
  return { median: median(values), p90: percentile(values, 90) };
}

function summarizeProfile(records, client) {
  const fsKinds = [...new Set(records.flatMap((r) => Object.keys(r.fs)))].sort();
  const spawnCount = Math.max(...records.map((r) => r.spawns.length));
  const firstSpawn = (r) => r.spawns[0]?.spawned ?? r.ms;
  const lastClose = (r) => Math.max(0, ...r.spawns.map((s) => s.closed ?? 0));
  const exited = (r) => r.spawns[0]?.exited ?? firstSpawn(r);
  const closed = (r) => r.spawns[0]?.closed ?? exited(r);
  const clientMs = spread(client);
  const server = spread(records.map((r) => r.ms));
  return {
    calls: records.length,
    client: clientMs,
    server,
    outside: spread(client.map((ms, i) => ms - (records[i]?.ms ?? 0))),
    spawnCount,
    files: [...new Set(records.flatMap((r) => r.spawns.map((s) => s.file.split('/').pop())))],
    beforeSpawn: spread(records.map(firstSpawn)),
    spawnSync: spread(records.map((r) => r.spawns.reduce((sum, s) => sum + s.sync, 0))),
    spawnToExit: spread(records.map((r) => exited(r) - firstSpawn(r))),
    exitToClose: spread(records.map((r) => closed(r) - exited(r))),
    afterClose: spread(records.map((r) => r.ms - Math.max(closed(r), lastClose(r)))),
    fs: Object.fromEntries(
      fsKinds.map((kind) => {
        const rows = records.map((r) => r.fs[kind]);
        return [kind, { ...spread(rows.map((row) => row?.ms ?? 0)), count: median(rows.map((row) => row?.count ?? 0)) }];
      }),
    ),
    /** The slowest calls, segment by segment, to see where a slow one loses its time. */
    slowest: records
      .map((r, i) => ({ client: client[i], server: r.ms, beforeSpawn: firstSpawn(r), spawnToExit: exited(r) - firstSpawn(r), exitToClose: closed(r) - exited(r), afterClose: r.ms - closed(r), fs: r.fs }))
      .sort((a, b) => b.client - a.client)
      .slice(0, 5),
  };
}

// ── report ──────────────────────────────────────────────────────────────────────────────────

const signedMs = (ms) => (ms === undefined ? '—' : `${ms < 0 ? '−' : '+'}${formatMs(Math.abs(ms))}`);

function verdicts(sides, summary, classify) {
  const floor = summary.bash?.median;
  const peer = summary.peer?.median;
  const lines = [];
  for (const key of ['none', 'bubblewrap']) {
    const s = summary[key];
    if (!s || floor === undefined) continue;
    const overhead = s.median - floor;
    const correct = s.wrongCount === 0 && s.errorCount === 0;
    const underTarget = overhead <= TARGETS[key];
    const fasterThanPeer = peer === undefined ? undefined : s.median < peer;
    lines.push({
      key,
      overhead,
      target: TARGETS[key],
      underTarget,
      fasterThanPeer,
      correct,
      met: correct && underTarget && fasterThanPeer !== false,
    });
  }
  const rate = classify ? { perSecond: classify.perSecond, target: TARGETS.classifyPerSecond, met: classify.met } : undefined;
  return { sides: lines, classify: rate };
}

function resultsTable(sides, summary) {
  const floor = summary.bash?.median;
  const peer = summary.peer?.median;
  const header = ['side', 'median per command', 'p90', 'mean', 'overhead over raw bash -c (median)', 'speed vs peer (peer / side, median)', 'replies correct'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 || i === header.length - 1 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const key of sides) {
    const s = summary[key];
    const overhead = key === 'bash' || floor === undefined ? '—' : signedMs(s.median - floor);
    const target = key === 'none' || key === 'bubblewrap' ? ` (target ≤ ${TARGETS[key]} ms)` : '';
    const vsPeer = key === 'peer' || peer === undefined ? '—' : `${(peer / s.median).toFixed(2)}×`;
    const correct = s.wrongCount === 0 && s.errorCount === 0 ? `${s.calls} of ${s.calls}` : `**${s.calls - s.wrongCount - s.errorCount} of ${s.calls}** (${[...s.wrong, ...s.errors].join('; ').replaceAll('|', '\\|')})`;
    lines.push(`| ${SIDES[key].label} | ${formatMs(s.median)} | ${formatMs(s.p90)} | ${formatMs(s.mean)} | ${overhead}${key === 'bash' ? '' : target} | ${vsPeer} | ${correct} |`);
  }
  return lines.join('\n');
}

function targetText(v, summary) {
  const lines = [];
  for (const s of v.sides) {
    const peerPart = s.fasterThanPeer === undefined ? '' : `; ${s.fasterThanPeer ? 'faster' : '**slower**'} than mcp-server-commands (${formatMs(summary[s.key].median)} vs ${formatMs(summary.peer.median)})`;
    lines.push(`- ${SIDES[s.key].label}: overhead ${formatMs(s.overhead)} per command (target ≤ ${s.target} ms): **${s.underTarget ? 'met' : 'not met'}**${peerPart}${s.correct ? '' : '; **some replies were wrong or failed**'} → **${s.met ? 'met' : 'not met'}**`);
  }
  if (v.classify) lines.push(`- Classification: ${v.classify.perSecond.toLocaleString('en-US')} commands/s (target ≥ ${v.classify.target.toLocaleString('en-US')}): **${v.classify.met ? 'met' : 'not met'}**`);
  return lines.join('\n');
}

function profileTable(profiles) {
  const keys = Object.keys(profiles);
  if (keys.length === 0) return '';
  const both = (x) => `${formatMs(x.median)} / ${formatMs(x.p90)}`;
  const row = (label, f) => `| ${label} | ${keys.map((key) => f(profiles[key])).join(' | ')} |`;
  const fsKinds = [...new Set(keys.flatMap((key) => Object.keys(profiles[key].fs)))].sort();
  const lines = [
    `| part of a call, median / p90 | ${keys.map((key) => `${profileLabel(key)} (${profiles[key].calls} calls)`).join(' | ')} |`,
    `| --- |${keys.map(() => ' ---: ').join('|')}|`,
    row('round trip seen by the client', (p) => both(p.client)),
    row('outside the server (pipe, JSON-RPC, SDK client)', (p) => both(p.outside)),
    row('in the server, request read to reply written', (p) => both(p.server)),
    row('… before the process is spawned (validation, gate, classification, cwd, sandbox check, cgroup set-up)', (p) => both(p.beforeSpawn)),
    row('… spawn to exit of the process tree (wrapper bash → [bwrap →] bash → command)', (p) => both(p.spawnToExit)),
    row('… … of which spawn() blocking the event loop (fork + exec of the first process)', (p) => both(p.spawnSync)),
    row('… exit to pipes closed', (p) => both(p.exitToClose)),
    row('… after the pipes closed (process/cgroup checks, cgroup removal, reply, audit)', (p) => both(p.afterClose)),
    row('processes node spawns per call', (p) => `${p.spawnCount} (${p.files.join(', ')})`),
    ...fsKinds.map((kind) => row(`sync fs: ${kind} (calls)`, (p) => (p.fs[kind] ? `${both(p.fs[kind])} (${p.fs[kind].count})` : '—'))),
  ];
  return lines.join('\n');
}

function launchTable(rows) {
  if (!rows || rows.length === 0) return '';
  const floor = rows.find((row) => row.id === 'bash')?.median;
  const lines = ['| process tree (spawned from the bench) | median | over `bash -c` alone | wrong or failed |', '| --- | ---: | ---: | ---: |'];
  for (const row of rows) lines.push(`| ${row.label} | ${formatMs(row.median)} | ${row.id === 'bash' || floor === undefined ? '—' : signedMs(row.median - floor)} | ${row.wrong} |`);
  return lines.join('\n');
}

/** What the numbers of this run say about where the time goes, and what would cut it. */
function findings({ summary, paced, profiles, launchTimes, idleJoin, classifyPer }) {
  const out = [];
  const launch = Object.fromEntries((launchTimes ?? []).map((row) => [row.id, row.median]));
  const { bash, sh, peer, none, bubblewrap } = summary;
  if (peer && bash && sh) {
    out.push(
      `- **The peer is a floor of its own.** mcp-server-commands' run_command is \`child_process.exec\` of \`/bin/sh -c\` and nothing else: no containment, no process limit, no timeout, no classification, no audit. Its median (${formatMs(peer.median)}) sits at raw \`bash -c\` (${formatMs(bash.median)}) because dash starts faster than bash (raw \`sh -c\` ${formatMs(sh.median)}): the MCP round trip costs it about ${formatMs(peer.median - sh.median)}. A server that runs bash and contains it cannot be faster; "faster than the peer" is out of reach by construction, not by a slow path.`,
    );
  }
  const b2b = profiles?.none;
  if (b2b && classifyPer) {
    out.push(
      `- **No sandbox, back to back** (profile: ${formatMs(b2b.client.median)} a call): the server's own work is small: ${formatMs(b2b.beforeSpawn.median)} before the spawn (arguments, gate, classification, of which classifying is ${formatMs(classifyPer.perCommandMs)}, cwd, cgroup folders), ${formatMs(b2b.afterClose.median)} after the pipes close (checks, cgroup removal, reply, audit line), ${formatMs(b2b.outside.median)} outside the server. The rest is the process tree: a wrapper shell (dash when no RLIMIT_NPROC is needed) that writes its pid into the command's cgroups and then execs \`bash -c\`${launch['wrapper-traced'] !== undefined ? `; replayed from the bench it costs ${formatMs(launch['wrapper-traced'] - launch.bash)} over \`bash -c\` alone, ${formatMs(launch['wrapper-bash'] - launch.bash)} with bash as the wrapper` : ''}.`,
    );
  }
  if (idleJoin && none) {
    const [join, noJoin] = idleJoin.rows;
    out.push(
      `- **The cgroup join after idle is the big cost.** With ${idleJoin.idleMs} ms of idle before each run, the server's launch takes ${formatMs(join.median)} (p90 ${formatMs(join.p90)}) against ${formatMs(noJoin.median)} for the same wrapper joining no cgroup: about ${formatMs(join.median - noJoin.median)} for the first write to a cgroup.procs. Back to back the join is nearly free. This is consistent with the kernel's cgroup migration lock (the global cgroup_threadgroup_rwsem, taken for writing on every write to cgroup.procs), which waits for an RCU grace period unless a writer came shortly before; in a side test, joining one cgroup or both cost the same. It explains the spread of the timed pass (no sandbox: median ${formatMs(none.median)}, p90 ${formatMs(none.p90)}; each bulkhead call there follows a few ms of other sides' commands) and the paced pass${paced?.none && paced?.bash ? ` (no sandbox ${formatMs(paced.none.median)}, **+${formatMs(paced.none.median - paced.bash.median)} over raw bash -c, over the 15 ms target**; bubblewrap ${formatMs(paced.bubblewrap?.median)}, +${formatMs((paced.bubblewrap?.median ?? 0) - paced.bash.median)})` : ''}. The server runs as root here and makes a pids cgroup per command (and a v2 one for cgroup.kill); without a writable pids cgroup (typically not as root) it sets RLIMIT_NPROC instead, counting the user's tasks with a /proc scan per command, which this run does not measure.`,
    );
  }
  const bw = profiles?.bubblewrap;
  if (bw && launch.bwrap !== undefined) {
    out.push(
      `- **Bubblewrap** adds ${formatMs(launch.bwrap - launch.bash)} over \`bash -c\` when spawned straight (${formatMs(launch.bwrap - launch['bwrap-share-net'])} of it the new network namespace); the server's launch puts the wrapper in front (${formatMs(launch['wrapper-bwrap'])} against ${formatMs(launch['wrapper-bash-bwrap'])} with a bash wrapper). After bwrap exits the server checks that no member of the command's group or cgroup is left (profile, back to back: "after the pipes closed" median ${formatMs(bw.afterClose.median)}, p90 ${formatMs(bw.afterClose.p90)}), polling from 0.5 ms up to 10 ms while the sandbox's init finishes exiting.`,
    );
  }
  return out.join('\n');
}

function idleJoinTable(join) {
  if (!join) return '';
  const lines = [`| process tree, ${join.idleMs} ms idle before each run | median | p90 | runs |`, '| --- | ---: | ---: | ---: |'];
  for (const row of join.rows) lines.push(`| ${row.label} | ${formatMs(row.median)} | ${formatMs(row.p90)} | ${row.runs} |`);
  if (join.wrong) lines.push(`| wrong or failed | ${join.wrong} | | |`);
  return lines.join('\n');
}

function machine(stale) {
  const cpu = cpus();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'servers/shell', 'shared'], { cwd: REPO, encoding: 'utf8' }).stdout.trim() !== '';
  const bwrap = spawnSync('bwrap', ['--version'], { encoding: 'utf8' }).stdout?.trim() || 'bwrap not found';
  const bash = spawnSync('bash', ['--version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? '';
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    load: loadavg().map((n) => n.toFixed(2)).join(' '),
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    user: process.getuid?.() === 0 ? 'root' : `uid ${process.getuid?.()}`,
    bwrap,
    bash,
    peer: `mcp-server-commands ${JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')).version}`,
    commit: `${commit}${dirty ? ' (servers/shell or shared modified)' : ''}${stale ? '; built before the latest edits to servers/shell' : ''}`,
  };
}

function methodNotes(count) {
  return `Method:
- One run, every side taking turns: ${WARMUP} warmup commands per side (checked, not timed), then ${count} timed ones; command i goes to every side back to back, the side that goes first rotating by one from command to command. Medians, p90 (nearest rank) and means over the ${count} timed commands.
- The commands: a fixed list of ${COMMANDS.length} trivial ones, round and round: ${COMMANDS.map((spec) => `\`${spec.command}\``).join(', ')}. Every reply, warmups included, is checked against the expected output (and exit code 0); a wrong or failed reply is counted and shown, so a fast wrong answer cannot win.
- Raw \`bash -c\`: \`bash --noprofile --norc -c CMD\` spawned from node for each command (child_process.spawn, stdin closed, stdout and stderr piped and read to the end, the same reduced environment bulkhead gives its commands), timed from spawn() to 'close'. It is the floor: overhead = a side's median − this median. Raw \`sh -c\` is the same with /bin/sh (dash here), which is what the peer runs.
- bulkhead-shell: the shipped build (servers/shell/dist/cli.js) over stdio with the MCP SDK client, one server per sandbox setting for the whole run, \`--root\` a folder under bench/.work/shell/ and a control folder holding \`shell_policy.yaml\` (\`enabled: true\`, \`sandbox: none\` or \`sandbox: bubblewrap\`, everything else default: 32 KiB output cap, 256-process limit, the audit log on) and \`permissions.yaml\` allowing \`shell\`, so no call is gated. Tool \`run_shell {command}\`; the cwd is the root.
- mcp-server-commands: its build/index.js over stdio with the same SDK client; tool \`run_command {command, workdir: the root}\`. It runs each command with node's \`child_process.exec\` (\`/bin/sh -c CMD\`, unconfined, output buffered whole, no timeout, no process limit, no classification, no audit) and returns stdout and stderr as text parts; a non-zero exit is an error result.
- Times are client-side \`tools/call\` round trips (JSON-RPC, serialization and the pipe included). Calls time out after ${CALL_TIMEOUT_MS / 1000} s.
- The profile pass runs after the timed pass, untimed: each bulkhead setting again on a server preloaded with bench/lib/shell-trace.mjs (${PROFILE_CALLS} commands after ${WARMUP} warmups), which notes when the request arrived, each process node spawned (the synchronous part of spawn(), its exit, its pipes closing), the synchronous file-system calls on /sys/fs/cgroup and /proc, the audit log's writes, and when the reply was written. The tracing itself adds a little. Then ${PACED_COMMANDS} more commands with ${IDLE_MS} ms of idle before each, traced the same way.
- The paced pass (fresh servers, after the timed pass) is the timed pass again with ${IDLE_MS} ms of idle before every call; it is reported, not judged against the targets.
- The process-tree breakdown replays, from the bench, the argv the traced servers spawned (the command swapped per run; cgroups made fresh beside the server's, with the same pids.max) and variants without one layer each, timed like raw \`bash -c\` (the bench's cgroup mkdir/rmdir outside the timing).`;
}

function profileNotes(profiles) {
  const notes = [];
  for (const [key, p] of Object.entries(profiles)) {
    const slow = p.slowest.map((r) => `${formatMs(r.client)} (before spawn ${formatMs(r.beforeSpawn)}, tree ${formatMs(r.spawnToExit)}, exit→closed ${formatMs(r.exitToClose)}, after ${formatMs(r.afterClose)})`).join('; ');
    notes.push(`- ${profileLabel(key)}, the ${p.slowest.length} slowest traced calls: ${slow}.`);
  }
  return notes.join('\n');
}

function writeResults(dir, ctx) {
  mkdirSync(dir, { recursive: true });
  const { options, summary, paced, v, profiles, launchTimes, launches, idleJoin, classify, classifyPer, startLoad, stale } = ctx;
  const m = machine(stale);
  const date = new Date().toISOString();
  const table = resultsTable(options.sides, summary);
  const targets = targetText(v, summary);
  const pTable = profileTable(profiles);
  const lTable = launchTable(launchTimes);
  const jTable = idleJoinTable(idleJoin);
  const findingsText = findings({ summary, paced, profiles, launchTimes, idleJoin, classifyPer });
  const pacedTable = paced ? resultsTable(options.sides, paced) : '';
  const classifyText = classify
    ? `Classification (bench/shell-classify.mjs): ${classify.commands.toLocaleString('en-US')} varied command lines (plain reads, builds, writes and the tricks the classifier must see through), median of ${classify.rounds} rounds after an untimed pass: ${formatMs(classify.medianSeconds * 1000)} a round, **${classify.perSecond.toLocaleString('en-US')} commands/s** (target ≥ ${TARGETS.classifyPerSecond.toLocaleString('en-US')}); tiers low ${classify.tiers.low}, medium ${classify.tiers.medium}, high ${classify.tiers.high}.`
    : 'Classification: not run (--no-classify).';
  const tiers = classifyPer ? Object.entries(classifyPer.tiers).map(([command, tier]) => `\`${command}\` ${tier}`).join(', ') : '';
  const md = `# shell benchmark

Command: \`${options.command}\`  
Date: ${date}  
Machine: ${m.cpus}, ${m.memory} RAM, ${m.os}, Node ${m.node}, ${m.bash}, ${m.bwrap}, running as ${m.user}; load average ${startLoad} at the start, ${m.load} at the end  
Compared with: ${m.peer}  
Bulkhead commit: ${m.commit}

${options.count} trivial commands per side after ${WARMUP} warmups, the sides taking turns command by command.

${table}

Targets (issue 7):
${targets}
${pacedTable ? `\nPaced pass (not part of the targets): the same sides, fresh servers, ${PACED_COMMANDS} commands each after ${PACED_WARMUP} warmups, with ${IDLE_MS} ms of idle before every call, as when an agent thinks between commands:\n\n${pacedTable}\n` : ''}
${classifyText}
${findingsText ? `\nWhat the numbers say:\n\n${findingsText}\n` : ''}${pTable ? `\nWhere a bulkhead call's time goes (untimed profile pass):\n\n${pTable}\n\n${profileNotes(profiles)}\n${classifyPer ? `- Classification of this bench's own commands, measured in the bench process: ${formatMs(classifyPer.perCommandMs)} a command (${tiers}).\n` : ''}` : ''}${lTable ? `\nThe process trees alone: the launches the servers made in the profile pass (argv read from the trace, the command swapped per run, fresh cgroups beside the server's), spawned straight from the bench like raw \`bash -c\`, ${LAUNCH_ROUNDS} runs each after 10 warmups, taking turns; medians:\n\n${lTable}\n` : ''}${jTable ? `\nThe cgroup join after idle: the no-sandbox launch replayed from the bench with ${IDLE_MS} ms of idle before each run, ${IDLE_JOIN_ROUNDS} runs with its cgroups and ${IDLE_JOIN_ROUNDS} with the same wrapper joining none, taking turns:\n\n${jTable}\n` : ''}
${methodNotes(options.count)}
`;
  writeResult(join(dir, 'shell.md'), md);
  const trimmed = Object.fromEntries(Object.entries(summary).map(([key, s]) => [key, { ...s, times: undefined }]));
  const pacedTrimmed = paced ? Object.fromEntries(Object.entries(paced).map(([key, s]) => [key, { ...s, times: undefined }])) : undefined;
  writeResult(
    join(dir, 'shell.json'),
    `${JSON.stringify({ command: options.command, date, machine: { ...m, startLoad }, warmup: WARMUP, commands: options.count, commandList: COMMANDS.map((spec) => spec.command), targets: TARGETS, sides: Object.fromEntries(options.sides.map((key) => [key, SIDES[key].label])), summary: trimmed, paced: pacedTrimmed, idleMs: IDLE_MS, verdicts: v, classify, classifyPerCommand: classifyPer, profiles, launchTimes, launches, idleJoin, times: Object.fromEntries(Object.entries(summary).map(([key, s]) => [key, s.times])) }, null, 1).replace(/\[\n\s*(-?[\d.e+-]+(?:,\n\s*-?[\d.e+-]+)*)\n\s*\]/g, (_, list) => `[${list.replace(/\s+/g, '')}]`)}\n`,
  );
  return { table, targets, pacedTable, pTable, lTable, jTable, classifyText, written: join(dir, 'shell.md') };
}

export async function main(argv) {
  const options = parseOptions(argv);
  stopChildrenOnExit();
  const stale = checkBuild();
  const startLoad = loadavg().map((n) => n.toFixed(2)).join(' ');
  process.stderr.write(`Shell bench: ${options.count} commands × sides ${options.sides.join(', ')} after ${WARMUP} warmups; load average ${startLoad}\n`);
  const folders = prepareFolders();
  let runners = {};
  let summary;
  try {
    runners = await startSides(options.sides, folders);
    summary = await runCommands(runners, options.sides, options.count, folders.root);
  } finally {
    await stopSides(runners);
  }
  let paced;
  if (options.profile) {
    process.stderr.write(`Paced pass: ${PACED_COMMANDS} commands per side after ${PACED_WARMUP} warmups, ${IDLE_MS} ms idle before each call ...\n`);
    let pacedRunners = {};
    try {
      pacedRunners = await startSides(options.sides, folders);
      paced = await runCommands(pacedRunners, options.sides, PACED_COMMANDS, folders.root, { warmup: PACED_WARMUP, pauseMs: IDLE_MS });
    } finally {
      await stopSides(pacedRunners);
    }
  }
  for (const key of options.sides) process.stderr.write(`  ${SIDES[key].short.padEnd(22)} median ${formatMs(summary[key].median)}, p90 ${formatMs(summary[key].p90)}${summary[key].wrongCount + summary[key].errorCount > 0 ? `, ${summary[key].wrongCount} wrong, ${summary[key].errorCount} failed` : ''}\n`);

  let classify;
  if (options.classify) {
    process.stderr.write(`Classifying ${CLASSIFY_COUNT.toLocaleString('en-US')} commands ...\n`);
    classify = await runClassify({ count: CLASSIFY_COUNT });
    process.stderr.write(`  ${classify.perSecond.toLocaleString('en-US')} commands/s\n`);
  }
  const ours = options.sides.filter((key) => key === 'none' || key === 'bubblewrap');
  const classifyPer = ours.length > 0 ? await classifyCost(folders.root) : undefined;
  let profiles = {};
  let launchTimes = [];
  let launches = {};
  let idleJoin;
  if (options.profile && ours.length > 0) {
    process.stderr.write('Profile pass (untimed) ...\n');
    ({ profiles, launchTimes, launches, idleJoin } = await profileSides(ours, folders));
  }
  const v = verdicts(options.sides, summary, classify);
  const resultsDir = options.official ? join(BENCH, 'results') : join(WORK, 'results');
  const out = writeResults(resultsDir, { options, summary, paced, v, profiles, launchTimes, launches, idleJoin, classify, classifyPer, startLoad, stale });
  process.stdout.write(`\n${out.table}\n\nTargets:\n${out.targets}\n${out.pacedTable ? `\nPaced (${IDLE_MS} ms idle before each call):\n${out.pacedTable}\n` : ''}\n${out.classifyText}\n${out.pTable ? `\n${out.pTable}\n` : ''}${out.lTable ? `\n${out.lTable}\n` : ''}${out.jTable ? `\n${out.jTable}\n` : ''}\nWritten to ${relative(process.cwd(), out.written)} and shell.json\n`);
}
