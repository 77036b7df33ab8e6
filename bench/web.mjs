// `pnpm bench web`: bulkhead-web's web_fetch (Markdown) against mcp-fetch-server, side by side in
// one run over stdio, on the 130 pages of Mozilla Readability's test suite read in place from
// ../shared/datasets/web/readability-test-pages and served by the bench on 127.0.0.1: time per
// page to fetch and extract, the size of what comes back, and how much of the expected article
// (its title, its text) each reply holds.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { measureText } from './lib/gateway-tokens.mjs';
import { CallError, CALL_TIMEOUT_MS, startServer } from './lib/mcp.mjs';
import { formatMs } from './lib/measure.mjs';
import { stopChildrenOnExit } from './lib/processes.mjs';
import { expectedWords, textRecall, titleFound, words } from './lib/web-quality.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const WORK = join(BENCH, '.work', 'web');
const DATASET = join(REPO, '..', 'shared', 'datasets', 'web', 'readability-test-pages');
const OURS_CLI = join(REPO, 'servers', 'web', 'dist', 'cli.js');
const PEER_DIR = join(BENCH, 'node_modules', 'mcp-fetch-server');
const PEER_COPY = join(WORK, 'peer');

const ROUNDS = 5;
/** Both sides are asked for this many characters, far more than any article here, so neither cuts one short. */
const MAX_LENGTH = 1_000_000;
/** Targets from issue 6. */
const TARGETS = { recall: 0.9, pageShare: 0.95 };

const SIDES = {
  bulkhead: { label: 'bulkhead web_fetch (markdown)', server: 'ours', tool: 'web_fetch', args: (url) => ({ url, format: 'markdown', max_length: MAX_LENGTH }) },
  peer: { label: 'mcp-fetch-server fetch_readable', server: 'peer', tool: 'fetch_readable', args: (url) => ({ url, max_length: MAX_LENGTH }) },
  'peer-markdown': { label: 'mcp-fetch-server fetch_markdown', server: 'peer', tool: 'fetch_markdown', args: (url) => ({ url, max_length: MAX_LENGTH }) },
};
const SIDE_KEYS = Object.keys(SIDES);

const USAGE = `usage: pnpm bench web [--rounds N] [--pages N] [--sides LIST]

  --rounds N    timed rounds over every page after one warmup round (default ${ROUNDS}); within a
                round each page is fetched by every side back to back, in an order that rotates
                from page to page and round to round
  --pages N     only the first N pages (by folder name), for a fast check
  --sides LIST  comma-separated subset of ${SIDE_KEYS.join(',')} (default: all)

Pages are read from ../shared/datasets/web/readability-test-pages (next to the repo root) and
served on 127.0.0.1 only. Run \`pnpm build\` first. A run of every page and side with the default
rounds writes bench/results/web.{md,json}; any other run writes to bench/.work/web/results/.
`;

function parseOptions(argv) {
  const values = benchFlags(argv, { rounds: { type: 'string' }, pages: { type: 'string' }, sides: { type: 'string' } }, USAGE);
  const sides = values.sides === undefined ? SIDE_KEYS : values.sides.split(',').map((key) => key.trim()).filter(Boolean);
  const unknown = sides.filter((key) => !SIDE_KEYS.includes(key));
  if (unknown.length > 0 || sides.length === 0) {
    process.stderr.write(`--sides expects a comma-separated subset of ${SIDE_KEYS.join(',')}, got ${values.sides}\n`);
    process.exit(2);
  }
  const rounds = positiveInteger(values.rounds, ROUNDS, '--rounds');
  const pageLimit = values.pages === undefined ? undefined : positiveInteger(values.pages, undefined, '--pages');
  return {
    rounds,
    pageLimit,
    sides: SIDE_KEYS.filter((key) => sides.includes(key)),
    official: rounds === ROUNDS && pageLimit === undefined && sides.length === SIDE_KEYS.length,
    command: ['pnpm bench web', ...argv].join(' '),
  };
}

// ── data and the local site ─────────────────────────────────────────────────────────────────

function loadPages(limit) {
  if (!existsSync(DATASET)) {
    process.stderr.write(`${DATASET} is missing: the pages are read in place from ../shared/datasets next to the repo root\n`);
    process.exit(2);
  }
  const names = readdirSync(DATASET, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return names.slice(0, limit).map((name) => {
    const dir = join(DATASET, name);
    const metadata = JSON.parse(readFileSync(join(dir, 'expected-metadata.json'), 'utf8'));
    return { name, source: readFileSync(join(dir, 'source.html')), title: metadata.title ?? undefined, expected: expectedWords(readFileSync(join(dir, 'expected.html'), 'utf8')) };
  });
}

/**
 * Serves each page at /NAME/ from memory, so no disk read is timed. The files are UTF-8 (a few
 * declare another charset in a <meta>), so the header says so. `no-store` and the absence of
 * validators keep any response cache out of the timings: every call is a real fetch.
 */
async function startSite(pages) {
  const byPath = new Map(pages.map((page) => [`/${page.name}/`, page.source]));
  const served = new Map();
  const server = createServer((request, response) => {
    const agent = request.headers['user-agent'] ?? '';
    const key = `${agent.startsWith('Bulkhead') ? 'bulkhead' : 'peer'} ${request.url === '/robots.txt' ? 'robots.txt' : 'page'}`;
    served.set(key, (served.get(key) ?? 0) + 1);
    const body = byPath.get(request.url ?? '');
    if (!body) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, 'cache-control': 'no-store' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    url: (page) => `http://127.0.0.1:${port}/${page.name}/`,
    served,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

// ── servers ─────────────────────────────────────────────────────────────────────────────────

/** The bench's own site is the only private address bulkhead may reach; web_fetch is allowed without asking. */
function oursControlDir(port) {
  const dir = join(WORK, 'control');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'permissions.yaml'), 'allow:\n  - web\n');
  writeFileSync(join(dir, 'web_policy.yaml'), `allow_private:\n  - 127.0.0.1/32\nports:\n  - ${port}\n`);
  return dir;
}

/** The one line of the peer's bundle that the copy changes, and what it becomes. */
const PEER_PRIVATE_CHECK = 'var private_ip_default = lib_default;';
const PEER_PRIVATE_CHECK_LOOPBACK_ALLOWED = 'var private_ip_default = (address) => address !== "127.0.0.1" && lib_default(address);';

/**
 * mcp-fetch-server refuses private addresses, the bench's site included. A copy of its bundle, with
 * its private-address test exempting 127.0.0.1 alone (the same exemption bulkhead's policy gets),
 * runs beside a link to the package's own dependencies, so nothing else about it changes.
 */
function preparePeer() {
  const source = readFileSync(join(PEER_DIR, 'dist', 'index.js'), 'utf8');
  const found = source.split(PEER_PRIVATE_CHECK).length - 1;
  if (found !== 1) {
    process.stderr.write(`expected the line \`${PEER_PRIVATE_CHECK}\` once in mcp-fetch-server's dist/index.js, found it ${found} times: update bench/web.mjs for this version\n`);
    process.exit(2);
  }
  rmSync(PEER_COPY, { recursive: true, force: true });
  mkdirSync(join(PEER_COPY, 'dist'), { recursive: true });
  copyFileSync(join(PEER_DIR, 'package.json'), join(PEER_COPY, 'package.json'));
  writeFileSync(join(PEER_COPY, 'dist', 'index.js'), source.replace(PEER_PRIVATE_CHECK, PEER_PRIVATE_CHECK_LOOPBACK_ALLOWED));
  symlinkSync(dirname(realpathSync(PEER_DIR)), join(PEER_COPY, 'node_modules'));
  return join(PEER_COPY, 'dist', 'index.js');
}

async function startServers(sides, port) {
  const servers = {};
  if (sides.some((key) => SIDES[key].server === 'ours')) {
    servers.ours = await startServer({ command: process.execPath, args: [OURS_CLI, '--config', oursControlDir(port)], requiredTools: ['web_fetch'] });
  }
  if (sides.some((key) => SIDES[key].server === 'peer')) {
    servers.peer = await startServer({ command: process.execPath, args: [preparePeer()], requiredTools: sides.filter((key) => SIDES[key].server === 'peer').map((key) => SIDES[key].tool) });
  }
  return servers;
}

function checkBuild() {
  if (!existsSync(OURS_CLI)) {
    process.stderr.write(`${relative(REPO, OURS_CLI)} is missing: run \`pnpm build\` first\n`);
    process.exit(2);
  }
  const built = statSync(join(REPO, 'servers', 'web', 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newest = readdirSync(join(REPO, 'servers', 'web', 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((latest, entry) => Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
  const stale = newest > built;
  if (stale) process.stderr.write('warning: servers/web sources are newer than their last build; run `pnpm build` to bench the current code\n');
  return stale;
}

// ── measuring ───────────────────────────────────────────────────────────────────────────────

async function fetchOnce(servers, key, url) {
  const side = SIDES[key];
  try {
    return await servers[side.server].call(side.tool, side.args(url));
  } catch (error) {
    if (!(error instanceof CallError)) throw error;
    return { ms: error.ms, error: error.message };
  }
}

/** Round `round` visits the pages in order and, for each, every side once, starting one side later each page and each round. */
function sideOrder(sides, pageIndex, round) {
  const shift = (pageIndex + round) % sides.length;
  return [...sides.slice(shift), ...sides.slice(0, shift)];
}

async function runRounds(ctx) {
  const results = ctx.pages.map(() => Object.fromEntries(ctx.sides.map((key) => [key, { times: [] }])));
  const totalRounds = ctx.rounds + 1;
  for (let round = 0; round < totalRounds; round++) {
    const started = Date.now();
    for (const [i, page] of ctx.pages.entries()) {
      for (const key of sideOrder(ctx.sides, i, round)) {
        const reply = await fetchOnce(ctx.servers, key, ctx.site.url(page));
        const result = results[i][key];
        // The warmup round's reply is the one judged; later rounds are only timed.
        if (round === 0) result.reply = reply;
        else result.times.push(reply.ms);
      }
    }
    process.stderr.write(`  ${round === 0 ? 'warmup round' : `round ${round} of ${ctx.rounds}`}: ${ctx.pages.length} pages × ${ctx.sides.length} sides in ${formatMs(Date.now() - started)}\n`);
  }
  return results;
}

function median(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** bulkhead's paging footer or truncation note: the reply holds less than the whole page. */
function cutShort(text) {
  return /\d+ more; call again with start_index=\d+ to continue\]$|\[the response was larger than \d+ bytes; only its start was read\]/.test(text);
}

async function judge(page, result) {
  const { reply, times } = result;
  const base = { ms: median(times) };
  if (reply.error) return { ...base, error: reply.error, title: false, recall: 0 };
  const got = words(reply.text);
  const size = await measureText(reply.text);
  return { ...base, chars: size.chars, tokens: size.o200k_base, title: titleFound(page.title, got), recall: textRecall(page.expected, got), cut: cutShort(reply.text) };
}

/** `common`: the pages every side answered, where output sizes compare like for like. */
function summarize(pages, key, common) {
  const rows = pages.map((page) => page.sides[key]);
  const answered = rows.filter((row) => !row.error);
  const commonRows = common.map((page) => page.sides[key]);
  const meeting = rows.filter((row) => row.title && row.recall >= TARGETS.recall);
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  return {
    pages: rows.length,
    answered: answered.length,
    medianMs: median(rows.map((row) => row.ms)),
    totalMs: sum(rows.map((row) => row.ms)),
    chars: sum(answered.map((row) => row.chars)),
    tokens: sum(answered.map((row) => row.tokens)),
    commonPages: common.length,
    commonChars: sum(commonRows.map((row) => row.chars)),
    commonTokens: sum(commonRows.map((row) => row.tokens)),
    fasterThanBulkhead: key === 'bulkhead' ? undefined : pages.filter((page) => page.sides[key].ms < page.sides.bulkhead?.ms).length,
    titleFound: rows.filter((row) => row.title).length,
    recallMet: rows.filter((row) => row.recall >= TARGETS.recall).length,
    meeting: meeting.length,
    meetingShare: meeting.length / rows.length,
    meanRecall: sum(rows.map((row) => row.recall)) / rows.length,
    medianRecall: median(rows.map((row) => row.recall)),
    cutShort: rows.filter((row) => row.cut).length,
  };
}

// ── report ──────────────────────────────────────────────────────────────────────────────────

const count = (n) => n.toLocaleString('en-US');
const percent = (share) => `${(100 * share).toFixed(1)}%`;

function ratioText(peerValue, oursValue) {
  if (!peerValue || !oursValue) return 'n/a';
  const r = peerValue / oursValue;
  return `${r.toFixed(r < 10 ? 2 : 0)}×`;
}

function summaryTable(sides, summaries) {
  const ours = summaries.bulkhead;
  const header = ['', ...sides.map((key) => SIDES[key].label)];
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const rows = [
    ['pages answered', (s) => `${s.answered} of ${s.pages}`],
    ['median time per page', (s) => formatMs(s.medianMs)],
    ...(ours ? [['speed, median (side / bulkhead; above 1: bulkhead faster)', (s) => ratioText(s.medianMs, ours.medianMs)]] : []),
    ...(ours ? [['pages where this side is faster than bulkhead', (s) => (s.fasterThanBulkhead === undefined ? '—' : `${s.fasterThanBulkhead} of ${s.pages}`)]] : []),
    ['all pages, one after another (sum of the per-page medians)', (s) => formatMs(s.totalMs)],
    [`text returned over the ${Object.values(summaries)[0].commonPages} pages every side answered, characters`, (s) => count(s.commonChars)],
    ['the same, tokens (o200k_base)', (s) => count(s.commonTokens)],
    ...(ours ? [['tokens (side / bulkhead)', (s) => ratioText(s.commonTokens, ours.commonTokens)]] : []),
    ['text returned over every page it answered, tokens', (s) => count(s.tokens)],
    ['title found', (s) => `${s.titleFound} (${percent(s.titleFound / s.pages)})`],
    [`≥ ${percent(TARGETS.recall)} of the expected text`, (s) => `${s.recallMet} (${percent(s.recallMet / s.pages)})`],
    ['mean / median share of the expected text', (s) => `${percent(s.meanRecall)} / ${percent(s.medianRecall)}`],
    [`**title and ≥ ${percent(TARGETS.recall)} of the text** (target ≥ ${percent(TARGETS.pageShare)} of pages)`, (s) => `**${s.meeting} (${percent(s.meetingShare)})**`],
  ];
  return [line(header), `| --- |${sides.map(() => ' ---: |').join('')}`, ...rows.map(([label, cell]) => line([label, ...sides.map((key) => cell(summaries[key]))]))].join('\n');
}

function targets(summaries) {
  const ours = summaries.bulkhead;
  const peer = summaries.peer;
  if (!ours) return '- (needs the bulkhead side)';
  const verdict = (ok) => (ok ? '**met**' : '**not met**');
  const lines = [];
  if (peer) {
    lines.push(`- Faster than mcp-fetch-server (fetch_readable), median per page: ${verdict(ours.medianMs < peer.medianMs)} (${formatMs(ours.medianMs)} against ${formatMs(peer.medianMs)}, ${ratioText(peer.medianMs, ours.medianMs)})`);
    lines.push(`- No larger output: ${verdict(ours.commonTokens <= peer.commonTokens)} (over the ${ours.commonPages} pages every side answered: ${count(ours.commonTokens)} tokens against ${count(peer.commonTokens)}, ${ratioText(peer.commonTokens, ours.commonTokens)}; ${count(ours.commonChars)} characters against ${count(peer.commonChars)})`);
  }
  lines.push(`- Title and ≥ ${percent(TARGETS.recall)} of the expected text on ≥ ${percent(TARGETS.pageShare)} of pages: ${verdict(ours.meetingShare >= TARGETS.pageShare)} (${ours.meeting} of ${ours.pages}, ${percent(ours.meetingShare)})`);
  return lines.join('\n');
}

/**
 * Why a side fails a page, where the cause was traced by hand; a note shows only while that page
 * fails for that side. The expected files come from a newer Readability than the 0.6.0 both
 * servers run, which explains mathjax and mercurial.
 */
const MATHJAX = 'Readability 0.6.0 drops every formula: MathJax 3 wraps them in elements of class `CtxtMenu_Attached_0`, which its unlikely-candidate pattern matches on "menu"; the expected file keeps them';
const KNOWN_CAUSES = {
  bulkhead: {
    mathjax: MATHJAX,
    mercurial: 'Readability 0.6.0 shortens the `<title>` "Evolve: Shared Mutable History — …" at the colon; the expected title keeps "Evolve:"',
  },
  peer: {
    mathjax: MATHJAX,
    'lazy-image-2': "jsdom's CSS parser throws on one of the page's style sheets while building it",
  },
};

/** The pages a side falls short on, grouped by why, one line per reason. */
function failures(pages, key) {
  const why = (row) => (row.error ? `failed: ${row.error.replace(/^tool error: /, '')}` : [row.title ? '' : 'title not found', row.recall < TARGETS.recall ? 'under 90% of the text' : ''].filter(Boolean).join(', '));
  const groups = new Map();
  for (const page of pages) {
    const row = page.sides[key];
    if (row.title && row.recall >= TARGETS.recall) continue;
    const reason = why(row);
    const shown = `${page.name}${row.error || row.recall >= TARGETS.recall ? '' : ` (${percent(row.recall)})`}${KNOWN_CAUSES[key]?.[page.name] ? `: ${KNOWN_CAUSES[key][page.name]}` : ''}`;
    groups.set(reason, [...(groups.get(reason) ?? []), shown]);
  }
  if (groups.size === 0) return `${SIDES[key].label}: every page meets it.`;
  const total = [...groups.values()].reduce((n, names) => n + names.length, 0);
  const lines = [...groups].map(([reason, names]) => `- ${reason} (${names.length}): ${names.join('; ')}`);
  return `${SIDES[key].label}, ${total} pages:\n${lines.join('\n').replaceAll('|', '\\|')}`;
}

/** Where the peer wins on time: how large those pages are for bulkhead. */
function speedNote(pages, summaries) {
  const peer = summaries.peer;
  if (!summaries.bulkhead || !peer || peer.fasterThanBulkhead === 0) return '';
  const wins = pages.filter((page) => page.sides.peer.ms < page.sides.bulkhead.ms);
  const losses = pages.filter((page) => !(page.sides.peer.ms < page.sides.bulkhead.ms));
  const bulkheadMedian = (list) => formatMs(median(list.map((page) => page.sides.bulkhead.ms)));
  const gap = median(wins.map((page) => page.sides.bulkhead.ms - page.sides.peer.ms));
  return `\n\nThe peer's fetch_readable is faster on ${wins.length} pages, the small ones: bulkhead's median there is ${bulkheadMedian(wins)}, and the peer is ahead by a median ${formatMs(gap)}; on the other ${losses.length} (bulkhead median ${bulkheadMedian(losses)}) bulkhead is faster.`;
}

function machine(stale) {
  const cpu = cpus();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'servers/web', 'shared'], { cwd: REPO, encoding: 'utf8' }).stdout.trim() !== '';
  const peerVersion = JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')).version;
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    load: loadavg().map((n) => n.toFixed(1)).join(' '),
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    peer: `mcp-fetch-server ${peerVersion}`,
    commit: `${commit}${dirty ? ' (servers/web or shared modified)' : ''}${stale ? '; built before the latest edits to servers/web' : ''}`,
  };
}

function methodNotes(rounds, untitled) {
  return `Method:
- Both servers run as shipped builds over stdio, driven by the MCP SDK client (times are client-side \`tools/call\` round trips: the HTTP fetch from the bench's own server on 127.0.0.1, parsing, extraction, JSON-RPC and the pipe). One process per server for the whole run.
- One warmup round, then ${rounds} timed rounds; a round fetches every page in folder order, each page by every side back to back, the side that goes first rotating from page to page and round to round. A page's time is its median over the rounds; the table gives the median of those over all pages, and their sum.
- bulkhead: \`web_fetch\` with \`format: "markdown"\` and \`max_length: ${MAX_LENGTH}\` (its default page is 20,000 characters). Its control folder allows \`web\` without asking and its web_policy.yaml adds \`allow_private: [127.0.0.1/32]\` and the site's port; everything else is the default (the audit log on).
- The peer, mcp-fetch-server: \`fetch_readable\` is its counterpart of bulkhead's Markdown (Readability picks the article, Turndown writes it: the same libraries, jsdom 28.1.0, @mozilla/readability 0.6.0 and turndown 7.2.5 on both sides). \`fetch_markdown\` is its other Markdown tool, Turndown over the whole page; it is shown for reference. Both get \`max_length: ${MAX_LENGTH}\` (its default, the DEFAULT_LIMIT variable, is 5,000 characters). Its replies carry no title: fetch_readable returns Readability's content alone, and Readability drops a heading that repeats the title from it. It refuses private addresses, so the bench runs a copy of its dist/index.js (in bench/.work/web/peer/, next to a link to the package's own dependencies) in which one line is replaced mechanically: \`${PEER_PRIVATE_CHECK}\` becomes \`${PEER_PRIVATE_CHECK_LOOPBACK_ALLOWED}\`. 127.0.0.1 is then the one private address it may fetch, as for bulkhead; nothing else in it changes.
- The site serves each source.html from memory as \`text/html; charset=utf-8\` with \`cache-control: no-store\` and no validators, so every call is a real fetch; any other path is a 404.
- Quality is judged on each side's warmup reply, the whole text the client gets (for bulkhead its URL line, the untrusted-content wrapper and the \`Title:\` line included). Words are runs of letters, digits and marks after NFKC and lower-casing, each Chinese or Japanese character a word of its own. **Title found**: the words of expected-metadata.json's \`title\` (Readability's) appear consecutively in the reply; the ${untitled} pages whose expected title is empty count as found. **Share of the expected text**: bag-of-words recall of expected.html's text (block elements split words), counting repeats: the share of its words the reply has, each reply word used once; order is ignored. A failed call scores zero on both.
- Tokens are counted with js-tiktoken (o200k_base) over the whole reply text; characters are UTF-16 code units.
- Calls time out after ${CALL_TIMEOUT_MS / 1000} s.`;
}

function writeResults(dir, { options, pages, summaries, servedCounts, startLoad, stale }) {
  mkdirSync(dir, { recursive: true });
  const m = machine(stale);
  const date = new Date().toISOString();
  const untitled = pages.filter((page) => !page.title).length;
  const table = summaryTable(options.sides, summaries);
  const targetText = targets(summaries);
  const cut = options.sides.filter((key) => summaries[key].cutShort > 0).map((key) => `${SIDES[key].label}: ${summaries[key].cutShort} replies cut short`);
  const served = [...servedCounts].map(([key, n]) => `${key} ${count(n)}`).join(', ');
  const failureText = options.sides.filter((key) => key !== 'peer-markdown').map((key) => failures(pages, key)).join('\n\n');
  const md = `# web benchmark

Command: \`${options.command}\`  
Date: ${date}  
Machine: ${m.cpus}, ${m.memory} RAM, ${m.os}, Node ${m.node}; load average ${startLoad} at the start, ${m.load} at the end  
Compared with: ${m.peer}  
Bulkhead commit: ${m.commit}

Data: the ${pages.length} test pages of Mozilla Readability (source.html, expected.html, expected-metadata.json each), read in place from \`../shared/datasets/web/readability-test-pages\` and served on 127.0.0.1. ${options.rounds} timed rounds after a warmup round. HTTP requests served: ${served}.${cut.length > 0 ? ` **${cut.join('; ')}.**` : ''}

${table}

Targets (issue 6):
${targetText}${speedNote(pages, summaries)}

Pages short of "title and ≥ ${percent(TARGETS.recall)} of the text":

${failureText}

${methodNotes(options.rounds, untitled)}
`;
  writeResult(join(dir, 'web.md'), md);
  const perPage = pages.map(({ name, title, expected, sides }) => ({ name, title: title ?? null, expectedWords: expected.length, ...sides }));
  writeResult(join(dir, 'web.json'), `${JSON.stringify({ command: options.command, date, machine: { ...m, startLoad }, rounds: options.rounds, maxLength: MAX_LENGTH, targets: TARGETS, sides: Object.fromEntries(options.sides.map((key) => [key, { label: SIDES[key].label, tool: SIDES[key].tool }])), summaries, pages: perPage }, null, 2)}\n`);
  return { table, targetText, written: join(dir, 'web.md') };
}

export async function main(argv) {
  const options = parseOptions(argv);
  stopChildrenOnExit();
  const stale = options.sides.includes('bulkhead') ? checkBuild() : false;
  process.stderr.write('Reading the pages and their expected text ...\n');
  const pages = loadPages(options.pageLimit);
  const site = await startSite(pages);
  const startLoad = loadavg().map((n) => n.toFixed(1)).join(' ');
  let servers = {};
  let results;
  try {
    servers = await startServers(options.sides, site.port);
    process.stderr.write(`Running the web bench: ${pages.length} pages, sides ${options.sides.join(', ')}, ${options.rounds} timed rounds after a warmup round\n`);
    results = await runRounds({ ...options, pages, servers, site });
  } finally {
    for (const server of Object.values(servers)) await server.close();
    await site.close();
  }
  const judged = [];
  for (const [i, page] of pages.entries()) {
    const sides = {};
    for (const key of options.sides) sides[key] = await judge(page, results[i][key]);
    judged.push({ ...page, sides });
  }
  const common = judged.filter((page) => options.sides.every((key) => !page.sides[key].error));
  const summaries = Object.fromEntries(options.sides.map((key) => [key, summarize(judged, key, common)]));
  const resultsDir = options.official ? join(BENCH, 'results') : join(WORK, 'results');
  const { table, targetText, written } = writeResults(resultsDir, { options, pages: judged, summaries, servedCounts: site.served, startLoad, stale });
  process.stdout.write(`\n${table}\n\nTargets:\n${targetText}\n\nWritten to ${relative(process.cwd(), written)} and web.json\n`);
}
