// `node bench/lib/fs-write-profile.mjs FILE.cpuprofile [--top N] [--match REGEX] [--calls N]`: where a
// server's main thread spent its time, from a `node --cpu-prof` profile (pnpm bench fs-write
// --profile writes them). Self time per function, then inclusive time (each sample counted once
// per function on its stack). Work in the libuv pool (fsync, file writes) is not on the main
// thread: it shows as (idle) or (program) there, not under the function that awaited it.
// --calls N adds a column per call (the profile covers the warmup calls too: count them).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, match: { type: 'string' }, calls: { type: 'string' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/lib/fs-write-profile.mjs FILE.cpuprofile [--top N] [--match REGEX] [--calls N]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const top = Number(values.top);
const match = values.match ? new RegExp(values.match) : undefined;
const calls = values.calls ? Number(values.calls) : undefined;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

function keyOf(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return functionName || '(anonymous)';
  const file = url.includes('node_modules') ? url.replace(/^.*node_modules\//, '').replace(/^\.pnpm\/[^/]+\/node_modules\//, '') : basename(url);
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

const self = new Map();
const inclusive = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  total += ms;
  const leaf = keyOf(byId.get(id));
  self.set(leaf, (self.get(leaf) ?? 0) + ms);
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const key = keyOf(byId.get(at));
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
  }
});

const show = (title, map) => {
  const rows = [...map].filter(([key]) => !match || match.test(key)).sort((a, b) => b[1] - a[1]).slice(0, top);
  process.stdout.write(`\n${title}\n`);
  for (const [key, ms] of rows) {
    const perCall = calls ? `${(ms / calls).toFixed(2).padStart(9)} ms/call ` : '';
    process.stdout.write(`${ms.toFixed(1).padStart(10)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}% ${perCall} ${key}\n`);
  }
};
process.stdout.write(`${basename(positionals[0])}: ${(total / 1000).toFixed(2)} s sampled\n`);
show('self time', self);
show('inclusive time', inclusive);
