// `pnpm bench approvals`: what a pending approval adds to a call, without the human's think time.
// The same write_file call to bulkhead-fs-write served alone over stdio, by a client without
// elicitation: once allowed by permissions.yaml, once held as a pending approval that a decider
// in this process approves the moment it finds it (it polls the store's folder every 2 ms). Each call writes a new file, so every held call opens a new approval.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ApprovalStore } from '../shared/dist/approvals/store.js';
import { benchFlags, positiveInteger } from './lib/cli-options.mjs';
import { formatMs } from './lib/measure.mjs';
import { stopChildrenOnExit, track, untrack } from './lib/processes.mjs';
import { writeResult } from './lib/results.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const WORK = join(BENCH, '.work', 'approvals');
const FS_WRITE_CLI = join(REPO, 'servers', 'fs-write', 'dist', 'cli.js');
const RESULTS = join(BENCH, 'results', 'approvals.md');
const OTHER_RESULTS = join(BENCH, '.work', 'results', 'approvals.md');
const WARMUP = 5;
/** How often the decider lists the store's folder; what it adds is at most this, about half on average. */
const POLL_MS = 2;

const USAGE = `usage: pnpm bench approvals [--runs N]

  --runs N   timed calls per case after ${WARMUP} warmup calls each (default 100); the two cases take turns

Only a default run writes bench/results/approvals.md; any other goes to bench/.work/results/.
`;

async function startFsWrite(name, permissions) {
  const root = join(WORK, name);
  mkdirSync(join(root, '.bulkhead'), { recursive: true });
  writeFileSync(join(root, '.bulkhead', 'permissions.yaml'), permissions);
  const transport = new StdioClientTransport({ command: process.execPath, args: [FS_WRITE_CLI, '--root', root], stderr: 'ignore' });
  // No elicitation capability: the client Claude Desktop is.
  const client = new Client({ name: 'bulkhead-bench', version: '0.1.0' });
  await client.connect(transport);
  track(transport.pid);
  let written = 0;
  return {
    controlDir: join(root, '.bulkhead'),
    /** One write_file of a new file; the ms it took as the client saw it. */
    call: async () => {
      const path = `file-${written++}.txt`;
      const started = performance.now();
      const result = await client.callTool({ name: 'write_file', arguments: { path, content: 'one line\n' } }, undefined, { timeout: 60_000 });
      const ms = performance.now() - started;
      const text = result.content.map((block) => block.text ?? '').join('\n');
      if (result.isError || !text.startsWith(`Created ${path}`)) throw new Error(`${name}: write_file failed: ${text.slice(0, 300)}`);
      return { ms, started };
    },
    close: async () => {
      await client.close();
      untrack(transport.pid);
    },
  };
}

/**
 * Approves every new approval once, as soon as a poll finds it. The poll lists the store's folder
 * every POLL_MS and reads only a record it has not seen, so the decider costs next to nothing
 * itself (the store's pending() reads every kept record, and its watch waits a 40 ms debounce).
 */
function startDecider(controlDir) {
  const store = new ApprovalStore(controlDir);
  const decided = new Set();
  const seen = [];
  const poll = setInterval(() => {
    let names;
    try {
      names = readdirSync(store.folder);
    } catch {
      return;
    }
    for (const name of names) {
      const id = /^([a-z2-9]{8})\.json$/.exec(name)?.[1];
      if (!id || decided.has(id)) continue;
      decided.add(id);
      seen.push(performance.now());
      store.decide(id, 'once', 'the approvals bench');
    }
  }, POLL_MS);
  return {
    /** When the decider saw (and at once decided) the approval of the last held call. */
    lastSeen: () => seen.at(-1),
    stop: () => clearInterval(poll),
  };
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const summary = (values) => ({ median: percentile(values, 50), p90: percentile(values, 90) });

export async function main(argv) {
  const flags = benchFlags(argv, { runs: { type: 'string' } }, USAGE);
  const runs = positiveInteger(flags.runs, 100, '--runs');
  stopChildrenOnExit();
  rmSync(WORK, { recursive: true, force: true });
  const allowed = await startFsWrite('allowed', 'allow:\n  - fs_write:write_file\n');
  const held = await startFsWrite('held', 'approval_wait_ms: 60000\n');
  const decider = startDecider(held.controlDir);
  const times = { allowed: [], held: [], toApproval: [], afterDecision: [] };
  try {
    for (let i = 0; i < WARMUP; i++) {
      await allowed.call();
      await held.call();
    }
    for (let i = 0; i < runs; i++) {
      // The two take turns going first, so both see the same load.
      const order = i % 2 === 0 ? ['allowed', 'held'] : ['held', 'allowed'];
      for (const which of order) {
        if (which === 'allowed') times.allowed.push((await allowed.call()).ms);
        else {
          const { ms, started } = await held.call();
          times.held.push(ms);
          const seen = decider.lastSeen();
          times.toApproval.push(seen - started);
          times.afterDecision.push(started + ms - seen);
        }
      }
      process.stderr.write(`\r${i + 1}/${runs} `);
    }
    process.stderr.write('\n');
  } finally {
    decider.stop();
    await Promise.all([allowed.close(), held.close()]);
  }

  const a = summary(times.allowed);
  const h = summary(times.held);
  const toApproval = summary(times.toApproval);
  const afterDecision = summary(times.afterDecision);
  const row = (label, s, note) => `| ${label} | ${formatMs(s.median)} | ${formatMs(s.p90)} | ${note} |`;
  const report = `# Benchmark: what a pending approval adds to a call

\`pnpm bench approvals\` (bench/approvals.mjs): the same \`write_file\` of a new one-line file to
bulkhead-fs-write served alone over stdio, by an SDK client without elicitation (as Claude Desktop
is). **allowed**: permissions.yaml allows the tool, the call runs at once. **held**: the default
policy asks, so the call becomes a pending approval that a decider in the bench process approves
(\`once\`) as soon as it finds it, listing the store's folder every ${POLL_MS} ms: no human think time.
${runs} timed calls per case after ${WARMUP} warmup calls each; the two cases take turns.

| case | median | p90 | note |
| --- | ---: | ---: | --- |
${row('allowed by policy', a, 'gate, tool, audit line')}
${row('held, approved at once', h, 'the same, plus the preview (a dry run), the approval written, polled, decided and claimed')}
${row('extra time of the approval', { median: h.median - a.median, p90: h.p90 - a.p90 }, `held / allowed: ${(h.median / a.median).toFixed(1)}× at the median, ${(h.p90 / a.p90).toFixed(1)}× at p90`)}
${row('… call sent → approval seen by the decider', toApproval, `validation, the gate, the dry-run preview, the prompt, the approval file, up to ${POLL_MS} ms of polling`)}
${row('… decision written → result back', afterDecision, 'the held call wakes (fs.watch on the folder, a 500 ms poll behind it), claims the decision, runs the write and answers')}

What it means: with a human deciding, the time a call waits is the human's; what Bulkhead adds
on top of it is the row "extra time of the approval" (${formatMs(h.median - a.median)} at the median), against the
seconds a human takes to read and decide. The wake-up rides on fs.watch; where fs.watch delivers
nothing (some network and container file systems), the store's 500 ms poll carries it, and the
held call then answers up to half a second later. Decided approvals are kept (24 hours) for the
identical retry, and a held call looks among them for its own first, so the last calls of this run
read ${WARMUP + runs} kept approvals before opening theirs: part of what the p90 measures.

Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Linux ${release()}, Node ${process.version}; load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(', ')} when the run ended (other work on the machine shows in the p90).
`;
  const file = flags.runs === undefined ? RESULTS : OTHER_RESULTS;
  mkdirSync(dirname(file), { recursive: true });
  writeResult(file, report);
  process.stdout.write(`${report}\nwrote ${file}\n`);
  rmSync(WORK, { recursive: true, force: true });
}
