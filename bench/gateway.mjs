// `pnpm bench gateway`: what deferred discovery saves in the initial tools/list (527 LiveMCPTool
// tools behind the gateway plus the built-in fs), and what the gateway costs per call compared with
// calling the same server directly (an echo tool, and fs read_file), sequentially and N in flight.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { LIVE, REPO, SMALL_FILE, WORK, checkDataset, controlDir, fixtureCommand, fsCommand, gatewayCommand, prepareWorkspace, relayCommand, DATASET, FS_CLI, GATEWAY_CLI } from './lib/gateway-setup.mjs';
import { connectStdio, EXIT_GRACE_MS } from './lib/gateway-client.mjs';
import { runBatch, summarize } from './lib/gateway-load.mjs';
import { measureText, modelView } from './lib/gateway-tokens.mjs';
import { loadCorpus, ECHO_TOOL } from './fixtures/livemcp-server.mjs';
import { stopChildrenOnExit } from './lib/processes.mjs';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = join(REPO, 'bench');
const META_TOOLS = ['tool_search', 'call_tool', 'list_tools', 'load_tools', 'unload_tools'];
const DEFAULT_CORE = ['fs__read_file', 'fs__grep', 'fs__glob_files'];
const ECHO_TEXT = 'hello through the Bulkhead gateway bench';

const SETS = {
  full: { name: 'full', calls: 3000, rounds: 3 },
  quick: { name: 'quick', calls: 500, rounds: 1 },
};
const TARGET_SAVING = 0.9;
const TARGET_THROUGHPUT = 0.8;

const USAGE = `usage: pnpm bench gateway [--quick] [--calls N] [--concurrency C] [--rounds R]

  --quick          short run (1 round, --calls 500); results go to bench/.work/results/
  --calls N        echo calls one at a time per case and round (default 3000); 8N/3 more are made C in
                   flight, after 2N/3 + 2N/3 warmup calls. fs read_file is slower: its cases make a
                   third as many
  --concurrency C  calls in flight at once for the throughput rows (default 8)
  --rounds R       rounds, the cases interleaved in each (default 3); calls/s is the median round's
`;

function parseOptions(argv) {
  const values = benchFlags(
    argv,
    { quick: { type: 'boolean', default: false }, calls: { type: 'string' }, concurrency: { type: 'string' }, rounds: { type: 'string' } },
    USAGE,
  );
  const base = values.quick ? SETS.quick : SETS.full;
  const calls = positiveInteger(values.calls, base.calls, '--calls');
  // The --calls, --concurrency and --rounds of a custom run go to bench/.work/results/, like --quick.
  const set = {
    ...base,
    calls,
    concurrency: positiveInteger(values.concurrency, 8, '--concurrency'),
    rounds: positiveInteger(values.rounds, base.rounds, '--rounds'),
    echo: { calls, concurrentCalls: Math.ceil((8 * calls) / 3), warmup: Math.ceil((2 * calls) / 3) },
    fs: { calls: Math.ceil(calls / 3), concurrentCalls: Math.ceil((2 * calls) / 3), warmup: Math.ceil(calls / 6) },
  };
  const custom = values.calls !== undefined || values.concurrency !== undefined || values.rounds !== undefined;
  return { set, official: !values.quick && !custom, command: ['pnpm bench gateway', ...argv].join(' ') };
}

function say(line) {
  process.stderr.write(`${line}\n`);
}

function newestMtime(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
}

/** The bench runs the built servers; an older build than the sources would mislead. */
function checkBuild() {
  for (const cli of [GATEWAY_CLI, FS_CLI]) {
    try {
      statSync(cli);
    } catch {
      say(`${relative(REPO, cli)} is missing: run \`pnpm build\` (or \`npx tsc -b\`) first`);
      process.exit(2);
    }
  }
  const stale = ['servers/gateway', 'servers/fs', 'shared'].filter(
    (pkg) => newestMtime(join(REPO, pkg, 'src')) > (statSync(join(REPO, pkg, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0),
  );
  if (stale.length > 0) say(`warning: ${stale.join(', ')} sources are newer than their last build; run \`npx tsc -b\` to bench the current code`);
  return stale;
}

// ── formatting ──────────────────────────────────────────────────────────────────────────────

const int = (n) => Math.round(n).toLocaleString('en-US');
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const ms = (x) => (x === undefined ? '—' : x < 1 ? `${(x * 1000).toFixed(0)} µs` : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(1)} ms`);
const mib = (kb) => (kb ? `${Math.round(kb / 1024)} MiB` : '—');
const verdict = (ok) => (ok ? '**met**' : '**not met**');

function table(header, rows, align) {
  const sep = header.map((_, i) => (align?.[i] === 'l' ? ' --- ' : ' ---: '));
  return [`| ${header.join(' | ')} |`, `|${sep.join('|')}|`, ...rows.map((row) => `| ${row.map((cell) => String(cell).replaceAll('|', '\\|')).join(' | ')} |`)].join('\n');
}

// ── checks ──────────────────────────────────────────────────────────────────────────────────

class Problems {
  list = [];
  check(ok, message) {
    if (!ok) {
      this.list.push(message);
      say(`  ✗ ${message}`);
    }
    return ok;
  }
}

/** Sorted-key JSON, so that definitions compare equal whatever order the keys travelled in. */
function canonical(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  return `{${Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
    .join(',')}}`;
}

// ── context: the initial tools/list, eager against deferred ─────────────────────────────────

async function measureListing(tools) {
  const full = await measureText(JSON.stringify(tools));
  const model = await measureText(JSON.stringify(modelView(tools)));
  return { tools: tools.length, full, model };
}

async function contextCase(ctx) {
  say('Context: the initial tools/list of the gateway over fs + the 527 LiveMCPTool tools');
  const corpus = loadCorpus(DATASET);
  const fsDirect = await connectStdio({ label: 'fs (direct)', ...fsCommand(ctx.root, controlDir(ctx.controlBase, 'context-fs')) });
  const fsTools = fsDirect.firstListing.raw.tools.map((tool) => `fs__${tool.name}`);
  await fsDirect.close();

  const eagerDir = controlDir(ctx.controlBase, 'context-eager', { toolPolicy: { core_tools: ['*'], max_active: 200 } });
  const deferredDir = controlDir(ctx.controlBase, 'context-deferred');
  const eager = await connectStdio({ label: 'gateway (eager)', ...gatewayCommand(ctx.root, eagerDir) });
  const eagerTools = eager.firstListing.raw.tools;
  const eagerRss = eager.peakRss();
  await eager.close();
  say(`  eager: ${eagerTools.length} tools listed (started in ${ms(eager.startMs)})`);
  const deferred = await connectStdio({ label: 'gateway (deferred)', ...gatewayCommand(ctx.root, deferredDir) });
  const deferredTools = deferred.firstListing.raw.tools;
  await deferred.close();
  say(`  deferred: ${deferredTools.length} tools listed (started in ${ms(deferred.startMs)})`);
  // Once more with the pins of the first start in place: the steady state of a restart.
  const again = await connectStdio({ label: 'gateway (deferred, restarted)', ...gatewayCommand(ctx.root, deferredDir) });
  await again.close();
  // The other way to say "everything": does `*:*` bind the same tools as `*`?
  const starStar = await connectStdio({ label: 'gateway (core_tools: ["*:*"])', ...gatewayCommand(ctx.root, controlDir(ctx.controlBase, 'context-eager-star-star', { toolPolicy: { core_tools: ['*:*'], max_active: 200 } })) });
  const starStarNames = starStar.firstListing.raw.tools.map((tool) => tool.name);
  await starStar.close();
  const fixture = await connectStdio({ label: 'fixture (direct)', ...fixtureCommand({ echo: false }) });
  const fixtureTools = fixture.firstListing.raw.tools;
  await fixture.close();

  // Does core_tools ["*"] bind everything? Every fs tool, every corpus tool, and the meta tools.
  const names = eagerTools.map((tool) => tool.name);
  const liveExpected = corpus.tools.map((tool) => `${LIVE}__${tool.name}`);
  const missing = [...fsTools, ...liveExpected, ...META_TOOLS].filter((name) => !names.includes(name));
  ctx.problems.check(missing.length === 0, `eager listing (core_tools: ["*"]) lacks ${missing.length} tools, e.g. ${missing.slice(0, 5).join(', ')}`);
  ctx.problems.check(names.length === fsTools.length + corpus.tools.length + META_TOOLS.length, `eager listing has ${names.length} tools, expected ${fsTools.length + corpus.tools.length + META_TOOLS.length}`);
  ctx.problems.check(canonical(starStarNames) === canonical(names), `core_tools ["*:*"] lists ${starStarNames.length} tools, ["*"] lists ${names.length}`);
  const byName = new Map(eagerTools.map((tool) => [tool.name, tool]));
  const altered = corpus.tools.filter((tool) => {
    const listed = byName.get(`${LIVE}__${tool.name}`);
    return listed && canonical({ d: listed.description, s: listed.inputSchema }) !== canonical({ d: tool.definition.description, s: tool.definition.inputSchema });
  });
  ctx.problems.check(altered.length === 0, `${altered.length} corpus tools are listed by the gateway with a changed description or input schema, e.g. ${altered[0]?.name}`);
  ctx.problems.check(fixtureTools.length === corpus.tools.length, `the fixture lists ${fixtureTools.length} tools, expected ${corpus.tools.length}`);
  const deferredNames = deferredTools.map((tool) => tool.name);
  ctx.problems.check(canonical(deferredNames) === canonical([...DEFAULT_CORE, ...META_TOOLS]), `deferred listing is ${deferredNames.join(', ')}; expected ${[...DEFAULT_CORE, ...META_TOOLS].join(', ')}`);

  const eagerM = await measureListing(eagerTools);
  const deferredM = await measureListing(deferredTools);
  const fixtureM = await measureListing(fixtureTools);
  const saving = (key, view = 'full') => 1 - deferredM[view][key] / eagerM[view][key];
  say(`  saving: ${pct(saving('o200k_base'))} of o200k_base tokens (${int(eagerM.full.o200k_base)} → ${int(deferredM.full.o200k_base)})`);
  return {
    corpus: { version: corpus.version, tools: corpus.tools.length, longestWireName: Math.max(...liveExpected.map((name) => name.length)), renamed: corpus.tools.filter((t) => t.name !== t.originalName).map((t) => `${t.server}:${t.originalName} → ${t.name}`) },
    fsTools: fsTools.length,
    eager: eagerM,
    deferred: deferredM,
    fixtureAlone: fixtureM,
    deferredNames,
    starStarSame: canonical(starStarNames) === canonical(names),
    saving: Object.fromEntries(['bytes', 'o200k_base', 'cl100k_base'].map((key) => [key, { full: saving(key), model: saving(key, 'model') }])),
    startup: [
      { label: `gateway, fs + ${LIVE} (${corpus.tools.length} tools), all eager, fresh control-plane folder`, ms: eager.startMs, rssKb: eagerRss },
      { label: `gateway, fs + ${LIVE}, deferred, fresh control-plane folder`, ms: deferred.startMs },
      { label: `gateway, fs + ${LIVE}, deferred, restarted (pins.json present)`, ms: again.startMs },
      { label: `fixture alone (${corpus.tools.length} tools)`, ms: fixture.startMs },
    ],
  };
}

function contextTable(c) {
  const row = (label, m) => [label, int(m.tools), int(m.full.bytes), int(m.full.o200k_base), int(m.full.cl100k_base), int(m.model.o200k_base)];
  return table(
    ['initial tools/list', 'tools', 'JSON bytes', 'tokens (o200k_base)', 'tokens (cl100k_base)', 'tokens, model view (o200k_base)'],
    [
      row(`all eager (tool_policy core_tools: ["*"])`, c.eager),
      row('deferred (default tool_policy)', c.deferred),
      ['**saving**', `${int(c.eager.tools - c.deferred.tools)} fewer`, pct(c.saving.bytes.full), `**${pct(c.saving.o200k_base.full)}**`, pct(c.saving.cl100k_base.full), pct(c.saving.o200k_base.model)],
      row(`for scale: the fixture's own tools/list`, c.fixtureAlone),
    ],
    ['l'],
  );
}

function startupTable(c) {
  return table(['start (spawn to the first tools/list reply)', 'time', 'peak RSS'], c.startup.map((s) => [s.label, ms(s.ms), s.rssKb ? s.rssKb.map((p) => mib(p.kb)).join(' + ') : '—']), ['l']);
}

// ── overhead: the same call direct and through the gateway ──────────────────────────────────

async function overheadCase(ctx) {
  const { set } = ctx;
  say(`Overhead: ${set.rounds} round(s); per echo case and round ${set.echo.calls} calls one at a time + ${set.echo.concurrentCalls} with ${set.concurrency} in flight (fs cases: ${set.fs.calls} + ${set.fs.concurrentCalls}), after warmup`);
  const gwOnDir = controlDir(ctx.controlBase, 'gateway-audit-on', { echo: true, permissions: { allow: [`${LIVE}:echo`] } });
  const gwOffDir = controlDir(ctx.controlBase, 'gateway-audit-off', { echo: true, permissions: { allow: [`${LIVE}:echo`] }, audit: { enabled: false } });
  const fsDir = controlDir(ctx.controlBase, 'fs-direct');
  const servers = {};
  ctx.open = servers;
  servers.fixture = await connectStdio({ label: 'fixture (direct)', ...fixtureCommand({ echo: true }) });
  servers.relay = await connectStdio({ label: 'byte relay → fixture', ...relayCommand(fixtureCommand({ echo: true })) });
  servers.fs = await connectStdio({ label: 'fs (direct)', ...fsCommand(ctx.root, fsDir) });
  servers.gwOn = await connectStdio({ label: 'gateway (audit on)', ...gatewayCommand(ctx.root, gwOnDir) });
  servers.gwOff = await connectStdio({ label: 'gateway (audit off)', ...gatewayCommand(ctx.root, gwOffDir) });
  const echoWire = `${LIVE}__${ECHO_TOOL.name}`;
  for (const gw of [servers.gwOn, servers.gwOff]) {
    await gw.call('load_tools', { names: [echoWire] });
    const { raw } = await gw.listToolsRaw();
    ctx.problems.check(raw.tools.some((tool) => tool.name === echoWire), `${gw.label}: ${echoWire} is not listed after load_tools`);
  }
  const fsText = await servers.fs.call('read_file', { path: SMALL_FILE });
  ctx.problems.check(fsText.includes('line 20 of a small file'), `fs read_file ${SMALL_FILE} returned ${JSON.stringify(fsText.slice(0, 100))}`);

  const echoArgs = { text: ECHO_TEXT };
  const fsArgs = { path: SMALL_FILE };
  const variant = (group, label, server, audit, name, args, expect) => ({ group, label, server, audit, expect, send: () => server.call(name, args), request: `${name} ${JSON.stringify(args)}` });
  // A third-party server's results reach the client labelled as untrusted content (the default: no trust grant).
  const wrappedEcho = `<untrusted_external_content source="${LIVE} (third-party MCP server)">\n${ECHO_TEXT}\n</untrusted_external_content>`;
  const variants = [
    variant('echo', 'direct: fixture echo', servers.fixture, 'none (the fixture neither gates nor audits)', 'echo', echoArgs, ECHO_TEXT),
    variant('echo', 'reference: byte relay → fixture echo', servers.relay, 'none (the relay only copies bytes)', 'echo', echoArgs, ECHO_TEXT),
    variant('echo', 'gateway: call_tool → live__echo', servers.gwOn, 'on', 'call_tool', { name: echoWire, arguments: echoArgs }, wrappedEcho),
    variant('echo', 'gateway: live__echo (loaded, bound)', servers.gwOn, 'on', echoWire, echoArgs, wrappedEcho),
    variant('echo', 'gateway: call_tool → live__echo', servers.gwOff, 'off', 'call_tool', { name: echoWire, arguments: echoArgs }, wrappedEcho),
    variant('echo', 'gateway: live__echo (loaded, bound)', servers.gwOff, 'off', echoWire, echoArgs, wrappedEcho),
    variant('fs', 'direct: fs read_file', servers.fs, 'on (fs)', 'read_file', fsArgs, fsText),
    variant('fs', 'gateway: fs__read_file (core, bound)', servers.gwOn, 'on (gateway + fs)', 'fs__read_file', fsArgs, fsText),
    variant('fs', 'gateway: call_tool → fs__read_file', servers.gwOn, 'on (gateway + fs)', 'call_tool', { name: 'fs__read_file', arguments: fsArgs }, fsText),
  ];
  const all = Object.values(servers);
  /** Runs one batch and adds up the CPU time its server (with its children), the other, idle servers and this client used. */
  const measured = async (v, count, concurrency, cpu) => {
    const before = all.map((server) => server.cpuMs());
    const client = process.cpuUsage();
    const batch = await runBatch(v, count, concurrency);
    const used = process.cpuUsage(client);
    all.forEach((server, i) => {
      const ms = server.cpuMs() - before[i];
      if (server === v.server) cpu.server += ms;
      else cpu.idle += ms;
    });
    cpu.client += (used.user + used.system) / 1000;
    cpu.calls += count;
    return batch;
  };
  for (const v of variants) {
    v.rounds = { sequential: [], concurrent: [] };
    v.cpu = { sequential: { server: 0, idle: 0, client: 0, calls: 0 }, concurrent: { server: 0, idle: 0, client: 0, calls: 0 } };
    v.label = `${v.label}${v.group === 'echo' && v.label.startsWith('gateway') ? `, audit ${v.audit}` : ''}`;
  }

  for (const v of variants) {
    await runBatch(v, set[v.group].warmup, 1);
    await runBatch(v, set[v.group].warmup, set.concurrency);
  }
  for (let round = 0; round < set.rounds; round++) {
    // Rotate the order each round so that no case always runs first or last.
    const order = variants.map((_, i) => variants[(i + round * 3) % variants.length]);
    for (const v of order) {
      const seq = await measured(v, set[v.group].calls, 1, v.cpu.sequential);
      const conc = await measured(v, set[v.group].concurrentCalls, set.concurrency, v.cpu.concurrent);
      v.rounds.sequential.push(seq);
      v.rounds.concurrent.push(conc);
      say(`  round ${round + 1}/${set.rounds} ${v.label}: ${int(seq.callsPerSecond)} calls/s sequential, ${int(conc.callsPerSecond)} calls/s ${set.concurrency} in flight`);
    }
  }

  const auditLines = await auditLinesPerCall(ctx, servers.gwOn, gwOnDir, echoWire, echoArgs, fsArgs);
  const rss = Object.fromEntries(Object.entries(servers).map(([key, server]) => [key, server.peakRss()]));
  const callsBy = new Map();
  for (const v of variants) {
    const { warmup, calls, concurrentCalls } = set[v.group];
    const made = 2 * warmup + set.rounds * (calls + concurrentCalls);
    callsBy.set(v.server, (callsBy.get(v.server) ?? 0) + made);
  }
  const stops = [];
  for (const server of Object.values(servers)) {
    say(`  stopping ${server.label} after ${int(callsBy.get(server) ?? 0)} calls`);
    const stop = await server.close();
    stops.push({ label: server.label, calls: callsBy.get(server) ?? 0, ms: stop.ms, exit: stop.exit, killed: stop.killed, rssKb: rss[Object.keys(servers).find((key) => servers[key] === server)].map((p) => p.kb) });
    ctx.problems.check(stop.killed.length === 0, `${server.label}: ${stop.killed.length} of its processes were still alive ${EXIT_GRACE_MS / 1000} s after the client closed and were killed by the bench (pids ${stop.killed.join(', ')})`);
  }
  ctx.open = undefined;

  const rows = variants.map((v) => ({
    group: v.group,
    label: v.label,
    audit: v.audit,
    request: v.request,
    sequential: { ...summarize(v.rounds.sequential), cpu: perCall(v.cpu.sequential) },
    concurrent: { ...summarize(v.rounds.concurrent), cpu: perCall(v.cpu.concurrent) },
  }));
  for (const group of ['echo', 'fs']) {
    const direct = rows.find((row) => row.group === group);
    for (const row of rows.filter((r) => r.group === group)) {
      row.sequential.vsDirect = row.sequential.callsPerSecond / direct.sequential.callsPerSecond;
      row.concurrent.vsDirect = row.concurrent.callsPerSecond / direct.concurrent.callsPerSecond;
    }
  }
  return { rows, auditLines, stops };
}

/** CPU µs per call: the server side (a gateway with its downstream servers), the idle servers, the bench client. */
function perCall(cpu) {
  const us = (ms) => (1000 * ms) / cpu.calls;
  return { serverUs: us(cpu.server), idleUs: us(cpu.idle), clientUs: us(cpu.client) };
}

/** Audit lines each kind of call adds (gateway.jsonl and fs.jsonl), counted over a few extra calls. */
async function auditLinesPerCall(ctx, gw, dir, echoWire, echoArgs, fsArgs) {
  const count = (file) => {
    try {
      return readFileSync(join(dir, 'audit', file), 'utf8').split('\n').filter(Boolean).length;
    } catch {
      return 0;
    }
  };
  const N = 10;
  const kinds = [
    ['call_tool → live__echo', 'call_tool', { name: echoWire, arguments: echoArgs }],
    ['live__echo (bound)', echoWire, echoArgs],
    ['fs__read_file (bound)', 'fs__read_file', fsArgs],
    ['call_tool → fs__read_file', 'call_tool', { name: 'fs__read_file', arguments: fsArgs }],
  ];
  const result = [];
  for (const [label, name, args] of kinds) {
    const before = { gateway: count('gateway.jsonl'), fs: count('fs.jsonl') };
    for (let i = 0; i < N; i++) await gw.call(name, args);
    result.push({ call: label, gateway: (count('gateway.jsonl') - before.gateway) / N, fs: (count('fs.jsonl') - before.fs) / N });
  }
  return result;
}

function overheadTable(rows, set) {
  const lines = [];
  for (const row of rows) {
    for (const [mode, m] of [['1 (sequential)', row.sequential], [String(set.concurrency), row.concurrent]]) {
      lines.push([
        row.label,
        mode,
        int(m.callsPerSecond),
        ms(m.p50Ms),
        ms(m.p99Ms),
        row.label.startsWith('direct') ? '1.00× (baseline)' : `${m.vsDirect.toFixed(2)}×`,
        `${int(m.cpu.serverUs)} µs`,
        `${int(m.cpu.clientUs)} µs`,
      ]);
    }
  }
  return table(['case', 'in flight', 'calls/s', 'p50', 'p99', 'calls/s vs direct', 'server CPU / call', 'client CPU / call'], lines, ['l']);
}

function howItEnded(stop) {
  if (!stop.exit) return 'still running (killed by the bench)';
  if (stop.exit.signal === 'SIGKILL') return 'killed (SIGKILL) by the SDK client 4 s after stdin closed';
  if (stop.exit.signal === 'SIGTERM') return 'ended by SIGTERM, sent by the SDK client 2 s after stdin closed';
  if (stop.exit.signal) return `ended by ${stop.exit.signal}`;
  return `exited by itself (code ${stop.exit.code})`;
}

function stopTable(stops) {
  return table(
    ['stop (stdin closed → every process gone)', 'calls served', 'peak RSS (server + its children)', 'time', 'how the server process ended'],
    stops.map((s) => [s.label, int(s.calls), s.rssKb.map(mib).join(' + '), ms(s.ms), howItEnded(s)]),
    ['l', 'r', 'r', 'r', 'l'],
  );
}

// ── targets and output ──────────────────────────────────────────────────────────────────────

function targets(context, overhead) {
  const saving = context.saving.o200k_base.full;
  const lines = [
    `- Context saved ≥ ${pct(TARGET_SAVING)}: ${verdict(saving >= TARGET_SAVING)} — ${pct(saving)} fewer o200k_base tokens (${pct(context.saving.cl100k_base.full)} cl100k_base, ${pct(context.saving.bytes.full)} bytes) in the initial tools/list: ${int(context.eager.full.o200k_base)} → ${int(context.deferred.full.o200k_base)} tokens, ${int(context.eager.tools)} → ${int(context.deferred.tools)} tools.`,
  ];
  const gatewayRows = overhead.rows.filter((row) => row.label.startsWith('gateway'));
  const describe = (row) => `${row.label}: ${row.sequential.vsDirect.toFixed(2)}× sequential, ${row.concurrent.vsDirect.toFixed(2)}× in flight`;
  const meets = (row) => row.sequential.vsDirect >= TARGET_THROUGHPUT && row.concurrent.vsDirect >= TARGET_THROUGHPUT;
  const defaults = gatewayRows.filter((row) => !row.audit.startsWith('off'));
  lines.push(
    `- Throughput ≥ ${TARGET_THROUGHPUT}× direct, default configuration (audit on): ${verdict(defaults.every(meets))} — ${defaults.map(describe).join('; ')}.`,
  );
  const off = gatewayRows.filter((row) => row.audit.startsWith('off'));
  lines.push(`- The same with the gateway's audit off (for reference): ${verdict(off.every(meets))} — ${off.map(describe).join('; ')}.`);
  const relay = overhead.rows.find((row) => row.label.startsWith('reference'));
  lines.push(
    `- For scale, the floor of any stdio proxy here: a relay that copies bytes and parses nothing reaches ${relay.sequential.vsDirect.toFixed(2)}× sequential and ${relay.concurrent.vsDirect.toFixed(2)}× in flight of the direct echo (${int(relay.sequential.cpu.serverUs)} and ${int(relay.concurrent.cpu.serverUs)} µs of CPU per call for relay and fixture together).`,
  );
  return lines.join('\n');
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

function machine(stale, loadAtStart) {
  const cpu = cpus();
  const git = (...args) => spawnSync('git', args, { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = git('status', '--porcelain', '--', 'servers/gateway', 'servers/fs', 'shared') !== '';
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    load: `load average ${loadAtStart} at the start, ${load()} at the end (1, 5, 15 min)`,
    commit: `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' (servers/gateway, servers/fs or shared modified)' : ''}${stale.length > 0 ? `; built before the latest edits to ${stale.join(', ')}` : ''}`,
  };
}

function notes(context, overhead, set) {
  const audit = overhead.auditLines.map((a) => `${a.call}: ${a.gateway} in gateway.jsonl, ${a.fs} in fs.jsonl`).join('; ');
  return `Notes:
- Context: the gateway runs the built-in fs (${context.fsTools} tools) and the fixture \`bench/fixtures/livemcp-server.mjs\` under the namespace \`${LIVE}\`, which lists the ${context.corpus.tools} tools of LiveMCPTool (${context.corpus.version}, read from \`../shared/datasets/tool-retrieval/livemcptool/tools.json\`) with their real descriptions and input schemas. The ${context.corpus.renamed.length} tools whose names several corpus servers share (\`read_file\`, \`search\`…) get their server as a prefix (\`filesystem_read_file\`); every other tool keeps its real name. The longest wire name (\`${LIVE}__…\`) has ${context.corpus.longestWireName} characters, within MCP's 64. The eager listing was checked to hold every fs, ${LIVE} and meta tool with the corpus's own description and schema, so \`core_tools: ["*"]\` binds everything${context.starStarSame ? '; \`["*:*"]\` lists exactly the same tools' : ''}.
- Measured is the \`tools\` array of the first tools/list reply exactly as it came over the wire, as compact JSON. Tokens are counted with js-tiktoken (o200k_base: GPT-4o and later; cl100k_base: GPT-4); other models' tokenizers differ by a few percent. "Model view" keeps only name, description and input schema per tool, what many clients pass to the model.
- Overhead: client-side round trips of \`tools/call\` through the MCP SDK client over stdio, the same client for every case, each reply checked. Each round runs every case once (echo: ${set.echo.calls} calls one at a time, then ${set.echo.concurrentCalls} with ${set.concurrency} in flight; fs: ${set.fs.calls}, then ${set.fs.concurrentCalls}), in a rotated order; ${set.rounds} round(s) after ${set.echo.warmup} (fs: ${set.fs.warmup}) warmup calls one at a time and as many in flight per case. calls/s is the median round's; p50/p99 pool every call of every round.
- CPU per call is user + system time from /proc (10 ms ticks, summed over all rounds of a case): "server" is the server process of the row with every process it started (for a gateway row: the gateway, the fixture and fs), "client" is this bench process. The idle servers used ${int(Math.max(...overhead.rows.flatMap((row) => [row.sequential.cpu.idleUs, row.concurrent.cpu.idleUs])))} µs per call at most while another case ran.
- The reference row puts \`bench/lib/gateway-relay.mjs\` in front of the same fixture: a process that copies bytes between its stdio and the fixture's and parses nothing. It pays only what any stdio proxy pays (one more process, one more pipe hop each way, on the same 2 cores), so its ratio bounds what a proxy that parses, validates, gates and audits can reach.
- The direct echo server (the fixture) neither gates nor audits. Through the gateway every call is validated against the tool's schema, has its result labelled as untrusted content with invisible characters written out and secrets redacted (the fixture is a third-party server without \`trust: results\`), goes through the permission gate (\`permissions.yaml\`: \`allow: ["${LIVE}:echo"]\`) and, audit on, appends a hash-chained line to \`audit/gateway.jsonl\` (call_tool adds a second line for the meta call). Audit lines per call (counted over 10 extra calls): ${audit}.
- fs: direct is \`servers/fs/dist/cli.js --root DIR\` with its own gate and audit (the default); through the gateway fs runs with \`--gated-by-gateway\` and still audits, so each call writes audit lines in both processes.
${overhead.rows.some((row) => row.group === 'fs' && !row.label.startsWith('direct') && Math.max(row.sequential.vsDirect, row.concurrent.vsDirect) > 1.1) ? '- fs rows above 1× mean the fs process started on its own was slower than the same server behind the gateway: compare "server CPU / call" (for a gateway row it includes fs). The fs server allocates a 1 MiB read buffer for every read_file, even of a 20-line file, so how often V8 collects garbage, and so its CPU and p99, differs from one fs process to the next.\n' : ''}- Start-up: from spawn to the reply to the first tools/list (the gateway answers once every downstream server has started and listed its tools; on a fresh control-plane folder it also pins every tool's definition). Stop: from closing the server's stdin until it and every process it started are gone; the SDK client sends SIGTERM 2 s after closing stdin and SIGKILL 2 s later. Peak RSS is VmHWM of each process.
- The machine has ${cpus().length} cores; through the gateway three processes (bench client, gateway, server) share them against two for a direct call, which the in-flight rows feel most.`;
}

function writeResults(dir, { command, set, stale, loadAtStart, context, overhead, text, problems }) {
  mkdirSync(dir, { recursive: true });
  const info = machine(stale, loadAtStart);
  const date = new Date().toISOString();
  const header = `# gateway benchmark\n\nCommand: \`${command}\`  \nDate: ${date}  \nMachine: ${info.cpus}, ${info.memory} RAM, ${info.os}, Node ${info.node}, ${info.load}  \nBulkhead commit: ${info.commit}\n`;
  writeResult(join(dir, 'gateway.md'), `${header}\n${text}\n`);
  const json = { command, date, machine: info, set, context, overhead, problems };
  writeResult(join(dir, 'gateway.json'), `${JSON.stringify(json, null, 2)}\n`);
}

export async function main(argv) {
  const { set, official, command } = parseOptions(argv);
  stopChildrenOnExit();
  const stale = checkBuild();
  try {
    checkDataset();
  } catch (error) {
    say(`bench gateway: ${error.message}`);
    process.exit(2);
  }
  const started = Date.now();
  const loadAtStart = load();
  if (loadavg()[0] > 0.5) say(`warning: the machine is busy (load average ${loadAtStart}); other processes skew the overhead numbers`);
  const { root, controlBase } = prepareWorkspace();
  const ctx = { set, root, controlBase, problems: new Problems(), open: undefined };
  let context;
  let overhead;
  try {
    context = await contextCase(ctx);
    overhead = await overheadCase(ctx);
  } finally {
    if (ctx.open) for (const server of Object.values(ctx.open)) await server.close();
  }

  const problemText = ctx.problems.list.length ? `\n**Problems:**\n${ctx.problems.list.map((p) => `- ${p}`).join('\n')}\n` : '\nAll checks passed (listings, replies of every call, no process left behind).\n';
  const text = [
    '## Context saved: the initial tools/list',
    contextTable(context),
    '## Overhead: the same call direct and through the gateway',
    overheadTable(overhead.rows, set),
    '## Start-up and shut-down',
    startupTable(context),
    stopTable(overhead.stops),
    '## Targets',
    targets(context, overhead),
    problemText,
    notes(context, overhead, set),
  ].join('\n\n');
  const resultsDir = official ? join(BENCH, 'results') : join(WORK, '..', 'results');
  writeResults(resultsDir, { command, set, stale, loadAtStart, context, overhead, text, problems: ctx.problems.list });
  process.stdout.write(`\n${text}\n\nWritten to ${relative(process.cwd(), join(resultsDir, 'gateway.md'))} and gateway.json (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  if (ctx.problems.list.length > 0) process.exitCode = 1;
}
