// The git bench's profile pass (untimed, after the timed rounds): each bulkhead request is sent a
// few more times to a server preloaded with git-trace.mjs, and the call is split into the git
// processes it ran and the time around them.
import { readFileSync, rmSync } from 'node:fs';
import { formatMs } from './measure.mjs';
import { percentile } from './git-measure.mjs';

const median = (values) => percentile(values, 50);
export const kib = (bytes) => (bytes < 10 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`);

/** Runs `calls` traced calls (after one warmup) of each case's bulkhead request. */
export async function profileCases(cases, startTraced, traceFile, calls) {
  const profiles = [];
  for (const spec of cases) {
    rmSync(traceFile, { force: true });
    const server = await startTraced();
    const client = [];
    try {
      for (let i = 0; i <= calls; i++) {
        const { ms } = await server.call(spec.oursRequest.name, spec.oursRequest.args);
        if (i > 0) client.push(ms);
      }
    } finally {
      await server.close();
    }
    const records = readFileSync(traceFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line)).slice(1);
    profiles.push({ id: spec.id, label: spec.label, ...summarize(records, client) });
  }
  rmSync(traceFile, { force: true });
  return profiles;
}

function summarize(records, client) {
  const spawnCount = Math.max(...records.map((r) => r.spawns.length));
  const gits = Array.from({ length: spawnCount }, (_, i) => ({
    command: records.find((r) => r.spawns[i])?.spawns[i].command,
    ms: median(records.filter((r) => r.spawns[i]).map((r) => r.spawns[i].closed - r.spawns[i].spawned)),
  }));
  const server = median(records.map((r) => r.ms));
  return {
    calls: records.length,
    client: median(client),
    server,
    gits,
    gitTotal: median(records.map((r) => r.spawns.reduce((sum, s) => sum + (s.closed - s.spawned), 0))),
    spawnBlocking: median(records.map((r) => r.spawns.reduce((sum, s) => sum + s.sync, 0))),
    beforeGit: median(records.map((r) => r.spawns[0]?.spawned ?? r.ms)),
    afterGit: median(records.map((r) => r.ms - Math.max(0, ...r.spawns.map((s) => s.closed)))),
    outside: median(client) - server,
    replyBytes: median(records.map((r) => r.replyBytes)),
    textBytes: median(records.map((r) => r.textBytes ?? 0)),
    structuredBytes: median(records.map((r) => r.structuredBytes ?? 0)),
  };
}

export function profileTable(profiles) {
  const header = ['case', 'round trip', 'in the server', 'git processes, in order (spawn to pipes closed)', 'of which spawn() blocks the event loop', 'server before the first git', 'server after the last git', 'outside the server (pipe, JSON, client)', 'reply: text + structured'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 || i === 3 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const p of profiles) {
    const gits = p.gits.map((g) => `${g.command} ${formatMs(g.ms)}`).join(' → ');
    const processes = p.gits.length === 1 ? 'one process' : `${p.gits.length} processes, ${formatMs(p.gitTotal)}`;
    lines.push(`| ${[p.label, formatMs(p.client), formatMs(p.server), `${gits} (${processes})`, formatMs(p.spawnBlocking), formatMs(p.beforeGit), formatMs(p.afterGit), formatMs(p.outside), `${kib(p.textBytes)} + ${kib(p.structuredBytes)}`].join(' | ')} |`);
  }
  return lines.join('\n');
}
