// `pnpm bench git`: bulkhead-git against @cyanheads/git-mcp-server and the raw git CLI, side by
// side in one run, on a generated 100,000-commit, 20,000-file repository.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { expectations, patchFiles, peerJson, porcelainBlame, RAW_LOG_FORMAT, rawLogHashes, sameBlame, sameHashes, sameLines } from './lib/git-checks.mjs';
import { prepareRepo } from './lib/git-data.mjs';
import { gitSide, measureSides, pagedServerSide, serverSide, SLOW_MS } from './lib/git-measure.mjs';
import { oursBlame, oursDiff, oursFileLines, oursLogHashes } from './lib/git-replies.mjs';
import { kib, profileCases, profileTable } from './lib/git-profile.mjs';
import { gitTable, SIDE_NAMES } from './lib/git-report.mjs';
import { CALL_TIMEOUT_MS, startServer } from './lib/mcp.mjs';
import { formatMs } from './lib/measure.mjs';
import { stopChildrenOnExit } from './lib/processes.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const WORK = join(BENCH, '.work', 'git');
const OURS_CLI = join(REPO, 'servers', 'git', 'dist', 'cli.js');
const PEER_DIR = join(BENCH, 'node_modules', '@cyanheads', 'git-mcp-server');
const PEER_BIN = join(PEER_DIR, 'dist', 'index.js');
const TRACE_MODULE = join(BENCH, 'lib', 'git-trace.mjs');
const TRACE_FILE = join(WORK, 'trace.jsonl');
/** Calls per case in the profile pass (after one warmup). */
const PROFILE_CALLS = 7;

const RUNS = 10;
/** Cases of well under a second get this many times the rounds: their medians move more with load. */
const FAST_ROUNDS_FACTOR = 3;
const LOG_COUNT = 50;
const LOG_SKIP = 50_000;
const WINDOW = { offset: 50_001, limit: 100 };
const SIDES = ['bulkhead', 'peer', 'git'];
const CASE_IDS = ['log-tip', 'log-skip', 'diff', 'show-file', 'blame-page', 'blame-file'];
/** Targets from issue 5. */
const RAW_FACTOR = 1.5;

const USAGE = `usage: pnpm bench git [--runs N] [--cases LIST] [--sides LIST] [--no-profile]

  --runs N        timed rounds per blame case after one warmup call per side (default ${RUNS});
                  the four faster cases get ${FAST_ROUNDS_FACTOR} times as many
  --cases LIST    comma-separated subset of ${CASE_IDS.join(',')} (default: all)
  --sides LIST    comma-separated subset of ${SIDES.join(',')} (default: all)
  --no-profile    skip the untimed profile pass that splits each bulkhead call into its git
                  processes and the time around them

The repository (100,000 commits) is generated once into bench/.work/git/ (about a minute).
A run of every case and side writes bench/results/git.{md,json}; a partial run writes to
bench/.work/git/results/ instead.
`;

function list(text, allowed, flag) {
  if (text === undefined) return allowed;
  const items = text.split(',').map((item) => item.trim()).filter(Boolean);
  const unknown = items.filter((item) => !allowed.includes(item));
  if (unknown.length > 0 || items.length === 0) {
    process.stderr.write(`${flag} expects a comma-separated subset of ${allowed.join(',')}, got ${text}\n`);
    process.exit(2);
  }
  return allowed.filter((item) => items.includes(item));
}

function parseOptions(argv) {
  const values = benchFlags(argv, { runs: { type: 'string' }, cases: { type: 'string' }, sides: { type: 'string' }, 'no-profile': { type: 'boolean', default: false } }, USAGE);
  const cases = list(values.cases, CASE_IDS, '--cases');
  const sides = list(values.sides, SIDES, '--sides');
  return { runs: positiveInteger(values.runs, RUNS, '--runs'), cases, sides, profile: !values['no-profile'] && sides.includes('bulkhead'), complete: cases.length === CASE_IDS.length && sides.length === SIDES.length, command: ['pnpm bench git', ...argv].join(' ') };
}

function newestMtime(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
}

/** When the server and core were last built: a rebuild in the middle of a run mixes builds. */
function buildStamp() {
  return ['servers/git', 'shared'].map((pkg) => statSync(join(REPO, pkg, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0).join(',');
}

/** The bench runs the built server; measuring an older build than the sources would mislead. */
function checkBuild(sides) {
  if (!sides.includes('bulkhead')) return [];
  try {
    statSync(OURS_CLI);
  } catch {
    process.stderr.write(`${relative(REPO, OURS_CLI)} is missing: run \`pnpm build\` first\n`);
    process.exit(2);
  }
  const stale = ['servers/git', 'shared'].filter((pkg) => newestMtime(join(REPO, pkg, 'src')) > (statSync(join(REPO, pkg, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0));
  if (stale.length > 0) process.stderr.write(`warning: ${stale.join(' and ')} sources are newer than their last build; run \`pnpm build\` to bench the current code\n`);
  return stale;
}

function starters(repo) {
  const controlDir = join(WORK, 'control');
  mkdirSync(controlDir, { recursive: true });
  return {
    ours: () => startServer({ command: process.execPath, args: [OURS_CLI, '--root', repo, '--config', controlDir], requiredTools: ['git_log', 'git_diff', 'git_show_file', 'git_blame'] }),
    /** The same server with git-trace.mjs preloaded, for the untimed profile pass. */
    traced: () =>
      startServer({
        command: '/usr/bin/env',
        args: [`BULKHEAD_GIT_TRACE=${TRACE_FILE}`, process.execPath, '--import', TRACE_MODULE, OURS_CLI, '--root', repo, '--config', controlDir],
        requiredTools: ['git_log'],
      }),
    // The peer is configured through its environment (README): stdio, its sandbox base dir, and
    // its quietest log level (at the README's "info" it spends ~10 ms more per call on logging).
    // /usr/bin/env execs node in place, so the pid (and its RSS) is the server's own.
    peer: () =>
      startServer({
        command: '/usr/bin/env',
        args: ['MCP_TRANSPORT_TYPE=stdio', 'MCP_LOG_LEVEL=error', `GIT_BASE_DIR=${repo}`, process.execPath, PEER_BIN],
        requiredTools: ['git_log', 'git_diff', 'git_show', 'git_blame'],
      }),
  };
}

// ── cases ───────────────────────────────────────────────────────────────────────────────────

function logCase(ctx, { id, skip }) {
  const want = skip ? ctx.expected.logSkip : ctx.expected.logTip;
  const at = skip ? ` at skip=${skip.toLocaleString('en-US')}` : ' at the tip';
  const skipArgs = skip ? [`--skip=${skip}`] : [];
  return {
    id,
    label: `git_log: ${LOG_COUNT} commits${at}`,
    sides: {
      bulkhead: { ...serverSide(ctx.start.ours, 'git_log', { max_count: LOG_COUNT, ...(skip ? { skip } : {}) }), verify: (text) => sameHashes(oursLogHashes(text), want) },
      peer: { ...serverSide(ctx.start.peer, 'git_log', { path: ctx.info.repo, maxCount: LOG_COUNT, ...(skip ? { skip } : {}) }), verify: (text) => sameHashes(peerJson(text)?.commits?.map((c) => c.hash) ?? [], want) },
      git: { ...gitSide(['log', `--max-count=${LOG_COUNT}`, ...skipArgs, `--format=${RAW_LOG_FORMAT}`, 'HEAD', '--'], ctx.info.repo), verify: (text) => sameHashes(rawLogHashes(text), want) },
    },
    oursRequest: { name: 'git_log', args: { max_count: LOG_COUNT, ...(skip ? { skip } : {}) } },
    rawCommand: `git log --max-count=${LOG_COUNT}${skip ? ` --skip=${skip}` : ''} --format=<hash, parents, author, email, date, subject, body> HEAD`,
    requests: { bulkhead: `git_log max_count=${LOG_COUNT}${skip ? ` skip=${skip}` : ''}`, peer: `git_log maxCount=${LOG_COUNT}${skip ? ` skip=${skip}` : ''}` },
  };
}

function diffCase(ctx) {
  const { from, to } = ctx.info.range;
  const want = ctx.expected.diff;
  const names = (got, what) => {
    const unknown = got.filter((name) => !want.names.includes(name));
    return unknown.length === 0 ? undefined : `${unknown.length} ${what} not in git's list (e.g. ${unknown[0]})`;
  };
  return {
    id: 'diff',
    label: `git_diff: a range changing ${want.names.length.toLocaleString('en-US')} files`,
    sides: {
      bulkhead: {
        ...serverSide(ctx.start.ours, 'git_diff', { from, to }),
        verify: (text) => {
          const got = oursDiff(text);
          const badPatches = got.patches.filter((patch) => {
            const section = want.sections.get(patch.path);
            return section === undefined || (patch.cut ? !section.startsWith(patch.text) : section !== patch.text);
          });
          const bad =
            got.problem ??
            (got.total !== want.names.length ? `reports ${got.total} changed files, git says ${want.names.length}` : undefined) ??
            (got.unparsed > 0 ? `${got.unparsed} lines of the file list not understood` : undefined) ??
            names(got.files, 'listed files') ??
            (got.files.length !== want.names.length ? `lists ${got.files.length} of ${want.names.length} files` : undefined) ??
            (badPatches.length > 0 ? `${badPatches.length} patches differ from git's (e.g. ${badPatches[0].path})` : undefined);
          const cut = got.patches.filter((patch) => patch.cut).length;
          return {
            ok: !bad,
            detail: bad ?? `all ${got.total.toLocaleString('en-US')} files listed with +/− counts; patches of the first ${got.patches.length.toLocaleString('en-US')} shown${cut ? ` (${cut} cut)` : ''}, identical to git's, the rest left out at the 200 KiB cap (${Math.round(Buffer.byteLength(text) / 1024)} KiB reply)`,
          };
        },
      },
      peer: {
        ...serverSide(ctx.start.peer, 'git_diff', { path: ctx.info.repo, source: from, target: to }),
        verify: (text) => {
          const reply = peerJson(text);
          const files = patchFiles(reply?.diff ?? '');
          const ok = reply?.diff === want.patch;
          return { ok, detail: `${files.length.toLocaleString('en-US')} files, the whole patch (${Math.round(Buffer.byteLength(text) / 1024)} KiB reply)${ok ? ', identical to git diff' : ', differs from git diff'}` };
        },
      },
      git: {
        ...gitSide(['diff', '--no-ext-diff', '--no-textconv', '--no-color', from, to, '--'], ctx.info.repo),
        verify: (text) => ({ ok: text === want.patch, detail: `${patchFiles(text).length.toLocaleString('en-US')} files, ${Math.round(Buffer.byteLength(text) / 1024)} KiB patch` }),
      },
    },
    oursRequest: { name: 'git_diff', args: { from, to } },
    rawCommand: 'git diff --no-ext-diff --no-textconv <from> <to>',
    requests: { bulkhead: 'git_diff from to', peer: 'git_diff source target' },
  };
}

function showFileCase(ctx) {
  const { rev, path, lines, bytes } = ctx.info.large;
  const want = ctx.expected.file;
  const last = WINDOW.offset + WINDOW.limit - 1;
  return {
    id: 'show-file',
    label: `git_show_file: lines ${WINDOW.offset.toLocaleString('en-US')}-${last.toLocaleString('en-US')} of a ${(bytes / 1024 ** 2).toFixed(1)} MiB, ${lines.toLocaleString('en-US')}-line file at an old commit`,
    sides: {
      bulkhead: { ...serverSide(ctx.start.ours, 'git_show_file', { rev, path, offset: WINDOW.offset, limit: WINDOW.limit }), verify: (text) => sameLines(oursFileLines(text), want.window, 'window') },
      peer: {
        ...serverSide(ctx.start.peer, 'git_show', { path: ctx.info.repo, object: rev, filePath: path }),
        verify: (text) => {
          const content = peerJson(text)?.content;
          if (content !== want.content) return { ok: false, detail: `content differs from the file (${content?.length ?? 0} characters)` };
          return sameLines(content.split('\n').slice(WINDOW.offset - 1, last), want.window, `whole file returned (${Math.round(Buffer.byteLength(text) / 1024)} KiB reply), window cut client-side`);
        },
      },
      git: { ...gitSide(['cat-file', 'blob', `${rev}:${path}`], ctx.info.repo), verify: (text) => ({ ok: text === want.content, detail: `whole file, ${Math.round(Buffer.byteLength(text) / 1024)} KiB` }) },
    },
    oursRequest: { name: 'git_show_file', args: { rev, path, offset: WINDOW.offset, limit: WINDOW.limit } },
    rawCommand: 'git cat-file blob <rev>:<path> (the whole file: git has no line window)',
    requests: { bulkhead: `git_show_file offset=${WINDOW.offset} limit=${WINDOW.limit}`, peer: 'git_show object=<rev> filePath (no paging)' },
  };
}

/** The range of lines one bulkhead git_blame call covers by default (limits.blame_max_lines). */
const BLAME_PAGE = 500;

function blameCase(ctx, { whole }) {
  const { path, lines, touches } = ctx.info.blame;
  const head = ctx.info.head;
  const want = ctx.expected.blame;
  const span = whole ? [1, lines] : [1, BLAME_PAGE];
  const byLine = (commits) => new Map(commits.map((commit, i) => [i + 1, commit]).filter(([, commit]) => commit));
  const peerLines = (text) => new Map((peerJson(text)?.lines ?? []).map((line) => [line.lineNumber, line.commitHash]));
  const oursLines = (text) => new Map(text.split('\f').flatMap((page) => [...oursBlame(page)]));
  const nextStart = (text) => {
    const match = /next: start_line=(\d+)\]/.exec(text);
    return match ? { path, rev: head, start_line: Number(match[1]) } : undefined;
  };
  const range = whole ? [] : ['-L', `1,${BLAME_PAGE}`];
  return {
    id: whole ? 'blame-file' : 'blame-page',
    label: whole
      ? `git_blame: all ${lines.toLocaleString('en-US')} lines of a file changed by ${touches.toLocaleString('en-US')} commits`
      : `git_blame: lines 1-${BLAME_PAGE} of that ${lines.toLocaleString('en-US')}-line file`,
    sides: {
      bulkhead: whole
        ? {
            ...pagedServerSide(ctx.start.ours, 'git_blame', { path, rev: head }, nextStart),
            verify: (text) => {
              const check = sameBlame(oursLines(text), want, span);
              const calls = text.split('\f').length;
              return { ...check, detail: `${check.detail} (${calls === 1 ? 'one call' : `${calls} calls`})` };
            },
          }
        : { ...serverSide(ctx.start.ours, 'git_blame', { path, rev: head, start_line: 1, end_line: BLAME_PAGE }), verify: (text) => sameBlame(oursLines(text), want, span) },
      peer: {
        ...serverSide(ctx.start.peer, 'git_blame', { path: ctx.info.repo, filePath: path, ...(whole ? {} : { startLine: 1, endLine: BLAME_PAGE }) }),
        verify: (text) => sameBlame(peerLines(text), want, span),
      },
      git: { ...gitSide(['blame', '--porcelain', ...range, head, '--', path], ctx.info.repo), verify: (text) => sameBlame(byLine(porcelainBlame(text)), want, span) },
    },
    oursRequest: { name: 'git_blame', args: whole ? { path, rev: head } : { path, rev: head, start_line: 1, end_line: BLAME_PAGE } },
    rawCommand: `git blame --porcelain ${whole ? '' : `-L 1,${BLAME_PAGE} `}<HEAD hash> -- <path>`,
    requests: whole
      ? { bulkhead: 'git_blame path rev=<HEAD hash>, then start_line=<next> while the footer offers one', peer: 'git_blame filePath (no rev argument: it blames the checkout, clean at HEAD)' }
      : { bulkhead: `git_blame rev=<HEAD hash> start_line=1 end_line=${BLAME_PAGE}`, peer: `git_blame filePath startLine=1 endLine=${BLAME_PAGE}` },
  };
}

function buildCases(ctx) {
  const all = [logCase(ctx, { id: 'log-tip', skip: 0 }), logCase(ctx, { id: 'log-skip', skip: LOG_SKIP }), diffCase(ctx), showFileCase(ctx), blameCase(ctx, { whole: false }), blameCase(ctx, { whole: true })];
  return all.filter((c) => ctx.cases.includes(c.id));
}

async function runCase(ctx, spec) {
  if (process.stderr.isTTY) process.stderr.write(`  ${spec.label} ...`);
  const sides = Object.fromEntries(Object.entries(spec.sides).filter(([key]) => ctx.sides.includes(key)));
  const rounds = spec.id.startsWith('blame') ? ctx.runs : ctx.runs * FAST_ROUNDS_FACTOR;
  const results = await measureSides(sides, rounds, (key, check) => {
    if (!check.ok) ctx.checks[key === 'peer' ? 'peer' : 'ours'].add(`${spec.label} (${SIDE_NAMES[key]}): ${check.detail}`);
  });
  const show = (m) => (m === undefined ? '' : m.error ? m.error : `${formatMs(m.median)}${m.wrong ? ' (wrong reply)' : ''}`);
  process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}  ${spec.label}: ${ctx.sides.map((key) => `${SIDE_NAMES[key]} ${show(results[key])}`).join(', ')}\n`);
  return { id: spec.id, label: spec.label, rounds, rawCommand: spec.rawCommand, requests: spec.requests, ...results };
}

// ── targets and output ──────────────────────────────────────────────────────────────────────

function targets(rows, sides) {
  if (!sides.includes('bulkhead') || sides.length === 1) return '- (needs bulkhead and at least one other side)';
  const verdict = (ok) => (ok ? '**met**' : '**not met**');
  const lines = [];
  if (sides.includes('peer')) {
    const each = rows.map((row) => {
      const { bulkhead: ours, peer } = row;
      const ok = !ours.error && !ours.wrong && (peer.error !== undefined || peer.wrong !== undefined || peer.median > ours.median);
      const why = peer.error ? 'peer failed' : peer.wrong ? `${(peer.median / ours.median).toFixed(2)}× on time, but the peer's reply is wrong, so it cannot win` : `${(peer.median / ours.median).toFixed(2)}×`;
      return { ok, text: `${row.id} ${why}` };
    });
    lines.push(`- Faster than @cyanheads/git-mcp-server on each case: ${verdict(each.every((e) => e.ok))} (${each.map((e) => `${e.text}${e.ok ? '' : ' ✗'}`).join('; ')})`);
  }
  if (sides.includes('git')) {
    const each = rows.map((row) => {
      const ok = !row.bulkhead.error && !row.bulkhead.wrong && row.bulkhead.median <= RAW_FACTOR * row.git.median;
      return { ok, text: `${row.id} ${(row.bulkhead.median / row.git.median).toFixed(2)}×` };
    });
    lines.push(`- Within ${RAW_FACTOR}× of raw git on each case: ${verdict(each.every((e) => e.ok))} (${each.map((e) => `${e.text}${e.ok ? '' : ' ✗'}`).join('; ')})`);
  }
  return lines.join('\n');
}

function machine(stale) {
  const cpu = cpus();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'servers/git', 'shared'], { cwd: REPO, encoding: 'utf8' }).stdout.trim() !== '';
  const peerVersion = JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')).version;
  return {
    cpus: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}`,
    load: loadavg().map((n) => n.toFixed(1)).join(' '),
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    node: process.version,
    git: spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout.trim(),
    peer: `@cyanheads/git-mcp-server ${peerVersion}`,
    commit: `${commit}${dirty ? ' (servers/git or shared modified)' : ''}${stale.length > 0 ? `; built before the latest edits to ${stale.join(' and ')}` : ''}`,
  };
}

function methodNotes(runs) {
  return `Method:
- One run, three sides per case: bulkhead-git and the peer, each a fresh server process per case driven over stdio by the MCP SDK client (times are client-side \`tools/call\` round trips: JSON-RPC, serialization and the pipe included), and the raw git CLI, spawned per call with the equivalent arguments and timed from spawn to exit with all of its output read (the floor any git-based server sits on). Raw git runs with no system or global config, as bulkhead does.
- Each side gets one warmup call, then ${runs * FAST_ROUNDS_FACTOR} rounds (${runs} for the blame cases, which take about a second a call); each round calls every side once, in an order that rotates by one from round to round. Medians and p90 (nearest rank) of the timed rounds. A side stops after its first error or after one call slower than ${SLOW_MS / 1000} s (†); calls time out after ${CALL_TIMEOUT_MS / 1000} s.
- Every reply, warmups included, is checked against plain git run beforehand (untimed): the same 50 commit hashes in order for git_log, the same set and count of changed files for git_diff (the whole patch, byte for byte, where a side returns it whole), the exact generated lines for git_show_file, the same commit for every line git_blame lists. A wrong reply is flagged in the table and cannot count as a win.
- The repository is generated deterministically by \`git fast-import\` (bench/lib/git-data.mjs) with a commit-graph written as \`git gc\` would, and cached under bench/.work/git/. Its packs are in the page cache after the warmups.
- Bulkhead does more per call than the peer: it checks its permission policy, verifies revisions, bounds every output and appends a hash-chained audit line (all on by default).
- The peer runs as its README configures it (\`MCP_TRANSPORT_TYPE=stdio\`, \`GIT_BASE_DIR\` = the repository) but at \`MCP_LOG_LEVEL=error\`, its fastest setting: at the README's \`info\` (or the unset default, which logs at debug) it writes a JSON log line or more to stderr per call and measured about 10 ms slower per git_log call here. It gets the repository as an absolute \`path\` argument on every call. It buffers git's whole output without a size cap and returns it whole: git_diff returns the entire patch, git_show the entire file (it has no line window, so the bench cuts the window client-side), and its replies are bounded only by the MCP client's 10 MiB message limit; git_log is capped by \`maxCount\` (at most 1000). Its git_blame has no revision argument (it blames the checkout, which is clean and at HEAD here).
- Peak RSS is VmHWM of each server process over its case; for raw git it comes from \`/usr/bin/time -f %M\` on one extra, untimed run.`;
}

const span = (values) => {
  const [low, high] = [Math.min(...values), Math.max(...values)];
  return high - low < 0.05 * high ? formatMs(high) : `${formatMs(low)}–${formatMs(high)}`;
};

/** What the profile shows, in numbers from this run; each point only when the profile shows it. */
function findings(rows, profiles) {
  const row = (id) => rows.find((r) => r.id === id);
  const profile = (id) => profiles.find((p) => p.id === id);
  const out = [];
  // Only where it matters: an extra process worth at least 5% of the call.
  const checked = profiles.filter((p) => p.gits.length > 1 && p.gits[0].command === 'cat-file' && p.gits[0].ms > 0.05 * p.client);
  if (checked.length > 0) {
    const log = checked.find((p) => p.id === 'log-tip');
    const logRow = row('log-tip');
    const logText = log && logRow?.git && !logRow.git.error ? ` On git_log at the tip it is ${formatMs(log.gits[0].ms)} of a ${formatMs(log.client)} round trip, against ${formatMs(logRow.git.median)} for the whole raw \`git log\`.` : '';
    out.push(
      `- **A separate git process before the one that does the work.** ${checked.map((p) => p.id).join(', ')} ${checked.length === 1 ? 'starts' : 'start'} with \`git cat-file\` (${span(checked.map((p) => p.gits[0].ms))}: a revision check, or a line count) where raw git runs one process.${logText} Suggestions: give the revision to the working command itself after \`--end-of-options\` and turn git's "bad revision" / "unknown revision" error into the same clear message; where a blob is read anyway, one \`git cat-file --batch-command\` process (git ≥ 2.36) can answer \`info <rev>^{commit}\` and then \`contents <commit>:<path>\`; or keep one long-lived \`cat-file --batch-check\` per repository so that a check is a pipe round trip.`,
    );
  }
  const config = profiles.filter((p) => p.gits.some((g) => g.command === 'config' && g.ms > 0.03 * p.client));
  if (config.length > 0) {
    const what = { 'log-tip': 'git_log', 'log-skip': 'git_log', diff: 'git_diff between two commits', 'show-file': 'git_show_file at a commit', 'blame-page': 'git_blame at a commit' };
    const names = [...new Set(config.map((p) => what[p.id] ?? p.id))];
    out.push(
      `- **\`git config --list\` on calls that never read the working tree.** ${names.join(' and ')} ${names.length === 1 ? 'runs' : 'run'} it (${span(config.map((p) => p.gits.find((g) => g.command === 'config').ms))}) to switch off filter drivers, which git only runs when it reads working-tree files, and ${names.length === 1 ? 'that call reads' : 'those calls read'} none. Skip it there, or cache the driver list per repository keyed on the config files' modification times.`,
    );
  }
  const blamePage = row('blame-page');
  const blameFile = row('blame-file');
  const blamePages = blameFile?.bulkhead?.pages;
  if (blamePage?.git?.median && blameFile?.git?.median && blameFile.bulkhead?.median > RAW_FACTOR * blameFile.git.median && blamePages > 1) {
    out.push(
      `- **Blame pages repeat the history walk.** git blame's cost here is walking 100,000 commits for the file, not the number of lines: raw \`git blame -L 1,500\` took ${formatMs(blamePage.git.median)} and the whole file ${formatMs(blameFile.git.median)}. Read page by page, the file takes ${blamePages} calls and ${blamePages} walks: ${formatMs(blameFile.bulkhead.median)} against ${formatMs(blameFile.git.median)}. Blame the whole file once per (commit, path) and serve the later pages from a small cache, or let one call cover the whole file when it is not much longer than the cap. (A repository with changed-path Bloom filters, \`git commit-graph write --changed-paths\`, walks much faster; this one, like most, has none.)`,
    );
  }
  const diff = profile('diff');
  if (diff && diff.structuredBytes > 0.5 * diff.textBytes) {
    out.push(
      `- **git_diff sends its patches twice.** The reply carries ${kib(diff.textBytes)} of text and ${kib(diff.structuredBytes)} of structuredContent, which holds the patches again (${kib(diff.replyBytes)} of JSON in all). Writing it takes ${formatMs(diff.afterGit)} in the server after git ends, and piping and parsing it ${formatMs(diff.outside)} more in the client. Keeping patch bodies in one of the two (the structured list could carry paths, status and counts only) would roughly halve that.`,
    );
  }
  const tip = profile('log-tip');
  const tipRow = row('log-tip');
  // Shown once the tip case is near its target too: run-to-run noise moves it by more than the margin.
  if (tip && tipRow?.git?.median && tipRow.bulkhead?.median > 1.25 * tipRow.git.median) {
    out.push(
      `- **Fixed costs on a short command.** git_log at the tip is ${formatMs(tipRow.bulkhead.median)} against ${formatMs(tipRow.git.median)} for raw git (${(tipRow.bulkhead.median / tipRow.git.median).toFixed(2)}×; target ${RAW_FACTOR}×). In the profile pass (separate and untimed, so its absolute times move with the machine's load) a call of ${formatMs(tip.client)} splits into its one git process, ${formatMs(tip.gitTotal)}; ${formatMs(tip.beforeGit)} in the server before it (arguments, permission gate, and locating the repository and confining each of its parts to the roots, which is redone on every call); ${formatMs(tip.afterGit)} after it; and ${formatMs(tip.outside)} outside the server (pipe, JSON, client). Caching the checked repository layout (re-checked with one realpath of the git directory) would trim the first; the rest is the price of a server between the client and git.`,
    );
  }
  const blocked = profiles.map((p) => p.spawnBlocking / p.gits.length).filter(Number.isFinite);
  if (blocked.length > 0) {
    out.push(`- Every git process also blocks the server's event loop while spawn() waits for the exec (${span(blocked)} per process here, the walk along PATH included), so fewer processes help twice.`);
  }
  return out.join('\n');
}

function profileSection(rows, profiles) {
  if (profiles.length === 0) return '';
  const found = findings(rows, profiles);
  return `Where bulkhead's time goes (profile pass):\n\nAn untimed pass after the timed rounds: each bulkhead request ${PROFILE_CALLS} more times (after a warmup) to a server preloaded with bench/lib/git-trace.mjs, which notes when the request arrived, each git process the call started and when the reply was written. Medians; for the whole-file blame, its first call.\n\n${profileTable(profiles)}\n\n${found ? `${found}\n\n` : ''}`;
}

function describeData(info) {
  return `Data: a generated repository of ${info.commits.toLocaleString('en-US')} commits (linear history) and ${info.files.toLocaleString('en-US')} files at HEAD \`${info.head.slice(0, 12)}\`; the large file ${info.large.path} (${info.large.lines.toLocaleString('en-US')} lines, ${(info.large.bytes / 1024 ** 2).toFixed(1)} MiB) read at the old commit \`${info.large.rev.slice(0, 12)}\` that rewrote it (it changed again later); the blame file ${info.blame.path} (${info.blame.lines.toLocaleString('en-US')} lines, changed by ${info.blame.touches.toLocaleString('en-US')} commits); the diff range \`${info.range.from.slice(0, 12)}..${info.range.to.slice(0, 12)}\` (10 commits, ${info.range.files.length.toLocaleString('en-US')} files). Generator v${info.generator}, ${info.gitVersion}.`;
}

function writeResults(dir, { command, runs, info, rows, checks, table, targetText, stale, sides, startLoad, profiles, rebuilt }) {
  mkdirSync(dir, { recursive: true });
  const m = machine(stale);
  const date = new Date().toISOString();
  const checkText = [
    checks.ours.size ? `**Mismatches (bulkhead or raw git):**\n${[...checks.ours].map((x) => `- ${x}`).join('\n')}` : 'Every bulkhead and raw git reply passed its check.',
    checks.peer.size ? `Peer replies that failed their check:\n${[...checks.peer].map((x) => `- ${x}`).join('\n')}` : sides.includes('peer') ? 'Every peer reply passed its check.' : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  const peerBlame = rows.find((row) => row.id.startsWith('blame') && row.peer?.wrong)?.peer;
  const blameNote = peerBlame?.wrong
    ? `\n\nWhy the peer's git_blame is wrong: it runs \`git blame --porcelain\` and keeps a line only when that line's header block carries \`author\` and \`author-time\`, but porcelain output gives a commit's details only the first time the commit appears, so every later line from an already-seen commit is dropped (${peerBlame.wrong}).`
    : '';
  const md = `# git benchmark\n\nCommand: \`${command}\`  \nDate: ${date}  \nMachine: ${m.cpus}, ${m.memory} RAM, ${m.os}, Node ${m.node}, ${m.git}; load average ${startLoad} at the start, ${m.load} at the end  \nCompared with: ${m.peer} and the raw git CLI  \nBulkhead commit: ${m.commit}${rebuilt ? '  \n**Warning: servers/git or shared was rebuilt during this run; its rows mix two builds.**' : ''}\n\n${describeData(info)} ${runs * FAST_ROUNDS_FACTOR} timed rounds for the git_log, git_diff and git_show_file cases, ${runs} for the blame cases.\n\n${table}\n\nTargets (issue 5):\n${targetText}\n\n${checkText}${blameNote}\n\n${profileSection(rows, profiles)}${methodNotes(runs)}\n`;
  writeResult(join(dir, 'git.md'), md);
  const { repo: _path, ...data } = info;
  writeResult(join(dir, 'git.json'), `${JSON.stringify({ command, date, machine: { ...m, startLoad, rebuiltDuringRun: rebuilt }, runs, data, rows, profiles, mismatches: [...checks.ours], peerMismatches: [...checks.peer] }, null, 2)}\n`);
  return join(dir, 'git.md');
}

export async function main(argv) {
  const options = parseOptions(argv);
  stopChildrenOnExit();
  const stale = checkBuild(options.sides);
  const info = await prepareRepo(WORK);
  process.stderr.write('Working out the expected replies with plain git ...\n');
  const expected = expectations(info, { skip: LOG_SKIP, count: LOG_COUNT, window: WINDOW });
  const ctx = { ...options, info, expected, start: starters(info.repo), checks: { ours: new Set(), peer: new Set() } };
  process.stderr.write(`Running the git bench (${ctx.runs * FAST_ROUNDS_FACTOR} rounds per case, ${ctx.runs} for blame, after a warmup; sides: ${ctx.sides.map((key) => SIDE_NAMES[key]).join(', ')})\n`);
  const startLoad = loadavg().map((n) => n.toFixed(1)).join(' ');
  const startBuild = buildStamp();
  const rows = [];
  for (const spec of buildCases(ctx)) rows.push(await runCase(ctx, spec));
  let profiles = [];
  if (ctx.profile) {
    process.stderr.write(`Profile pass (untimed): ${PROFILE_CALLS} traced calls per bulkhead request\n`);
    const specs = buildCases(ctx);
    profiles = await profileCases(specs, ctx.start.traced, TRACE_FILE, PROFILE_CALLS);
  }
  const rebuilt = ctx.sides.includes('bulkhead') && buildStamp() !== startBuild;
  if (rebuilt) process.stderr.write('\nwarning: servers/git or shared was rebuilt during this run, so its rows mix two builds; run again\n');
  const table = gitTable(rows, ctx.sides);
  const targetText = targets(rows, ctx.sides);
  const resultsDir = options.complete ? join(BENCH, 'results') : join(WORK, 'results');
  const written = writeResults(resultsDir, { ...ctx, info, rows, table, targetText, stale, startLoad, profiles, rebuilt });
  process.stdout.write(`\n${table}\n\nTargets:\n${targetText}\n\nWritten to ${relative(process.cwd(), written)} and git.json\n`);
  if (ctx.checks.ours.size > 0) {
    process.stderr.write(`\n✗ ${ctx.checks.ours.size} MISMATCHES (bulkhead or raw git):\n${[...ctx.checks.ours].map((x) => `  - ${x}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}
