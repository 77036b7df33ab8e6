// `pnpm bench ladder`: the ladder server's stores (servers/ladder/dist), issue 8's benchmark.
//   1. Claim-and-answer throughput with 1, 4 and 8 processes on one SQLite file over 10,000 asks,
//      the work-queue store (claimNext + answer complete) against raw SQLite statements doing the
//      same claim, bare and with the store's event rows, in the same run; every ask checked to be
//      answered exactly once. Then an in-process count of the statements each claim+answer runs.
//   2. ladder_search p50/p99 over 100,000 rungs and ladder_tree on a 20,000-file repository
//      (bench/lib/ladder-rungs.mjs).
// `--backend postgres` runs issue 19's benchmark instead (bench/lib/ladder-postgres*.mjs): MCP
// clients over one and two ladder servers, the store in-process and raw SQL on a durable throwaway
// PostgreSQL cluster; fencing under kill -9 of a server; ladder_search on PgRungStore.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { stopChildrenOnExit } from './lib/processes.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const LADDER = join(REPO, 'servers', 'ladder');
const WORK = join(BENCH, '.work', 'ladder');
const ASKS = 10_000;
const PROCESSES = [1, 4, 8];
const ROUNDS = 5;
const RUNGS = 100_000;
const FILES = 20_000;
const TARGETS = { claimsPerSecond: 1_000, claimsAtProcesses: 8, ratioToRaw: 0.5, searchP99Ms: 10 };
const VARIANT_LABELS = {
  store: 'store (claimNext + answer)',
  'raw-bare': 'raw, bare (2 autocommit UPDATEs)',
  'raw-events': 'raw, with events (2 BEGIN IMMEDIATE tx)',
};

const BACKENDS = ['sqlite', 'postgres'];
const PG = { clients: [1, 4, 8, 16], servers: [1, 2], rounds: 3 };

const USAGE = `usage: pnpm bench ladder [--backend sqlite] [--asks N] [--processes LIST] [--rounds N] [--rungs N] [--files N] [--no-claims] [--no-search] [--no-tree]
       pnpm bench ladder --backend postgres [--asks N] [--clients LIST] [--servers LIST] [--rounds N] [--rungs N] [--no-claims] [--no-search] [--no-kill]

  --backend NAME    sqlite (default): the store on one SQLite file vs raw SQLite statements;
                    postgres: a durable throwaway PostgreSQL cluster, MCP clients over real
                    bulkhead-ladder --http servers, the store in-process and raw SQL (needs PostgreSQL
                    installed: apt-get install postgresql)
  --asks N          asks in the queue for each claim run (default ${ASKS})
  --rounds N        runs of every (count, variant); the median is reported (default ${ROUNDS}; postgres ${PG.rounds})
  --rungs N         rungs for ladder_search (default ${RUNGS})
  --no-claims, --no-search   skip a part

  sqlite only:
  --processes LIST  comma-separated process counts (default ${PROCESSES.join(',')})
  --files N         files in the ladder_tree repository (default ${FILES})
  --no-tree         skip ladder_tree

  postgres only:
  --clients LIST    comma-separated client counts (default ${PG.clients.join(',')})
  --servers LIST    comma-separated ladder server counts the MCP clients are spread over (default ${PG.servers.join(',')})
  --no-kill         skip fencing under kill -9 of one of two servers

Build first: \`npx tsc -b servers/ladder\`. A full run (no flags but --backend) writes
bench/results/ladder.{md,json}, or bench/results/ladder-postgres.{md,json} with --backend postgres;
any other run writes to bench/.work/ladder/results/ (bench/.work/ladder-postgres/results/).
`;

/** `--backend NAME` taken out of argv: the backend, and the flags left for it. */
function splitBackend(argv) {
  const rest = [];
  let backend = 'sqlite';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--backend' || arg.startsWith('--backend=')) {
      backend = arg === '--backend' ? argv[++i] : arg.slice('--backend='.length);
      if (!BACKENDS.includes(backend)) {
        process.stderr.write(`--backend expects ${BACKENDS.join(' or ')}, got ${backend ?? 'nothing'}\n\n${USAGE}`);
        process.exit(2);
      }
    } else rest.push(arg);
  }
  return { backend, rest };
}

const countList = (text, fallback, flag) => (text === undefined ? fallback : text.split(',').map((part) => positiveInteger(part.trim(), 1, flag)));

function parseOptions(argv, command) {
  const values = benchFlags(
    argv,
    {
      asks: { type: 'string' },
      processes: { type: 'string' },
      rounds: { type: 'string' },
      rungs: { type: 'string' },
      files: { type: 'string' },
      'no-claims': { type: 'boolean', default: false },
      'no-search': { type: 'boolean', default: false },
      'no-tree': { type: 'boolean', default: false },
    },
    USAGE,
  );
  const processes = countList(values.processes, PROCESSES, '--processes');
  const options = {
    asks: positiveInteger(values.asks, ASKS, '--asks'),
    processes,
    rounds: positiveInteger(values.rounds, ROUNDS, '--rounds'),
    rungs: positiveInteger(values.rungs, RUNGS, '--rungs'),
    files: positiveInteger(values.files, FILES, '--files'),
    claims: !values['no-claims'],
    search: !values['no-search'],
    tree: !values['no-tree'],
  };
  options.official = argv.length === 0;
  options.command = command;
  return options;
}

function parsePostgresOptions(argv, command) {
  const values = benchFlags(
    argv,
    {
      asks: { type: 'string' },
      clients: { type: 'string' },
      servers: { type: 'string' },
      rounds: { type: 'string' },
      rungs: { type: 'string' },
      'no-claims': { type: 'boolean', default: false },
      'no-search': { type: 'boolean', default: false },
      'no-kill': { type: 'boolean', default: false },
    },
    USAGE,
  );
  return {
    backend: 'postgres',
    asks: positiveInteger(values.asks, ASKS, '--asks'),
    clients: countList(values.clients, PG.clients, '--clients'),
    servers: countList(values.servers, PG.servers, '--servers'),
    rounds: positiveInteger(values.rounds, PG.rounds, '--rounds'),
    rungs: positiveInteger(values.rungs, RUNGS, '--rungs'),
    claims: !values['no-claims'],
    search: !values['no-search'],
    kill: !values['no-kill'],
    official: argv.length === 0,
    command,
  };
}

/** The compiled ladder must exist; warns when src is newer than the last build. */
function checkBuild(dist = join(LADDER, 'dist', 'store', 'sqlite-work-queue.js')) {
  if (!existsSync(dist)) {
    process.stderr.write(`${relative(REPO, dist)} is missing: run \`npx tsc -b servers/ladder\` first\n`);
    process.exit(2);
  }
  const built = statSync(join(LADDER, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? statSync(dist).mtimeMs;
  const newest = readdirSync(join(LADDER, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((latest, entry) => Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
  const stale = newest > built;
  if (stale) process.stderr.write('warning: servers/ladder sources are newer than their last build; run `npx tsc -b servers/ladder` to bench the current code\n');
  return stale;
}

const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const int = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));
const x = (n) => `${n.toFixed(2)}×`;
const met = (ok) => (ok ? '**met**' : '**not met**');

async function runClaims(options) {
  const { makeTemplate, runOnce, profileClaims, VARIANTS } = await import('./lib/ladder-claims.mjs');
  const dir = join(WORK, 'claims');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const template = join(dir, 'template.db');
    let t = performance.now();
    const laneId = await makeTemplate(template, options.asks);
    process.stderr.write(`Claims: ${options.asks.toLocaleString('en-US')} asks posted through the store in ${ms(performance.now() - t)} ms (the template every run copies)\n`);
    const runs = [];
    let turn = 0;
    for (let round = 0; round < options.rounds; round++) {
      for (const processes of options.processes) {
        // The variant that goes first rotates, so none always runs on the coldest or warmest machine.
        const order = VARIANTS.map((_, i) => VARIANTS[(i + turn) % VARIANTS.length]);
        turn++;
        for (const variant of order) {
          const result = await runOnce({ template, laneId, asks: options.asks, processes, variant, dir: join(dir, 'run') });
          result.round = round;
          runs.push(result);
          process.stderr.write(
            `  round ${round + 1}/${options.rounds} ${String(processes).padStart(2)} proc ${variant.padEnd(10)} ${int(result.perSecond).padStart(7)} claim+answer/s  ${ms(result.wallMs).padStart(6)} ms  ${result.check.ok ? 'verified' : `FAILED: ${result.check.problems.join('; ')}`}\n`,
          );
        }
      }
    }
    process.stderr.write('Claims: counting statements per claim+answer (1 process, in-process) ...\n');
    t = performance.now();
    const profile = await profileClaims({ template, laneId, asks: options.asks, dir: join(dir, 'profile') });
    const rows = options.processes.map((processes) => {
      const of = (variant) => runs.filter((r) => r.processes === processes && r.variant === variant);
      const stats = Object.fromEntries(
        VARIANTS.map((variant) => {
          const rates = of(variant).map((r) => r.perSecond);
          return [variant, { median: median(rates), min: Math.min(...rates), max: Math.max(...rates), rates }];
        }),
      );
      const verified = runs.filter((r) => r.processes === processes).every((r) => r.check.ok);
      // The same ratio paired within each round (the variants ran back to back), less exposed to load drifting between rounds.
      const paired = of('store').map((r) => r.perSecond / of('raw-events').find((e) => e.round === r.round).perSecond);
      return { processes, stats, ratioBare: stats.store.median / stats['raw-bare'].median, ratioEvents: stats.store.median / stats['raw-events'].median, pairedRatioEvents: median(paired), pairedRatiosEvents: paired, verified };
    });
    return { laneId, rows, runs: runs.map(({ check, ...rest }) => ({ ...rest, verified: check.ok, problems: check.problems })), profile };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function machine(stale, { sqlite = true } = {}) {
  const cpu = cpus();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'servers/ladder/src'], { cwd: REPO, encoding: 'utf8' }).stdout.trim() !== '';
  const sqliteVersion = spawnSync(process.execPath, ['-e', `const D=require(${JSON.stringify(join(LADDER, 'node_modules', 'better-sqlite3'))});process.stdout.write(new D(':memory:').prepare('select sqlite_version()').pluck().get())`], { encoding: 'utf8' }).stdout.trim();
  const betterSqlite = JSON.parse(readFileSync(join(LADDER, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version;
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    ...(sqlite ? { sqlite: `better-sqlite3 ${betterSqlite}, SQLite ${sqliteVersion}` } : {}),
    commit: `${commit}${dirty ? ' (servers/ladder/src modified)' : ''}${stale ? '; built before the latest edits to servers/ladder/src' : ''}`,
  };
}

function verdicts(options, claims, search) {
  const lines = [];
  if (claims) {
    const at = claims.rows.find((row) => row.processes === TARGETS.claimsAtProcesses) ?? claims.rows.at(-1);
    const rate = at.stats.store.median;
    lines.push({ key: 'throughput', ok: rate >= TARGETS.claimsPerSecond, text: `Claim+answer throughput with ${at.processes} processes: ${int(rate)}/s (target ≥ ${int(TARGETS.claimsPerSecond)}/s)` });
    for (const row of claims.rows) {
      lines.push({
        key: `ratio-${row.processes}`,
        ok: row.ratioEvents >= TARGETS.ratioToRaw,
        text: `${row.processes} process${row.processes === 1 ? '' : 'es'}: store ${x(row.ratioEvents)} the raw statements with events (${int(row.stats.store.median)} vs ${int(row.stats['raw-events'].median)}/s), ${x(row.ratioBare)} the bare raw UPDATEs (${int(row.stats['raw-bare'].median)}/s) (target ≥ ${TARGETS.ratioToRaw}× the raw statement doing the same claim)`,
        bareOk: row.ratioBare >= TARGETS.ratioToRaw,
      });
    }
    lines.push({ key: 'exactly-once', ok: claims.rows.every((row) => row.verified), text: `Every ask answered exactly once in every run (${claims.runs.length} runs)` });
  }
  if (search) lines.push({ key: 'search', ok: search.p99 <= TARGETS.searchP99Ms, text: `ladder_search p99 over ${int(search.rungs)} rungs: ${ms(search.p99)} ms (target ≤ ${TARGETS.searchP99Ms} ms)` });
  return lines;
}

function verdictText(lines) {
  return lines
    .map((line) => {
      if (line.key.startsWith('ratio-')) return `- ${line.text}: against the raw statements with events ${met(line.ok)}; against the bare UPDATEs ${met(line.bareOk)}`;
      return `- ${line.text}: ${met(line.ok)}`;
    })
    .join('\n');
}

function claimsTable(claims) {
  const header = '| processes | store (claimNext + answer) | raw, with events | raw, bare | store / raw with events | same, paired per round | store / raw bare | exactly once |';
  const lines = [header, '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |'];
  for (const row of claims.rows) {
    const cell = (variant) => {
      const s = row.stats[variant];
      return s.rates.length > 1 ? `${int(s.median)}/s (${int(s.min)}–${int(s.max)})` : `${int(s.median)}/s`;
    };
    lines.push(`| ${row.processes} | ${cell('store')} | ${cell('raw-events')} | ${cell('raw-bare')} | ${x(row.ratioEvents)} | ${x(row.pairedRatioEvents)} (${row.pairedRatiosEvents.map((r) => r.toFixed(2)).join(', ')}) | ${x(row.ratioBare)} | ${row.verified ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}

function profileTable(profile) {
  const lines = [
    '| variant, 1 process in-process | statements per claim+answer (BEGIN/COMMIT included) | transactions | claim | answer | claim+answer | write lock held | of which COMMIT |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [variant, p] of Object.entries(profile)) {
    lines.push(
      `| ${VARIANT_LABELS[variant]} | ${p.statementsPerClaimAndAnswer.toFixed(0)} | ${p.transactionsPerClaimAndAnswer} | ${Math.round(p.claimUs)} µs | ${Math.round(p.answerUs)} µs | ${Math.round(p.claimUs + p.answerUs)} µs | ${Math.round(p.lockHeldUs)} µs | ${variant === 'raw-bare' ? '(autocommit)' : `${Math.round(p.commitUs)} µs`} |`,
    );
  }
  return lines.join('\n');
}

function storeStatements(profile) {
  const short = (source) => (source.length > 110 ? `${source.slice(0, 107)}…` : source);
  return profile.store.statements.map((s) => `  - ${s.perClaimAndAnswer.toFixed(0)}× \`${short(s.source).replaceAll('`', "'")}\``).join('\n');
}

function searchTable(search, tree) {
  const lines = ['| case | result |', '| --- | ---: |'];
  if (search) {
    lines.push(`| ladder_search p50, ${int(search.rungs)} rungs, ${int(search.queries)} queries | ${ms(search.p50)} ms |`);
    lines.push(`| ladder_search p99 | ${ms(search.p99)} ms |`);
    lines.push(`| ladder_search max | ${ms(search.max)} ms |`);
    lines.push(`| ladder_search, each of the 5 most common words alone | ${search.mostCommonWordsMs.map(ms).join(', ')} ms |`);
    lines.push(`| queries matching over 2,000 rungs (broad: the 2,000 most recently created ranked) | ${int(search.broadQueries)} of ${int(search.queries)} |`);
  }
  if (tree) {
    lines.push(`| ladder_tree, ${int(tree.files)} files, ${int(tree.rungs)} rungs, median of runs | ${ms(tree.treeMedianMs)} ms |`);
    lines.push(`| ladder_tree, slowest run | ${ms(tree.treeMaxMs)} ms |`);
    lines.push(`| ladder_read of one rung, median | ${ms(tree.readRungMedianMs)} ms |`);
    lines.push(`| ladder_write_rung, per batch of 500 rungs | ${ms(tree.writeMsPer500)} ms |`);
  }
  return lines.join('\n');
}

function findings(claims) {
  if (!claims?.profile) return '';
  const p = claims.profile;
  const storeUs = p.store.claimUs + p.store.answerUs;
  const rawUs = p['raw-events'].claimUs + p['raw-events'].answerUs;
  return `Where a store claim+answer goes (1 process, no contention, ${int(p.store.asks)} asks): ${Math.round(storeUs)} µs against ${Math.round(rawUs)} µs for the raw statements with events and ${Math.round(p['raw-bare'].claimUs + p['raw-bare'].answerUs)} µs bare. Both write paths take two BEGIN IMMEDIATE transactions and write the same two event rows; the store runs ${p.store.statementsPerClaimAndAnswer.toFixed(0)} statements per claim+answer where the raw path runs ${p['raw-events'].statementsPerClaimAndAnswer.toFixed(0)}:

${storeStatements(claims.profile)}

Under contention only one process holds the write lock at a time, so throughput is roughly 1 / (time the lock is held per claim+answer), plus what SQLite's busy handler loses (the "write lock held" column: ${Math.round(p.store.lockHeldUs)} µs for the store, ${Math.round(p['raw-events'].lockHeldUs)} µs for the raw statements with events, of which COMMIT, the WAL append, is ${Math.round(p.store.commitUs)} and ${Math.round(p['raw-events'].commitUs)} µs): a process that finds the lock taken sleeps (1, 2, 5, 10 … ms steps) instead of being woken, so with more processes than cores the lock sits idle between holders. Every extra statement and every bit of JavaScript inside the transaction (zod parsing, \`toAsk\` with its dependency query and JSON.parse of the payload, the kind lookup) lengthens the hold.${claims.rows.some((row) => row.ratioEvents < TARGETS.ratioToRaw) ? `\n\n${PROPOSALS}` : ''}`;
}

/** What would bring the store to ≥ 0.5× the raw statements (servers/ladder/src/store/asks.ts; not made by the bench). */
const PROPOSALS = `Proposed changes to the store (servers/ladder/src/store/asks.ts), in order of expected gain; none changes what a claim or an answer means:
1. **Pick and claim in one statement.** \`claimNext\` runs the \`claimable\` SELECT and then the claim UPDATE by id, which re-evaluates the whole NEWLY_CLAIMABLE guard (the NOT EXISTS over dependencies, the RENEWAL CASEs). Fold the pick into the UPDATE as the raw statement does (\`UPDATE asks AS a SET … WHERE a.id = (SELECT c.id FROM asks c WHERE <the guard> ORDER BY c.priority, c.created_at, c.rowid LIMIT 1) RETURNING *\`), keeping the separate by-id statement for \`claim(askId)\`: one statement and one guard evaluation fewer per claim, and it is what the issue asks for ("a claim is one atomic statement").
2. **Take reads that do not need the write lock out of BEGIN IMMEDIATE.** \`lanes.row\` and \`roles.scopes\` (→ the claimable kinds) can run before the transaction (WAL readers never wait); the lane's working state can be kept atomic by adding \`AND EXISTS (SELECT 1 FROM lanes WHERE id = @lane_id AND state IN ('proposed','active'))\` to the claim statement. For kinds of \`contributor\` scope (everyone), skip the roles query at answer time altogether; only maintainer/coordinator kinds need it.
3. **Build the returned Ask after COMMIT.** \`toAsk\` (the dependency query, JSON.parse of the payload, ISO times) runs inside the transaction twice per claim+answer; compute the reply from the RETURNING row after the transaction ends, and skip the dependency query when the ask has none (e.g. return a dependency count from the claim statement).
4. **Answer first, read on refusal.** \`answer\` reads the ask joined with its lane (\`rowInLane\`), checks hold, kind and scope in JavaScript, then runs the guarded UPDATE, which already checks state, fence and holder. Run the guarded UPDATE (with \`AND kind IN (<kinds whose answers include @answer>)\`) first and read the row only when it matches nothing, to word the refusal.
5. **Create each transaction wrapper once.** \`immediate()\` calls \`db.transaction(work)\` on every operation; preparing the wrappers in the constructor and passing arguments saves a few µs per transaction (an empty BEGIN IMMEDIATE…COMMIT measured 4.6 µs cached vs 7.4 µs new) — small, but free.

1–4 bring a claim+answer from 15 statements to about 8 (BEGIN, claim, event, COMMIT; BEGIN, answer, event, COMMIT) — the raw-with-events shape — and leave in the lock only what the raw path holds it for, A sketch of 1–5 written outside the store (same schema and statements, lane and roles read before BEGIN IMMEDIATE, the reply built after COMMIT; a scratch run on this machine, not part of this bench) reached 0.55–0.68× the raw statements with events at 1, 4 and 8 processes where the store measured 0.44–0.54× in the same runs, every ask still answered exactly once. With more processes than cores the work outside the lock counts too: caching a principal's scopes per lane and skipping the dependency query for asks without dependencies would close more of the gap.`;

function methodNotes(options, sql) {
  return `Method:
- Claims: one template database (the store's schema through \`SqliteWorkQueueStore\`) with one lane and ${int(options.asks)} open \`work\` asks (priorities 0–9, no dependencies, no assignee) posted through \`postAsk\` before any timing; every run copies it to a fresh file under bench/.work/ladder/, forks N worker processes (child_process.fork, bench/lib/ladder-claim-worker.mjs) that each open the file with the compiled ladder's \`openDatabase\` (WAL, synchronous=NORMAL, foreign keys on, busy_timeout 10 s), waits until all say ready, sends "go", and times from that signal to the last worker's last answer. Each worker loops until the queue is empty. ${options.rounds} round${options.rounds === 1 ? '' : 's'}; in each, for each process count, the three variants run back to back, the one going first rotating; the table shows the median (and range) of the rounds; ratios are of those medians, and "paired per round" is the median of each round's store / raw-with-events ratio (the two ran back to back).
- Store: \`await store.claimNext(laneId, actor)\` then \`await store.answer({ask_id, fence, answer: 'complete'}, actor)\` on \`SqliteWorkQueueStore\` from servers/ladder/dist (the code ask_claim/ask_answer run, without MCP around it).
- Raw, bare: the least a claim and an answer can be, each one autocommit statement:
\`\`\`sql
${sql.bareClaim}
${sql.bareAnswer}
\`\`\`
- Raw, with events (the honest comparison, "the raw statement doing the same claim"): the store's claimability guard folded into one claim statement, the claim and the answer each in a BEGIN IMMEDIATE transaction (better-sqlite3 \`transaction().immediate()\`) with the event row the store writes (\`claimed\` with detail \`{lease_until}\`, \`answered\` with \`{answer, note}\`):
\`\`\`sql
${sql.guardedClaim}
${sql.insertEvent}
${sql.guardedAnswer}
${sql.insertEvent}
\`\`\`
- Exactly once: after every run the bench checks that the workers reported ${int(options.asks)} distinct ask ids between them, that every ask is \`answered\` \`complete\` with fence 1 and attempts 1 by the worker that reported it, and (store and raw with events) that every ask has exactly one \`claimed\` and one \`answered\` event.
- Statement counts: afterwards, in the bench process, each variant drains a fresh copy of the template with one claimer while better-sqlite3's Statement run/get/all/iterate are wrapped to count executions by SQL text (BEGIN and COMMIT included); times per claim and per answer are means over the whole queue.
- ladder_search and ladder_tree: bench/lib/ladder-rungs.mjs on the compiled \`Ladder\` with \`SqliteRungStore\` (in-process, no MCP): ${int(options.rungs)} rungs in 10 repositories with Zipf-distributed words, 1,000 queries of 1–3 words (a quarter limited to one repo, limit 20) after 50 warmups, p50/p99 by nearest rank; a ${int(options.files)}-file git repository with 5,000 rungs, then a commit touching 200 files, \`tree\` timed 7 times.`;
}

function writeResults(dir, data) {
  mkdirSync(dir, { recursive: true });
  const { options, claims, search, tree, m, startLoad, endLoad, date, sql } = data;
  const v = verdicts(options, claims, search);
  const table = claims ? claimsTable(claims) : '';
  const pTable = claims ? profileTable(claims.profile) : '';
  const sTable = search || tree ? searchTable(search, tree) : '';
  const md = `# ladder benchmark

Command: \`${options.command}\`  
Date: ${date}  
Machine: ${m.cpus}, ${m.memory} RAM, ${m.os}, Node ${m.node}, ${m.sqlite}; load average ${startLoad} at the start, ${endLoad} at the end  
Bulkhead commit: ${m.commit}
${table ? `\nClaim-and-answer throughput over ${int(options.asks)} asks in one lane (claims answered per second, wall time from the start signal to the last answer):\n\n${table}\n` : ''}
Targets (issue 8):
${verdictText(v)}
${pTable ? `\nPer claim+answer, 1 process in-process (no contention):\n\n${pTable}\n` : ''}${claims ? `\n${findings(claims)}\n` : ''}${sTable ? `\nThe Ladder's read paths:\n\n${sTable}\n` : ''}${tree ? `\nladder_tree counts: ${JSON.stringify(tree.counts)}\n` : ''}
${methodNotes(options, sql)}
`;
  writeResult(join(dir, 'ladder.md'), md);
  writeResult(join(dir, 'ladder.json'), `${JSON.stringify({ command: options.command, date, machine: { ...m, startLoad, endLoad }, options, targets: TARGETS, verdicts: v, sql, claims, search, tree }, null, 1)}\n`);
  return { table, pTable, sTable, verdicts: verdictText(v), written: join(dir, 'ladder.md') };
}

/** `--backend postgres`: bench/lib/ladder-postgres.mjs runs the parts, ladder-postgres-report.mjs words them. */
async function mainPostgres(options) {
  stopChildrenOnExit();
  const stale = checkBuild(join(LADDER, 'dist', 'store', 'pg', 'work-queue.js'));
  const startLoad = load();
  const date = new Date().toISOString();
  process.stderr.write(
    `Ladder bench on PostgreSQL: ${options.claims ? `claims over ${int(options.asks)} asks with ${options.clients.join('/')} clients over ${options.servers.join('/')} servers × ${options.rounds} rounds; ` : ''}${options.kill ? 'kill -9 of a server; ' : ''}${options.search ? `search over ${int(options.rungs)} rungs; ` : ''}load average ${startLoad}\n`,
  );
  const started = performance.now();
  const { runPostgres } = await import('./lib/ladder-postgres.mjs');
  const { postgresReport } = await import('./lib/ladder-postgres-report.mjs');
  const work = join(BENCH, '.work', 'ladder-postgres');
  const result = await runPostgres(options, join(work, 'run'), (text) => process.stderr.write(text));
  result.timings.totalMs = performance.now() - started;
  const endLoad = load();
  const report = postgresReport({ options, result, m: machine(stale, { sqlite: false }), startLoad, endLoad, date });
  const dir = options.official ? join(BENCH, 'results') : join(work, 'results');
  mkdirSync(dir, { recursive: true });
  writeResult(join(dir, 'ladder-postgres.md'), report.md);
  writeResult(join(dir, 'ladder-postgres.json'), report.json);
  process.stdout.write(
    `\n${report.table}\n${report.cTable ? `\n${report.cTable}\n` : ''}\nTargets:\n${report.verdicts}\n${report.kTable ? `\n${report.kTable}\n` : ''}${report.sTable ? `\n${report.sTable}\n` : ''}\nTook ${ms(result.timings.totalMs / 1000)} s. Written to ${relative(process.cwd(), join(dir, 'ladder-postgres.md'))} and ladder-postgres.json\n`,
  );
  if (!report.verified) process.exitCode = 1;
}

export async function main(argv) {
  const { backend, rest } = splitBackend(argv);
  const command = `pnpm bench ladder${argv.length ? ` ${argv.join(' ')}` : ''}`;
  if (backend === 'postgres') return mainPostgres(parsePostgresOptions(rest, command));
  const options = parseOptions(rest, command);
  stopChildrenOnExit();
  const stale = checkBuild();
  const startLoad = load();
  const date = new Date().toISOString();
  process.stderr.write(`Ladder bench: claims over ${int(options.asks)} asks with ${options.processes.join('/')} processes × ${options.rounds} rounds; search over ${int(options.rungs)} rungs; tree on ${int(options.files)} files; load average ${startLoad}\n`);
  const { SQL } = await import('./lib/ladder-claims-sql.mjs');
  const claims = options.claims ? await runClaims(options) : undefined;
  let search;
  let tree;
  if (options.search || options.tree) {
    const { benchSearch, benchTree } = await import('./lib/ladder-rungs.mjs');
    if (options.search) {
      process.stderr.write(`ladder_search: loading ${int(options.rungs)} rungs and running 1,000 queries ...\n`);
      search = await benchSearch({ rungs: options.rungs });
      process.stderr.write(`  p50 ${ms(search.p50)} ms, p99 ${ms(search.p99)} ms (load ${search.loadMs === null ? 'skipped' : `${ms(search.loadMs / 1000)} s`})\n`);
    }
    if (options.tree) {
      process.stderr.write(`ladder_tree: a ${int(options.files)}-file repository ...\n`);
      tree = await benchTree({ files: options.files });
      process.stderr.write(`  median ${ms(tree.treeMedianMs)} ms\n`);
    }
  }
  const endLoad = load();
  const resultsDir = options.official ? join(BENCH, 'results') : join(WORK, 'results');
  const out = writeResults(resultsDir, { options, claims, search, tree, m: machine(stale), startLoad, endLoad, date, sql: SQL });
  process.stdout.write(`\n${out.table}\n\nTargets:\n${out.verdicts}\n${out.pTable ? `\n${out.pTable}\n` : ''}${out.sTable ? `\n${out.sTable}\n` : ''}\nWritten to ${relative(process.cwd(), out.written)} and ladder.json\n`);
}
