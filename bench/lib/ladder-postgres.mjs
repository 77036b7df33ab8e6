// `pnpm bench ladder --backend postgres`: the ladder on PostgreSQL (issue 19's benchmark).
//   1. Claim+answer throughput over one lane of N asks with 1, 4, 8 and 16 clients: MCP clients over
//      Streamable HTTP spread over one and over two `bulkhead-ladder --http` processes, the store
//      in-process (PgWorkQueueStore in N worker processes), and the same claim as raw SQL (N
//      connections; bare, and with the event rows), rounds with the order rotating; every ask
//      checked in SQL to be answered exactly once.
//   2. Fencing under kill -9: two servers, clients with a short lease, one server killed mid-run.
//   3. ladder_search p50/p99 over 100,000 rungs through PgRungStore (bench/lib/ladder-rungs.mjs's workload).
// A durable throwaway cluster (fsync on) under bench/.work is started for the run and removed after.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PgDatabase } from '../../servers/ladder/dist/store/pg/database.js';
import { rawSql, schemaShape, TEMPLATE, VERIFY } from './ladder-postgres-sql.mjs';
import { adminClient, startBenchDatabase, startLadderServer } from './ladder-postgres-servers.mjs';
import { cpuTimeMs } from './processes.mjs';
import { forkWorker } from './workers.mjs';

const WORKER = fileURLToPath(new URL('./ladder-postgres-worker.mjs', import.meta.url));
/** MCP clients one worker process drives (their calls overlap), so 16 clients take 4 processes. */
export const CLIENTS_PER_PROCESS = 4;
export const BASE_VARIANTS = ['store', 'raw-bare', 'raw-events'];
const POST_CONCURRENCY = 32;
/** The kill run: lease of every claim, share of the queue answered before the kill, and how long the survivors get. */
export const KILL = { leaseSeconds: 2, killAtShare: 0.3, clients: 8, finishTimeoutMs: 300_000 };
const LANE = { repo: 'bench/claims', title: 'claim bench' };

export const mcpVariant = (servers) => `mcp-${servers}`;
export const isMcp = (variant) => variant.startsWith('mcp-');

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const ms = (n) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));
const int = (n) => Math.round(n).toLocaleString('en-US');

async function openStore(database) {
  const { PgWorkQueueStore } = await import('../../servers/ladder/dist/store/pg/work-queue.js');
  const db = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, source: 'the bench' });
  return { db, store: await PgWorkQueueStore.open(db, {}) };
}

/** Posts the queue through the store (POST_CONCURRENCY at a time), then keeps a copy every run restores. */
async function makeQueue(store, admin, asks) {
  const lane = await store.proposeLane(LANE, 'coordinator');
  let next = 0;
  const poster = async () => {
    while (next < asks) {
      const i = next++;
      await store.postAsk({ lane_id: lane.id, kind: 'work', title: `ask ${i}`, priority: i % 10 }, 'coordinator');
    }
  };
  await Promise.all(Array.from({ length: POST_CONCURRENCY }, poster));
  for (const sql of TEMPLATE.save) await admin.query(sql, sql.includes('$1') ? [lane.id] : []);
  return lane.id;
}

export async function restoreQueue(admin) {
  await admin.query('BEGIN');
  try {
    for (const sql of TEMPLATE.restore) await admin.query(sql);
    await admin.query('COMMIT');
  } catch (error) {
    await admin.query('ROLLBACK');
    throw error;
  }
  for (const sql of TEMPLATE.settle) await admin.query(sql);
}

/** The clients of one run, grouped into worker processes: MCP clients a few per process, the others one each. */
function workerConfigs({ variant, clients, laneId, database, shape, servers, tokens, kill }) {
  const specs = Array.from({ length: clients }, (_, i) => ({ actor: tokens[i].actor, token: tokens[i].secret, ...(isMcp(variant) ? { url: servers[i % servers.length].url } : {}) }));
  const perProcess = isMcp(variant) ? CLIENTS_PER_PROCESS : 1;
  const groups = Array.from({ length: Math.ceil(clients / perProcess) }, () => []);
  specs.forEach((spec, i) => groups[i % groups.length].push(spec));
  const common = { variant: isMcp(variant) ? 'mcp' : variant, laneId, db: { url: database.url, passwordFile: database.passwordFile }, shape, ...(kill ? { kill: true, leaseSeconds: KILL.leaseSeconds } : {}) };
  return groups.map((group) => ({ ...common, clients: group }));
}

async function stopWorkers(workers) {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
}

/** The checks of a throughput run, in SQL: every ask answered complete once, fence 1, attempts 1, by the client that reported it, with its events. */
async function verifyRun(admin, laneId, asks, clientResults, withEvents) {
  const problems = [];
  const ids = clientResults.flatMap((r) => r.ids);
  const distinct = new Set(ids);
  if (ids.length !== asks) problems.push(`clients reported ${ids.length} answers for ${asks} asks`);
  if (distinct.size !== ids.length) problems.push(`${ids.length - distinct.size} asks reported by more than one client`);
  const states = (await admin.query(VERIFY.states, [laneId])).rows;
  if (states.length !== 1 || states[0].state !== 'answered' || states[0].n !== asks) problems.push(`states ${JSON.stringify(states)}`);
  const wrong = (await admin.query(VERIFY.wrong, [laneId, withEvents ? 1 : 0])).rows[0].n;
  if (wrong !== 0) problems.push(`${wrong} asks without exactly one claim and one answer at fence 1`);
  const holders = new Map((await admin.query(VERIFY.holders, [laneId])).rows.map((row) => [row.id, row.holder]));
  let misattributed = 0;
  for (const r of clientResults) for (const id of r.ids) if (holders.get(id) !== r.actor) misattributed++;
  if (misattributed) problems.push(`${misattributed} asks answered by another actor than the client that reported them`);
  return { ok: problems.length === 0, problems };
}

/** One run: restore the queue, start the clients, send "go" to all at once, time to the last answer, verify. */
export async function runOnce(ctx, variant, clients) {
  await restoreQueue(ctx.admin);
  const servers = isMcp(variant) ? ctx.servers.slice(0, Number(variant.slice('mcp-'.length))) : [];
  const configs = workerConfigs({ ...ctx, variant, clients, servers });
  const workers = configs.map((config, i) => forkWorker(WORKER, [JSON.stringify(config)], `${variant} worker ${i}`, (message) => (message?.results ? message : undefined)));
  const serversCpuMs = () => servers.reduce((sum, server) => sum + (cpuTimeMs(server.pid) ?? Number.NaN), 0);
  try {
    await Promise.all(workers.map((w) => w.ready));
    const serversCpuAtGo = serversCpuMs();
    const goAt = performance.timeOrigin + performance.now();
    for (const w of workers) w.child.send('go');
    const reports = await Promise.all(workers.map((w) => w.report));
    const serversCpu = serversCpuMs() - serversCpuAtGo;
    const results = reports.flatMap((report) => report.results);
    const wallMs = Math.max(...results.map((r) => r.endedAt)) - goAt;
    const check = await verifyRun(ctx.admin, ctx.laneId, ctx.asks, results, variant !== 'raw-bare');
    // CPU per MCP call (a claim and an answer per ask; each client's last, empty claim left out): in the servers, and in the client processes.
    const calls = ctx.asks * 2;
    const cpuPerCall = isMcp(variant) ? { serverMs: serversCpu / calls, clientMs: reports.reduce((sum, report) => sum + report.cpuMs, 0) / calls } : undefined;
    return { variant, clients, servers: servers.length, processes: workers.length, asks: ctx.asks, wallMs, perSecond: (ctx.asks / wallMs) * 1000, perClient: results.map((r) => r.ids.length), cpuPerCall, check };
  } finally {
    await stopWorkers(workers);
  }
}

/** The variants a client count runs: the three without MCP, and MCP over each server count that has a client per server. */
export function variantsFor(clients, serverCounts) {
  return [...BASE_VARIANTS, ...serverCounts.filter((s) => s <= clients).map(mcpVariant)];
}

async function runClaims(ctx, options, log) {
  const runs = [];
  let turn = 0;
  for (let round = 0; round < options.rounds; round++) {
    for (const clients of options.clients) {
      const variants = variantsFor(clients, options.servers);
      // The variant that goes first rotates, so none always runs on the coldest or warmest machine.
      const order = variants.map((_, i) => variants[(i + turn) % variants.length]);
      turn++;
      for (const variant of order) {
        const result = await runOnce(ctx, variant, clients);
        result.round = round;
        runs.push(result);
        log(
          `  round ${round + 1}/${options.rounds} ${String(clients).padStart(2)} clients ${variant.padEnd(10)} ${int(result.perSecond).padStart(7)} claim+answer/s  ${ms(result.wallMs).padStart(7)} ms  ${result.check.ok ? 'verified' : `FAILED: ${result.check.problems.join('; ')}`}${result.cpuPerCall ? `  CPU per call: server ${result.cpuPerCall.serverMs.toFixed(2)} ms, client ${result.cpuPerCall.clientMs.toFixed(2)} ms` : ''}\n`,
        );
      }
    }
  }
  const rows = options.clients.map((clients) => {
    const variants = variantsFor(clients, options.servers);
    const of = (variant) => runs.filter((r) => r.clients === clients && r.variant === variant);
    const stats = Object.fromEntries(
      variants.map((variant) => {
        const rates = of(variant).map((r) => r.perSecond);
        const cpu = of(variant).map((r) => r.cpuPerCall).filter(Boolean);
        const cpuPerCall = cpu.length ? { serverMs: median(cpu.map((c) => c.serverMs)), clientMs: median(cpu.map((c) => c.clientMs)) } : undefined;
        return [variant, { median: median(rates), min: Math.min(...rates), max: Math.max(...rates), rates, ...(cpuPerCall ? { cpuPerCall } : {}) }];
      }),
    );
    const ratio = (variant, base) => stats[variant].median / stats[base].median;
    const ratios = Object.fromEntries(variants.filter((v) => !v.startsWith('raw-')).map((v) => [v, { events: ratio(v, 'raw-events'), bare: ratio(v, 'raw-bare') }]));
    return { clients, stats, ratios, verified: runs.filter((r) => r.clients === clients).every((r) => r.check.ok) };
  });
  return { rows, runs: runs.map(({ check, ...rest }) => ({ ...rest, verified: check.ok, problems: check.problems })) };
}

/**
 * Two servers, KILL.clients clients over them with a short lease; once KILL.killAtShare of the
 * queue is answered the first server gets SIGKILL. The second server's clients finish the queue
 * (asks held through the dead server lapse and are claimed again with a higher fence); then each
 * client of the dead server answers the claim it held through the survivor with its old fence.
 */
async function runKill(ctx, options, log) {
  await restoreQueue(ctx.admin);
  const clients = Math.min(KILL.clients, ctx.tokens.length);
  const configs = workerConfigs({ ...ctx, variant: mcpVariant(2), clients, servers: ctx.servers.slice(0, 2), kill: true });
  const workers = configs.map((config, i) => forkWorker(WORKER, [JSON.stringify(config)], `kill worker ${i}`, (message) => message?.results));
  const [victim, survivor] = ctx.servers;
  try {
    await Promise.all(workers.map((w) => w.ready));
    const goAt = performance.now();
    for (const w of workers) w.child.send('go');
    const answered = async () => (await ctx.admin.query(VERIFY.answeredCount, [ctx.laneId])).rows[0].n;
    let atKill;
    while ((atKill = await answered()) < Math.ceil(ctx.asks * KILL.killAtShare)) await sleep(20);
    await victim.kill();
    const killedAt = performance.now();
    log(`  kill -9 ${victim.name} (pid ${victim.pid}) after ${int(atKill)} of ${int(ctx.asks)} asks answered\n`);
    let done;
    while ((done = await answered()) < ctx.asks) {
      if (performance.now() - killedAt > KILL.finishTimeoutMs) throw new Error(`the survivors answered only ${done} of ${ctx.asks} asks within ${KILL.finishTimeoutMs / 1000} s of the kill`);
      await sleep(50);
    }
    const finishedAt = performance.now();
    for (const w of workers) w.child.send({ late: survivor.url });
    for (const w of workers) w.child.send('stop');
    const results = (await Promise.all(workers.map((w) => w.report))).flat();
    return { ...(await checkKill(ctx, results, clients)), answeredAtKill: atKill, killAfterMs: killedAt - goAt, finishAfterKillMs: finishedAt - killedAt, leaseSeconds: KILL.leaseSeconds, clients, servers: 2 };
  } finally {
    await stopWorkers(workers);
  }
}

/** What the kill run left, from the rows and events: lost, answered twice, reclaimed, and the late answers with old fences. */
async function checkKill(ctx, results, clients) {
  const rows = (await ctx.admin.query(VERIFY.kill, [ctx.laneId])).rows;
  const byId = new Map(rows.map((row) => [row.id, row]));
  const orphans = results.filter((r) => r.orphaned);
  const late = orphans.map((r) => r.late).filter(Boolean);
  // A late answer whose fence is the one the ask was answered with was the client's own answer, committed before its reply was lost.
  const ownLost = late.filter((l) => byId.get(l.id)?.answered_fence === l.fence);
  const superseded = late.filter((l) => byId.get(l.id)?.answered_fence !== l.fence);
  const reported = results.flatMap((r) => r.ids).concat(late.filter((l) => l.accepted).map((l) => l.id));
  const problems = [];
  const lost = rows.filter((row) => row.state !== 'answered' || row.answered !== 1);
  const twice = rows.filter((row) => row.answered > 1 || row.answered_by_events > 1);
  if (lost.length) problems.push(`${lost.length} asks not answered exactly once`);
  if (twice.length) problems.push(`${twice.length} asks answered twice`);
  if (new Set(reported).size !== reported.length) problems.push(`${reported.length - new Set(reported).size} asks reported answered by two clients`);
  const acceptedSuperseded = superseded.filter((l) => l.accepted);
  if (acceptedSuperseded.length) problems.push(`${acceptedSuperseded.length} answers with a superseded fence were accepted`);
  const reclaimed = rows.filter((row) => row.claimed > 1);
  const refusals = {};
  for (const l of superseded.filter((x) => !x.accepted)) {
    const reason = /superseded by fence/.test(l.refusal) ? 'superseded (held by another, higher fence)' : /already answered/.test(l.refusal) ? 'already answered by the reclaiming client' : l.refusal.slice(0, 120);
    refusals[reason] = (refusals[reason] ?? 0) + 1;
  }
  return {
    ok: problems.length === 0,
    problems,
    asks: rows.length,
    answered: rows.filter((row) => row.state === 'answered').length,
    lost: lost.length,
    answeredTwice: twice.length,
    reclaimed: reclaimed.length,
    maxFence: Math.max(...rows.map((row) => row.fence)),
    orphanedClients: orphans.length,
    survivingClients: clients - orphans.length,
    heldAtKill: orphans.filter((r) => r.held).length,
    lateAnswers: late.length,
    lateOwnAnswerRepliesLost: ownLost.length,
    superseded: superseded.length,
    supersededRefused: superseded.length - acceptedSuperseded.length,
    supersededAccepted: acceptedSuperseded.length,
    refusals,
    orphanErrors: orphans.map((r) => r.errors[0]).filter(Boolean).slice(0, 3),
  };
}

/** An MCP client of `server` acting as its operator (the --token-file token), for ladder_search. */
async function operatorClient(server) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name: 'bulkhead-bench-ladder', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${server.operatorToken}` } } }));
  return client;
}

/**
 * ladder_search through PgRungStore in-process, then the same queries through a ladder server's
 * ladder_search tool (MCP over Streamable HTTP: the gate, the audit line and the reply around it).
 */
async function runSearch(database, options, workDir, log) {
  const { searchWorkload } = await import('./ladder-rungs.mjs');
  const { PgRungStore } = await import('../../servers/ladder/dist/store/pg/rungs.js');
  const { Ladder } = await import('../../servers/ladder/dist/ladder/ladder.js');
  const db = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, source: 'the bench' });
  let store;
  let server;
  let client;
  try {
    store = await PgRungStore.open(db);
    const countRungs = async () => Number((await db.one('SELECT count(*) AS n FROM rungs')).n);
    log(`ladder_search: loading ${int(options.rungs)} rungs through PgRungStore and running 1,000 queries ...\n`);
    // The planner's word statistics and the rows' visibility, as autovacuum settles them within a
    // minute of such a load: without statistics every search takes the GIN index, even for a word
    // in most rungs.
    const analyze = () => db.run('VACUUM ANALYZE rungs');
    const result = await searchWorkload({ store, ladder: new Ladder(store), rungs: options.rungs, countRungs, afterLoad: analyze });
    log(`  in-process: p50 ${ms(result.p50)} ms, p99 ${ms(result.p99)} ms (load ${result.loadMs === null ? 'skipped' : `${ms(result.loadMs / 1000)} s`})\n`);
    server = await startLadderServer(join(workDir, 'search-server'), database, 'search server');
    client = await operatorClient(server);
    const overMcp = {
      async search(query, { limit, repo } = {}) {
        const reply = await client.callTool({ name: 'ladder_search', arguments: { query, ...(limit ? { limit } : {}), ...(repo ? { repo } : {}) } });
        if (reply.isError) throw new Error(`ladder_search ${JSON.stringify(query)} was refused: ${reply.content?.[0]?.text}`);
        return reply.structuredContent;
      },
    };
    const mcp = await searchWorkload({ store, ladder: overMcp, rungs: options.rungs, countRungs });
    log(`  through a ladder server (MCP): p50 ${ms(mcp.p50)} ms, p99 ${ms(mcp.p99)} ms\n`);
    if (mcp.meanHits !== result.meanHits || mcp.broadQueries !== result.broadQueries) throw new Error(`ladder_search through the server found other hits (${mcp.meanHits}/${mcp.broadQueries} broad) than in-process (${result.meanHits}/${result.broadQueries})`);
    const { loadMs, rungs, queries, meanHits, broadQueries, ...timesOverMcp } = mcp;
    return { ...result, overMcp: timesOverMcp };
  } finally {
    await client?.close().catch(() => {});
    await server?.stop();
    await store?.close?.();
    await db.close();
  }
}

/**
 * Runs the parts `options` asks for and returns their results and the database's description.
 * Every process started here (cluster, servers, workers) is stopped before it returns or throws.
 */
export async function runPostgres(options, workDir, log) {
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const timings = {};
  let t = performance.now();
  const database = await startBenchDatabase(join(workDir, 'cluster'));
  // After Ctrl-C too; registered after the cluster's own exit hook, so the cluster is stopped before its folder goes.
  process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  timings.clusterMs = performance.now() - t;
  const admin = await adminClient(database);
  const servers = [];
  let opened;
  try {
    const out = { postgres: database.settings, timings };
    if (options.claims || options.kill) {
      t = performance.now();
      opened = await openStore(database);
      const laneId = await makeQueue(opened.store, admin, options.asks);
      timings.postMs = performance.now() - t;
      log(`Claims: ${int(options.asks)} asks posted through PgWorkQueueStore in ${ms(timings.postMs)} ms (the queue every run restores)\n`);
      const shape = await schemaShape(admin);
      const clientCount = Math.max(...options.clients, options.kill ? KILL.clients : 0);
      const tokens = [];
      for (let i = 0; i < clientCount; i++) tokens.push({ actor: `client-${i}`, secret: (await opened.store.createToken(`client-${i}`)).secret });
      const serverCount = Math.max(...(options.claims ? options.servers : [0]), options.kill ? 2 : 0);
      t = performance.now();
      // A pool as large as the most clients one server gets, so its pool is never what they wait for.
      const poolSize = Math.max(10, clientCount);
      for (let i = 0; i < serverCount; i++) servers.push(await startLadderServer(join(workDir, `server-${i + 1}`), database, `server ${i + 1}`, { poolSize }));
      out.poolSize = poolSize;
      timings.serversMs = performance.now() - t;
      const ctx = { admin, database, laneId, asks: options.asks, shape, servers, tokens };
      out.sql = rawSql(shape);
      out.shape = shape;
      if (options.claims) {
        t = performance.now();
        out.claims = await runClaims(ctx, options, log);
        timings.claimsMs = performance.now() - t;
      }
      if (options.kill) {
        log(`Fencing: kill -9 of one of two servers mid-run (${KILL.clients} clients, lease ${KILL.leaseSeconds} s) ...\n`);
        t = performance.now();
        out.kill = await runKill(ctx, options, log);
        timings.killMs = performance.now() - t;
        log(`  ${out.kill.ok ? 'verified' : `FAILED: ${out.kill.problems.join('; ')}`}: ${out.kill.lost} lost, ${out.kill.answeredTwice} answered twice, ${out.kill.reclaimed} reclaimed (max fence ${out.kill.maxFence}), ${out.kill.supersededRefused} of ${out.kill.superseded} superseded answers refused\n`);
      }
    }
    if (options.search) {
      t = performance.now();
      out.search = await runSearch(database, options, workDir, log);
      timings.searchMs = performance.now() - t;
    }
    return out;
  } finally {
    await Promise.allSettled(servers.map((server) => server.stop()));
    await opened?.store.close?.();
    await opened?.db.close().catch(() => {});
    await admin.end().catch(() => {});
    database.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}
