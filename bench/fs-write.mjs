// `pnpm bench fs-write`: bulkhead-fs-write against @modelcontextprotocol/server-filesystem, side by
// side in one run over stdio with the same client: whole-file writes (1 MiB and 50 MiB, new file
// and overwrite), 100 small edits of a 10,000-line file one call each, one 50-edit multi_edit,
// then a correctness table judged from the bytes on disk.
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { checksTable, runChecks } from './lib/fs-write-checks.mjs';
import { startServer } from './lib/fs-write-client.mjs';
import { applyLiterally, editSets, EDIT_FILE_LINES, MIB, sizedText, sourceFile } from './lib/fs-write-data.mjs';
import { Checker, formatMs } from './lib/measure.mjs';
import { stopChildrenOnExit } from './lib/processes.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const WORK = join(BENCH, '.work', 'fs-write');
const OURS_CLI = join(REPO, 'servers', 'fs-write', 'dist', 'cli.js');
const PEER_DIR = join(BENCH, 'node_modules', '@modelcontextprotocol', 'server-filesystem');
const PEER_BIN = join(PEER_DIR, 'dist', 'index.js');
const STDIO_PATCH = join(BENCH, 'lib', 'fs-write-stdio-limit.mjs');

const SMALL = 1 * MIB;
const LARGE = 50 * MIB;
/** One line in this many differs between the file on disk and the content that overwrites it. */
const CHANGED_EVERY = 100;
const PROBE_TIMEOUT_MS = 60_000;
const RAISED_STDIO_BYTES = 256 * MIB;
const BIG_CAP_BYTES = 64 * MIB;

const SETS = {
  full: { name: 'full', rounds: 5, bigRounds: 3, writeRepeats: 4, multiRepeats: 4 },
  quick: { name: 'quick', rounds: 2, bigRounds: 1, writeRepeats: 2, multiRepeats: 2 },
};

const USAGE = `usage: pnpm bench fs-write [--quick] [--rounds N] [--only IDS] [--profile] [--bulkhead-cli FILE] [--against FILE]

  --rounds N   rounds per case after one warmup batch per server (default 5; 50 MiB cases: 3);
               the two servers take turns going first
  --quick      2 rounds (50 MiB: 1) and fewer repeats, for a fast check
  --only IDS   comma-separated case ids: ${'${ids}'}, checks
  --profile    start both servers with node --cpu-prof (profiles in bench/.work/fs-write/profiles/;
               summarize one with \`node bench/lib/fs-write-profile.mjs FILE\`)
  --bulkhead-cli FILE
               bench another build of the bulkhead server (an experiment) instead of
               servers/fs-write/dist/cli.js
  --against FILE
               an A/B run of two bulkhead builds: the peer column is the bulkhead server FILE
               (the two take turns exactly as bulkhead and the peer do, so both see the same load)

Only a full default run writes bench/results/fs-write.{md,json}; any other goes to bench/.work/results/.
`;

// ── servers ─────────────────────────────────────────────────────────────────────────────────

const SIDE_NAMES = ['bulkhead', 'peer'];

/**
 * The server sets: `default` is each server as shipped; the `big-*` sets carry the stdio patch
 * (see lib/fs-write-stdio-limit.mjs) that lets a 50 MiB message through at all, and bulkhead's
 * byte cap raised in its fs_write_policy.yaml.
 */
const SERVER_SETS = {
  default: { env: {}, cap: undefined },
  big: { env: { BENCH_STDIO_MAX_BYTES: String(RAISED_STDIO_BYTES) }, cap: BIG_CAP_BYTES },
  'big-linear': { env: { BENCH_STDIO_MAX_BYTES: String(RAISED_STDIO_BYTES), BENCH_STDIO_LINEAR: '1' }, cap: BIG_CAP_BYTES },
};

function controlDir(setName, sideName) {
  const dir = join(WORK, `control-${setName}-${sideName}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // fs_write tools ask by default; a bench has nobody to ask.
  writeFileSync(join(dir, 'permissions.yaml'), 'allow:\n  - fs_write\n');
  const cap = SERVER_SETS[setName].cap;
  if (cap) writeFileSync(join(dir, 'fs_write_policy.yaml'), `limits:\n  max_file_bytes: ${cap}\n`);
  return dir;
}

/** How the bench talks to a bulkhead server whose root is `root`. */
function bulkheadAdapter(name, root) {
  return {
    name,
    root,
    write: (file, content) => ({ tool: 'write_file', args: { path: relative(root, file), content } }),
    edit: (file, oldString, newString) => ({ tool: 'edit_file', args: { path: relative(root, file), old_string: oldString, new_string: newString } }),
    multi: (file, edits) => ({ tool: 'multi_edit', args: { path: relative(root, file), edits: edits.map(({ old_string, new_string }) => ({ old_string, new_string })) } }),
    replies: {
      created: /^Created /,
      updated: /^Updated /,
      edited: /^Updated .*\(1 replacement;/,
      multi: (n) => new RegExp(`^Updated .*\\(${n} of ${n} edits applied;`),
    },
  };
}

/** With `against`, the peer column is another bulkhead build (an A/B run of two builds). */
function sideAdapters(roots, against) {
  const peer = roots.peer;
  return {
    bulkhead: bulkheadAdapter('bulkhead', roots.bulkhead),
    peer: against ? bulkheadAdapter('peer', peer) : {
      name: 'peer',
      root: peer,
      write: (file, content) => ({ tool: 'write_file', args: { path: file, content } }),
      edit: (file, oldString, newString) => ({ tool: 'edit_file', args: { path: file, edits: [{ oldText: oldString, newText: newString }] } }),
      multi: (file, edits) => ({ tool: 'edit_file', args: { path: file, edits: edits.map(({ old_string, new_string }) => ({ oldText: old_string, newText: new_string })) } }),
      replies: { created: /^Successfully wrote to /, updated: /^Successfully wrote to /, edited: /^```diff\n/, multi: () => /^```diff\n/ },
    },
  };
}

class ServerSets {
  constructor(ctx) {
    this.ctx = ctx;
    this.live = new Map();
    this.peaks = {};
  }

  async get(setName, sideName) {
    const key = `${setName}/${sideName}`;
    const running = this.live.get(key);
    if (running?.alive) return running;
    if (running) await this.stop(key);
    const set = SERVER_SETS[setName];
    const env = { ...getDefaultEnvironment(), ...set.env };
    const nodeFlags = [...(setName === 'default' ? [] : ['--import', STDIO_PATCH]), ...(this.ctx.profile ? [`--cpu-prof`, `--cpu-prof-dir=${join(WORK, 'profiles', `${setName}-${sideName}`)}`] : [])];
    const bulkheadCli = sideName === 'bulkhead' ? this.ctx.oursCli : this.ctx.against;
    let server;
    if (bulkheadCli) {
      this.ctx.controlDirs[key] ??= controlDir(setName, sideName);
      const args = ['--root', this.ctx.roots[sideName], '--config', this.ctx.controlDirs[key]];
      server = await startServer({ name: `${sideName} (${setName})`, script: bulkheadCli, args, nodeFlags, env, requiredTools: ['write_file', 'edit_file', 'multi_edit'] });
    } else {
      server = await startServer({ name: `peer (${setName})`, script: PEER_BIN, args: [this.ctx.roots.peer], nodeFlags, env, requiredTools: ['write_file', 'edit_file'] });
    }
    this.live.set(key, server);
    return server;
  }

  async stop(key, { recordPeak = true } = {}) {
    const server = this.live.get(key);
    if (!server) return;
    this.live.delete(key);
    if (recordPeak) this.peaks[key] = Math.max(this.peaks[key] ?? 0, server.peakRssKb());
    await server.close();
  }

  async stopSet(setName) {
    for (const side of SIDE_NAMES) await this.stop(`${setName}/${side}`);
  }

  async stopAll() {
    for (const key of [...this.live.keys()]) await this.stop(key);
  }
}

// ── disk helpers (all untimed) ──────────────────────────────────────────────────────────────

/** Writes and fsyncs, so a reset file is on disk before the timed call that replaces it. */
function putFile(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Neither side pays for the other's (or the bench's) dirty pages being written back meanwhile. */
function flushDisks() {
  spawnSync('sync');
}

function sameBytes(file, expected) {
  let actual;
  try {
    actual = readFileSync(file);
  } catch (error) {
    return { ok: false, detail: `cannot read it back: ${error.code ?? error.message}` };
  }
  if (actual.equals(expected)) return { ok: true };
  let at = 0;
  while (at < actual.length && at < expected.length && actual[at] === expected[at]) at++;
  return { ok: false, detail: `${actual.length} bytes on disk, ${expected.length} expected; first difference at byte ${at}` };
}

/** Temp files a server left behind in `dir`. */
function leftovers(dir) {
  return readdirSync(dir).filter((name) => name.endsWith('.tmp'));
}

// ── cases ───────────────────────────────────────────────────────────────────────────────────

function replyCheck(reply, pattern) {
  if (!reply.ok) return { ok: false, detail: reply.failure ?? `tool error: ${reply.text.split('\n')[0].slice(0, 200)}` };
  if (!pattern.test(reply.text)) return { ok: false, detail: `unexpected reply: ${reply.text.split('\n')[0].slice(0, 200)}` };
  return { ok: true };
}

function both(...checks) {
  return checks.find((check) => !check.ok) ?? { ok: true };
}

function writeCase({ id, label, set, bytes, overwrite, repeats, rounds, data }) {
  const content = data.content(bytes);
  const expected = Buffer.from(content);
  const older = overwrite ? Buffer.from(data.olderRevision(bytes)) : undefined;
  return {
    id,
    label,
    set,
    repeats,
    rounds,
    bytes,
    dir: (side) => join(side.root, id),
    begin(side) {
      rmSync(this.dir(side), { recursive: true, force: true });
      mkdirSync(this.dir(side), { recursive: true });
    },
    file(side, i) {
      return join(this.dir(side), overwrite ? 'target.txt' : `new-${i}.txt`);
    },
    before(side, i) {
      if (overwrite) putFile(this.file(side, i), older);
    },
    request(side, i) {
      return side.write(this.file(side, i), content);
    },
    check(side, i, reply) {
      const file = this.file(side, i);
      const result = both(replyCheck(reply, overwrite ? side.replies.updated : side.replies.created), sameBytes(file, expected));
      if (!overwrite) rmSync(file, { force: true });
      return result;
    },
    end(side) {
      const left = leftovers(this.dir(side));
      return left.length ? { ok: false, detail: `temp files left behind: ${left.join(', ')}` } : { ok: true };
    },
    notes: overwrite ? `the file on disk (same size) differs from the new content in 1 line of every ${CHANGED_EVERY}; it is rewritten and fsynced by the bench before each call` : 'a new path for every call',
  };
}

function editsCase({ data, rounds }) {
  const expected = Buffer.from(applyLiterally(data.source, data.edits.single));
  return {
    id: 'edit-100',
    label: `100 edit_file calls on a ${EDIT_FILE_LINES.toLocaleString('en-US')}-line file (one edit each)`,
    set: 'default',
    repeats: data.edits.single.length,
    rounds,
    file: (side) => join(side.root, 'edits', 'source.ts'),
    begin(side) {
      putFile(this.file(side), data.source);
    },
    request(side, i) {
      const edit = data.edits.single[i];
      return side.edit(this.file(side), edit.old_string, edit.new_string);
    },
    check(side, _i, reply) {
      return replyCheck(reply, side.replies.edited);
    },
    end(side) {
      return both(sameBytes(this.file(side), expected), leftovers(dirname(this.file(side))).length ? { ok: false, detail: 'temp files left behind' } : { ok: true });
    },
    notes: `per call; old_string is the target line with one line of context either side (3 lines), spread evenly over the file (${(data.source.length / 1024).toFixed(0)} KiB); the file is reset before each round and must equal the expected content after the 100th edit`,
  };
}

function multiCase({ data, rounds, repeats }) {
  const edits = data.edits.multi;
  const expected = Buffer.from(applyLiterally(data.source, edits));
  return {
    id: 'multi-50',
    label: `one multi_edit of ${edits.length} edits on the ${EDIT_FILE_LINES.toLocaleString('en-US')}-line file`,
    set: 'default',
    repeats,
    rounds,
    file: (side) => join(side.root, 'multi', 'source.ts'),
    before(side) {
      putFile(this.file(side), data.source);
    },
    request(side) {
      return side.multi(this.file(side), edits);
    },
    check(side, _i, reply) {
      return both(replyCheck(reply, side.replies.multi(edits.length)), sameBytes(this.file(side), expected));
    },
    notes: `peer: one edit_file call with the same ${edits.length} edits; the file is reset before each call`,
  };
}

function caseList(options, data) {
  const { set } = options;
  const cases = [
    writeCase({ id: 'write-1m-new', label: 'write_file 1 MiB, new file', set: 'default', bytes: SMALL, overwrite: false, repeats: set.writeRepeats, rounds: options.rounds, data }),
    writeCase({ id: 'write-1m-over', label: 'write_file 1 MiB over an existing file', set: 'default', bytes: SMALL, overwrite: true, repeats: set.writeRepeats, rounds: options.rounds, data }),
    editsCase({ data, rounds: options.rounds }),
    multiCase({ data, rounds: options.rounds, repeats: set.multiRepeats }),
  ];
  for (const setName of ['big', 'big-linear']) {
    const [suffix, idSuffix] = setName === 'big' ? ['stdio cap raised', ''] : ['stdio cap raised, linear SDK read buffer', '-linear'];
    cases.push(
      writeCase({ id: `write-50m-new${idSuffix}`, label: `write_file 50 MiB, new file (${suffix})`, set: setName, bytes: LARGE, overwrite: false, repeats: 1, rounds: options.bigRounds, data }),
      writeCase({ id: `write-50m-over${idSuffix}`, label: `write_file 50 MiB over an existing file (${suffix})`, set: setName, bytes: LARGE, overwrite: true, repeats: 1, rounds: options.bigRounds, data }),
    );
  }
  return cases;
}

function percentile(values, p) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  if (p === 50 && sorted.length % 2 === 0) return (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One side's share of a round: `repeats` calls, each prepared untimed, timed, then checked. */
async function runBatch(ctx, kase, sideName, timed) {
  const side = ctx.sides[sideName];
  const server = await ctx.servers.get(kase.set, sideName);
  const label = `${kase.label} (${sideName})`;
  kase.begin?.(side);
  flushDisks();
  const times = [];
  const cpuBefore = server.cpuMs();
  for (let i = 0; i < kase.repeats; i++) {
    kase.before?.(side, i);
    const { tool, args } = kase.request(side, i);
    const reply = await server.call(tool, args);
    const check = kase.check(side, i, reply);
    if (!check.ok) {
      ctx.checker.verify(label, check);
      return { times, error: check.detail, errorMs: reply.ms };
    }
    times.push(reply.ms);
  }
  const cpuAfter = server.cpuMs();
  const end = kase.end?.(side) ?? { ok: true };
  if (!end.ok) {
    ctx.checker.verify(label, end);
    return { times, error: end.detail };
  }
  return { times, cpuMs: cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined, timed };
}

async function runCase(ctx, kase) {
  const results = { bulkhead: { times: [], cpuMs: 0, cpuCalls: 0 }, peer: { times: [], cpuMs: 0, cpuCalls: 0 } };
  const record = (sideName, batch) => {
    const into = results[sideName];
    if (batch.error) {
      into.error ??= batch.error;
      into.errorMs ??= batch.errorMs;
      return;
    }
    if (!batch.timed) return;
    into.times.push(...batch.times);
    if (batch.cpuMs !== undefined) {
      into.cpuMs += batch.cpuMs;
      into.cpuCalls += batch.times.length;
    }
  };
  for (const sideName of SIDE_NAMES) record(sideName, await runBatch(ctx, kase, sideName, false));
  for (let round = 0; round < kase.rounds; round++) {
    const order = round % 2 === 0 ? SIDE_NAMES : [...SIDE_NAMES].reverse();
    for (const sideName of order) {
      if (results[sideName].error) continue;
      record(sideName, await runBatch(ctx, kase, sideName, true));
    }
  }
  const summary = (r) => ({
    median: percentile(r.times, 50),
    p90: percentile(r.times, 90),
    calls: r.times.length,
    cpuPerCallMs: r.cpuCalls > 0 ? r.cpuMs / r.cpuCalls : undefined,
    times: r.times.map((t) => Math.round(t * 100) / 100),
    ...(r.error ? { error: r.error, errorMs: r.errorMs } : {}),
  });
  const row = { id: kase.id, label: kase.label, set: kase.set, notes: kase.notes, bulkhead: summary(results.bulkhead), peer: summary(results.peer) };
  const show = (m) => (m.error ? `error: ${m.error}` : `${formatMs(m.median)} (p90 ${formatMs(m.p90)}, CPU ${formatMs(m.cpuPerCallMs)}/call)`);
  process.stderr.write(`  ${kase.label}: bulkhead ${show(row.bulkhead)}; peer ${show(row.peer)}\n`);
  return row;
}

/** Both servers as shipped, sent a 50 MiB write_file once: does the message get through at all? */
async function probeDefaults(ctx, data) {
  const content = data.content(LARGE);
  const outcome = {};
  for (const sideName of SIDE_NAMES) {
    const side = ctx.sides[sideName];
    const server = await ctx.servers.get('default', sideName);
    const dir = join(side.root, 'probe-50m');
    mkdirSync(dir, { recursive: true });
    const { tool, args } = side.write(join(dir, 'big.txt'), content);
    const reply = await server.call(tool, args, PROBE_TIMEOUT_MS);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const serverSaid = server
      .stderrTail()
      .split('\n')
      .find((line) => /ReadBuffer|maximum size/i.test(line));
    const written = statSync(join(dir, 'big.txt'), { throwIfNoEntry: false });
    outcome[sideName] = {
      ok: reply.ok,
      ms: reply.ms,
      reply: reply.ok ? reply.text.split('\n')[0] : (reply.failure ?? reply.text.split('\n')[0]),
      serverStillUp: server.alive,
      ...(serverSaid ? { serverStderr: serverSaid.trim().slice(0, 200) } : {}),
      fileWritten: written ? written.size : 0,
    };
    process.stderr.write(`  50 MiB write_file, servers as shipped (${sideName}): ${reply.ok ? 'ok' : 'failed'} after ${formatMs(reply.ms)}: ${outcome[sideName].reply}\n`);
    await ctx.servers.stop(`default/${sideName}`, { recordPeak: false });
  }
  return outcome;
}

// ── report ──────────────────────────────────────────────────────────────────────────────────

function speed(row) {
  if (row.bulkhead.error || row.peer.error || !row.bulkhead.median || !row.peer.median) return undefined;
  return row.peer.median / row.bulkhead.median;
}

function timeCell(m) {
  return m.error ? `error after ${formatMs(m.errorMs)}` : formatMs(m.median);
}

function markdownRows(rows) {
  const header = ['case', 'bulkhead median', 'peer median', 'speed (peer ÷ bulkhead)', 'bulkhead p90', 'peer p90', 'bulkhead CPU/call', 'peer CPU/call', 'calls per side', 'notes'];
  const lines = [`| ${header.join(' | ')} |`, `| --- |${header.slice(1, -1).map(() => ' ---: |').join('')} --- |`];
  for (const row of rows) {
    const s = speed(row);
    const errors = SIDE_NAMES.filter((name) => row[name].error).map((name) => `${name} failed: ${row[name].error}`);
    const cells = [
      row.label,
      timeCell(row.bulkhead),
      timeCell(row.peer),
      s === undefined ? 'n/a' : `${s.toFixed(2)}×`,
      formatMs(row.bulkhead.p90),
      formatMs(row.peer.p90),
      formatMs(row.bulkhead.cpuPerCallMs),
      formatMs(row.peer.cpuPerCallMs),
      `${row.bulkhead.calls}`,
      [row.notes, ...errors].join('; ').replaceAll('|', '\\|'),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function probeText(probe) {
  if (!probe) return '';
  const line = (name) => {
    const p = probe[name];
    if (p.ok) return `${name}: written in ${formatMs(p.ms)}`;
    return `${name}: failed after ${formatMs(p.ms)} (client saw "${p.reply}"${p.serverStderr ? `; server stderr: "${p.serverStderr}"` : ''}; ${p.fileWritten ? `${p.fileWritten} bytes on disk` : 'nothing written'})`;
  };
  return `50 MiB write_file with both servers as shipped (each stdio reader stops at 10 MiB): ${SIDE_NAMES.map(line).join('; ')}.`;
}

function targets(rows, checks) {
  const verdict = (ok) => (ok ? '**met**' : '**not met**');
  const perRow = rows.map((row) => `${row.label} ${speed(row)?.toFixed(2) ?? 'n/a'}×`);
  const faster = rows.every((row) => (speed(row) ?? 0) > 1);
  const lines = [`- faster than the peer on each case: ${verdict(faster)} (${perRow.join('; ')})`];
  if (checks) {
    const where = checks.filter((row) => row.results.bulkhead.ok && !row.results.peer.ok).map((row) => row.id);
    const ours = checks.every((row) => row.results.bulkhead.ok);
    lines.push(`- correct where the peer is not: ${verdict(ours && where.length > 0)} (bulkhead passes ${checks.filter((row) => row.results.bulkhead.ok).length} of ${checks.length} checks, the peer ${checks.filter((row) => row.results.peer.ok).length}; only bulkhead: ${where.join(', ') || 'none'})`);
  }
  return lines.join('\n');
}

const loadAtStart = loadavg();
const showLoad = (load) => load.map((x) => x.toFixed(2)).join(' ');

function machine(stale, oursCli, against) {
  const cpu = cpus();
  const git = (...args) => spawnSync('git', args, { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const commit = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'servers/fs-write', 'shared') !== '';
  const peerVersion = JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')).version;
  const fs = spawnSync('findmnt', ['-no', 'FSTYPE,OPTIONS', '--target', WORK], { encoding: 'utf8' }).stdout.trim().split(/\s+/);
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    filesystem: fs[0] ? `${fs[0]} (${(fs[1] ?? '').split(',').slice(0, 2).join(',')})` : 'unknown',
    peer: `@modelcontextprotocol/server-filesystem ${peerVersion}`,
    load: `load average ${showLoad(loadAtStart)} at the start, ${showLoad(loadavg())} at the end (1, 5, 15 min)`,
    commit: `${commit}${dirty ? ' (servers/fs-write or shared modified)' : ''}${stale.length > 0 ? `; built before the latest edits to ${stale.join(' and ')}` : ''}${oursCli === OURS_CLI ? '' : `; bulkhead server from ${relative(REPO, oursCli)} (an experimental build)`}${against ? `; the peer column is the bulkhead server ${relative(REPO, against)} (an A/B run)` : ''}`,
  };
}

/** Which stdio reader the built bulkhead server uses: its own line reader or the SDK's transport. */
function bulkheadTransport(oursCli) {
  const core = createRequire(realpathSync(oursCli)).resolve('@bulkhead/core');
  const stdio = readFileSync(join(dirname(realpathSync(core)), 'transport', 'stdio.js'), 'utf8');
  return stdio.includes('LineReader') ? 'its own line reader (shared/src/transport/stream-lines.ts: chunks joined once per message)' : "the SDK's StdioServerTransport";
}

const bigNote = (oursCli) => `- 50 MiB: both servers' stdio transports refuse a message over 10 MiB and close (the peer uses the MCP SDK's StdioServerTransport; bulkhead ${bulkheadTransport(oursCli)}, with the same 10 MiB limit); see the line above the table. The 50 MiB rows therefore run both servers with a preload (bench/lib/fs-write-stdio-limit.mjs, \`node --import\`) that raises that cap to ${RAISED_STDIO_BYTES / MIB} MiB in both, and bulkhead with \`limits.max_file_bytes\` raised to ${BIG_CAP_BYTES / MIB} MiB in its fs_write_policy.yaml (default 10 MiB). The SDK's read buffer joins every incoming pipe chunk onto all the bytes before it (quadratic in the message size), which dominates the peer's "stdio cap raised" rows; the "linear SDK read buffer" rows also replace that with one join per message (in whichever server still uses the SDK's reader), so they compare what the servers themselves cost.`;

const notes = (oursCli) => `Notes on the comparison:
- Times are client-side \`tools/call\` round trips through the MCP SDK client over stdio (request serialization, the pipe and the reply included), from one client module for both servers. Each case starts with one untimed warmup batch per server; then, in each round, both servers run the case, taking turns going first. Medians and p90 are over every timed call of the case. Each reply is checked, and so is the file on disk (byte for byte against the expected content; no temp file left behind), so a fast wrong answer counts as a failure, not a time.
- CPU/call is the server process's user + system time (all threads, from /proc/PID/stat at 10 ms resolution) over the timed batches, divided by the calls.
- Before every batch the bench runs \`sync\`, so neither server pays for writing back the other's (or the bench's) dirty pages. Files an overwrite replaces are rewritten and fsynced by the bench, untimed.
- Bulkhead does more per call than the peer: it checks its permission policy (\`permissions.yaml\` allows fs_write here) and appends a hash-chained audit line; it fsyncs the temp file before the rename (the peer does not sync at all), checks the file's identity before replacing it, and answers with a sha256 and a bounded unified diff (the peer's write_file answers one line; its edit_file answers an unbounded diff of the whole file).
${bigNote(oursCli)}
- The peer needs absolute paths; bulkhead gets the same files by paths relative to its root. Each server has its own root folder under bench/.work/fs-write/.`;

function writeResults(dir, { command, options, rows, checks, probe, checker, stale, peaks }) {
  mkdirSync(dir, { recursive: true });
  const info = machine(stale, options.oursCli, options.against);
  const date = new Date().toISOString();
  const table = rows.length ? markdownRows(rows) : '(no timed cases selected)';
  const checkText = checks ? `Correctness (same scenarios against both servers, judged from the bytes and metadata on disk):\n\n${checksTable(checks, SIDE_NAMES)}\n` : '';
  const mismatchText = checker.mismatches.length ? `\n**Mismatches:**\n${checker.mismatches.map((m) => `- ${m}`).join('\n')}\n` : '\nAll reply and file checks of the timed cases passed.\n';
  const rss = Object.entries(peaks)
    .map(([key, kb]) => `${key} ${Math.round(kb / 1024)} MiB`)
    .join(', ');
  const md = `# fs-write benchmark\n\nCommand: \`${command}\`  \nDate: ${date}  \nMachine: ${info.cpus}, ${info.memory} RAM, ${info.os}, ${info.filesystem}, Node ${info.node}; ${info.load}  \nCompared with: ${info.peer}  \nBulkhead commit: ${info.commit}\n\nRounds: ${options.rounds} (50 MiB cases: ${options.bigRounds}) after one warmup batch per server and case. ${probeText(probe)}\n\n${table}\n\nPeak RSS per server process (across the cases it served): ${rss || 'n/a'}.\n\n${checkText}\nTargets:\n${targets(rows, checks)}\n${mismatchText}\n${notes(options.oursCli)}\n`;
  writeResult(join(dir, 'fs-write.md'), md);
  const json = { command, date, machine: info, options: { set: options.set.name, rounds: options.rounds, bigRounds: options.bigRounds }, probe, rows, checks, peakRssKb: peaks, mismatches: checker.mismatches };
  writeResult(join(dir, 'fs-write.json'), `${JSON.stringify(json, null, 2)}\n`);
  return { table, md };
}

// ── main ────────────────────────────────────────────────────────────────────────────────────

function parseOptions(argv) {
  const ids = ['write-1m-new', 'write-1m-over', 'edit-100', 'multi-50', 'probe-50m', 'write-50m-new', 'write-50m-over', 'write-50m-new-linear', 'write-50m-over-linear'];
  const usage = USAGE.replace('${ids}', ids.join(', '));
  const values = benchFlags(argv, { quick: { type: 'boolean', default: false }, rounds: { type: 'string' }, only: { type: 'string' }, profile: { type: 'boolean', default: false }, 'bulkhead-cli': { type: 'string' }, against: { type: 'string' } }, usage);
  const set = values.quick ? SETS.quick : SETS.full;
  const rounds = positiveInteger(values.rounds, set.rounds, '--rounds');
  const only = values.only?.split(',').map((id) => id.trim());
  const unknown = (only ?? []).filter((id) => id !== 'checks' && !ids.includes(id));
  if (unknown.length > 0) {
    process.stderr.write(`unknown case: ${unknown.join(', ')}\n\n${usage}`);
    process.exit(2);
  }
  const oursCli = values['bulkhead-cli'] ? join(process.cwd(), values['bulkhead-cli']) : OURS_CLI;
  const against = values.against ? join(process.cwd(), values.against) : undefined;
  const official = !values.quick && values.rounds === undefined && only === undefined && !values.profile && oursCli === OURS_CLI && !against;
  return { set, oursCli, against, rounds, bigRounds: values.rounds === undefined ? set.bigRounds : rounds, only, profile: values.profile, official, command: ['pnpm bench fs-write', ...argv].join(' ') };
}

function newestMtime(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
}

function checkBuild() {
  if (!statSync(OURS_CLI, { throwIfNoEntry: false })) {
    process.stderr.write(`${relative(REPO, OURS_CLI)} is missing: run \`pnpm build\` first\n`);
    process.exit(2);
  }
  const stale = ['servers/fs-write', 'shared'].filter((pkg) => newestMtime(join(REPO, pkg, 'src')) > (statSync(join(REPO, pkg, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0));
  if (stale.length > 0) process.stderr.write(`warning: ${stale.join(' and ')} sources are newer than their last build; run \`pnpm build\` to bench the current code\n`);
  return stale;
}

function prepareData() {
  const cache = new Map();
  const memo = (key, make) => {
    if (!cache.has(key)) cache.set(key, make());
    return cache.get(key);
  };
  return {
    content: (bytes) => memo(`new-${bytes}`, () => sizedText(bytes)),
    olderRevision: (bytes) => memo(`old-${bytes}`, () => sizedText(bytes, { changedEvery: CHANGED_EVERY })),
    source: sourceFile(),
    edits: editSets(),
  };
}

export async function main(argv) {
  const options = parseOptions(argv);
  stopChildrenOnExit();
  const stale = checkBuild();
  rmSync(WORK, { recursive: true, force: true });
  const roots = { bulkhead: join(WORK, 'bulkhead'), peer: join(WORK, 'peer') };
  for (const root of Object.values(roots)) mkdirSync(root, { recursive: true });
  const ctx = { roots, oursCli: options.oursCli, against: options.against, profile: options.profile, controlDirs: {}, sides: sideAdapters(roots, options.against), checker: new Checker() };
  ctx.servers = new ServerSets(ctx);
  const data = prepareData();
  const wanted = (id) => !options.only || options.only.includes(id);
  process.stderr.write(`Running the fs-write bench (${options.rounds} rounds, 50 MiB: ${options.bigRounds}; warmup batch first)\n`);

  const rows = [];
  let checks;
  let probe;
  try {
    if (wanted('checks')) {
      const sides = await Promise.all(
        SIDE_NAMES.map(async (name) => {
          const server = await ctx.servers.get('default', name);
          const side = ctx.sides[name];
          const call = async ({ tool, args }) => server.call(tool, args);
          return { name, root: side.root, write: (file, content) => call(side.write(file, content)), edit: (file, o, n) => call(side.edit(file, o, n)) };
        }),
      );
      checks = await runChecks(sides);
      for (const row of checks) process.stderr.write(`  check ${row.id}: ${SIDE_NAMES.map((name) => `${name} ${row.results[name].ok ? 'yes' : 'no'}`).join(', ')}\n`);
    }
    const cases = caseList(options, data).filter((kase) => wanted(kase.id));
    for (const setName of Object.keys(SERVER_SETS)) {
      for (const kase of cases.filter((k) => k.set === setName)) rows.push(await runCase(ctx, kase));
      await ctx.servers.stopSet(setName);
      if (setName === 'default' && wanted('probe-50m')) probe = await probeDefaults(ctx, data);
    }
  } finally {
    await ctx.servers.stopAll();
  }

  const peaks = Object.fromEntries(Object.entries(ctx.servers.peaks).filter(([, kb]) => kb > 0));
  const resultsDir = options.official ? join(BENCH, 'results') : join(BENCH, '.work', 'results');
  const { table } = writeResults(resultsDir, { command: options.command, options, rows, checks, probe, checker: ctx.checker, stale, peaks });
  process.stdout.write(`\n${table}\n\n${checks ? `${checksTable(checks, SIDE_NAMES)}\n\n` : ''}Targets:\n${targets(rows, checks)}\n\nWritten to ${relative(process.cwd(), join(resultsDir, 'fs-write.md'))} and fs-write.json\n`);
  if (ctx.checker.mismatches.length > 0) {
    process.stderr.write(`\n✗ ${ctx.checker.mismatches.length} MISMATCHES:\n${ctx.checker.mismatches.map((m) => `  - ${m}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}
