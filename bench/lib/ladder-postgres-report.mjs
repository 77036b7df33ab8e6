// The report of `pnpm bench ladder --backend postgres`: bench/results/ladder-postgres.{md,json} on
// a full run (bench/.work/ladder-postgres/results/ otherwise), the targets of issue 19 met or not.
import { BASE_VARIANTS, CLIENTS_PER_PROCESS, isMcp, KILL, mcpVariant } from './ladder-postgres.mjs';

export const TARGETS = { claimsPerSecond: 2_000, claimsAtClients: 8, ratioToRaw: 0.5, searchP99Ms: 10 };

const int = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));
const x = (n) => `${n.toFixed(2)}×`;
const met = (ok) => (ok ? '**met**' : '**not met**');

export const VARIANT_LABELS = {
  'mcp-1': 'MCP, 1 server',
  'mcp-2': 'MCP, 2 servers',
  store: 'store in-process',
  'raw-events': 'raw SQL, with events',
  'raw-bare': 'raw SQL, bare',
};
const label = (variant) => VARIANT_LABELS[variant] ?? `MCP, ${variant.slice('mcp-'.length)} servers`;

/** The columns of the claims table: MCP over each server count, the store, then the raw statements. */
function columns(options) {
  return [...options.servers.map(mcpVariant), ...BASE_VARIANTS.filter((v) => v === 'store'), 'raw-events', 'raw-bare'];
}

export function verdicts(options, result) {
  const lines = [];
  const { claims, kill, search } = result;
  if (claims) {
    const at = claims.rows.find((row) => row.clients === TARGETS.claimsAtClients) ?? claims.rows.at(-1);
    for (const variant of Object.keys(at.stats).filter(isMcp)) {
      const rate = at.stats[variant].median;
      lines.push({ key: `throughput-${variant}`, ok: rate >= TARGETS.claimsPerSecond, text: `Claim+answer through MCP with ${at.clients} clients over ${variant.slice(4)} server${variant === 'mcp-1' ? '' : 's'}: ${int(rate)}/s (target ≥ ${int(TARGETS.claimsPerSecond)}/s)` });
    }
    for (const row of claims.rows) {
      for (const [variant, ratio] of Object.entries(row.ratios)) {
        lines.push({
          key: `ratio-${row.clients}-${variant}`,
          ok: ratio.events >= TARGETS.ratioToRaw,
          bareOk: ratio.bare >= TARGETS.ratioToRaw,
          text: `${row.clients} client${row.clients === 1 ? '' : 's'}, ${label(variant)}: ${x(ratio.events)} the raw SQL with events (${int(row.stats[variant].median)} vs ${int(row.stats['raw-events'].median)}/s), ${x(ratio.bare)} the bare raw UPDATEs (${int(row.stats['raw-bare'].median)}/s) (target ≥ ${TARGETS.ratioToRaw}×)`,
        });
      }
    }
    lines.push({ key: 'exactly-once', ok: claims.rows.every((row) => row.verified), text: `Every ask answered exactly once in every run, checked in SQL (${claims.runs.length} runs)` });
  }
  if (kill) {
    lines.push({
      key: 'kill',
      ok: kill.ok,
      text: `kill -9 of one of two servers mid-run: ${kill.lost} asks lost, ${kill.answeredTwice} answered twice, ${kill.reclaimed} reclaimed after their lease lapsed (max fence ${kill.maxFence}), ${kill.supersededRefused} of ${kill.superseded} answers with a superseded fence refused`,
    });
  }
  if (search) {
    lines.push({ key: 'search', ok: search.p99 <= TARGETS.searchP99Ms, text: `ladder_search p99 over ${int(search.rungs)} rungs on PostgreSQL, through PgRungStore: ${ms(search.p99)} ms (target ≤ ${TARGETS.searchP99Ms} ms)` });
    if (search.overMcp) lines.push({ key: 'search-mcp', ok: search.overMcp.p99 <= TARGETS.searchP99Ms, text: `the same through a ladder server over MCP: ${ms(search.overMcp.p99)} ms (target ≤ ${TARGETS.searchP99Ms} ms)` });
  }
  return lines;
}

export function verdictText(lines) {
  return lines.map((line) => (line.key.startsWith('ratio-') ? `- ${line.text}: against raw with events ${met(line.ok)}; against bare ${met(line.bareOk)}` : `- ${line.text}: ${met(line.ok)}`)).join('\n');
}

export function claimsTable(options, claims) {
  const cols = columns(options);
  const ratioCols = cols.filter((v) => !v.startsWith('raw-'));
  const header = `| clients | ${cols.map(label).join(' | ')} | ${ratioCols.map((v) => `${label(v)} / raw with events`).join(' | ')} | exactly once |`;
  const lines = [header, `| ---: | ${cols.map(() => '---:').join(' | ')} | ${ratioCols.map(() => '---:').join(' | ')} | --- |`];
  for (const row of claims.rows) {
    const cell = (variant) => {
      const s = row.stats[variant];
      if (!s) return '—';
      return s.rates.length > 1 ? `${int(s.median)}/s (${int(s.min)}–${int(s.max)})` : `${int(s.median)}/s`;
    };
    lines.push(`| ${row.clients} | ${cols.map(cell).join(' | ')} | ${ratioCols.map((v) => (row.ratios[v] ? x(row.ratios[v].events) : '—')).join(' | ')} | ${row.verified ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}

/** CPU per MCP call in the servers and in the client processes (medians of the rounds), per client count and server count. */
export function cpuTable(options, claims) {
  const mcp = options.servers.map(mcpVariant);
  const lines = [`| clients | ${mcp.map((v) => `${label(v)}: servers / clients`).join(' | ')} |`, `| ---: | ${mcp.map(() => '---:').join(' | ')} |`];
  for (const row of claims.rows) {
    const cell = (variant) => {
      const cpu = row.stats[variant]?.cpuPerCall;
      return cpu ? `${cpu.serverMs.toFixed(2)} / ${cpu.clientMs.toFixed(2)} ms` : '—';
    };
    lines.push(`| ${row.clients} | ${mcp.map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

export function killTable(kill) {
  return [
    '| fencing under kill -9 | |',
    '| --- | ---: |',
    `| clients (over 2 servers), lease | ${kill.clients}, ${kill.leaseSeconds} s |`,
    `| answered when the first server got SIGKILL | ${int(kill.answeredAtKill)} of ${int(kill.asks)} (after ${ms(kill.killAfterMs)} ms) |`,
    `| clients of the dead server / surviving clients | ${kill.orphanedClients} / ${kill.survivingClients} |`,
    `| survivors finished the queue in | ${ms(kill.finishAfterKillMs)} ms after the kill |`,
    `| asks lost / answered twice | ${kill.lost} / ${kill.answeredTwice} |`,
    `| asks claimed again after their lease lapsed (fence ≥ 2) | ${kill.reclaimed} (max fence ${kill.maxFence}) |`,
    `| claims the dead server's clients held, answered late with their old fence | ${kill.lateAnswers} |`,
    `| of which their own answer had committed before its reply was lost | ${kill.lateOwnAnswerRepliesLost} |`,
    `| answers with a superseded fence refused / accepted | ${kill.supersededRefused} / ${kill.supersededAccepted} |`,
    ...Object.entries(kill.refusals).map(([reason, n]) => `| refused: ${reason} | ${n} |`),
  ].join('\n');
}

export function searchTable(search) {
  return [
    '| case | result |',
    '| --- | ---: |',
    `| ladder_search p50, ${int(search.rungs)} rungs, ${int(search.queries)} queries | ${ms(search.p50)} ms |`,
    `| ladder_search p99 | ${ms(search.p99)} ms |`,
    `| ladder_search max | ${ms(search.max)} ms |`,
    `| ladder_search, each of the 5 most common words alone | ${search.mostCommonWordsMs.map(ms).join(', ')} ms |`,
    `| queries matching over 2,000 rungs (broad) | ${int(search.broadQueries)} of ${int(search.queries)} |`,
    ...(search.overMcp
      ? [
          `| through a ladder server (MCP over Streamable HTTP, operator token): p50 | ${ms(search.overMcp.p50)} ms |`,
          `| through a ladder server: p99 | ${ms(search.overMcp.p99)} ms |`,
          `| through a ladder server: max | ${ms(search.overMcp.max)} ms |`,
        ]
      : []),
    `| loading the rungs through PgRungStore.write, 500 a batch | ${search.loadMs === null ? '—' : `${ms(search.loadMs / 1000)} s`} |`,
  ].join('\n');
}

function methodNotes(options, result) {
  const { sql } = result;
  const parts = [`- PostgreSQL: a throwaway cluster made for the run under bench/.work (scripts/pg-cluster.mjs \`startCluster(dir, { durable: true })\`: fsync and synchronous_commit on, 127.0.0.1 only, password authentication), stopped and removed at the end; one database for everything.`];
  if (result.claims) {
    parts.push(`- Claims: one lane with ${int(options.asks)} open \`work\` asks (priorities 0–9, no dependencies, no assignee) posted through \`PgWorkQueueStore.postAsk\` before any timing and kept in a copy; before every run the asks and events are truncated and restored from it, then ANALYZE and CHECKPOINT, so every run starts from the same queue with no checkpoint due. Each client is its own actor (client-0, client-1, …) with its own ladder token (\`createToken\`, what \`bulkhead-ladder token create\` runs). All clients get "go" at once; the time runs from that signal to the last client's last answer. Each client loops until nothing is claimable. ${options.rounds} round${options.rounds === 1 ? '' : 's'}; in each, for each client count, the variants run back to back, the one going first rotating; the table shows the median (and range) of the rounds; ratios are of those medians.
- MCP: real \`bulkhead-ladder --http 127.0.0.1:0\` processes (servers/ladder/dist/cli.js) on the database, each with its own control-plane folder (ladder_policy.yaml naming the database with \`password_file\` and \`pool_size: ${result.poolSize ?? 10}\`, permissions.yaml allowing the ladder's tools; audit on, as by default); SDK clients over Streamable HTTP, ${CLIENTS_PER_PROCESS} per worker process, client i on server i mod S, calling \`ask_claim_next\` {lane_id} then \`ask_answer\` {ask_id, fence, answer: complete}. With 2 servers the clients are spread over both.
- Store in-process: N worker processes, each \`PgWorkQueueStore.open(new PgDatabase(…))\` from servers/ladder/dist, \`claimNext\` then \`answer\`: what the tools run, without MCP, HTTP and the server around it.
- Raw SQL: N worker processes, one pg connection each, named (prepared) statements, the time from the database's clock as the store takes it. Bare: two autocommit UPDATEs:
\`\`\`sql
${sql.bareClaim};
${sql.bareAnswer};
\`\`\`
- Raw with events (the honest comparison): the store's claimability guard folded into one claim statement with the \`claimed\` event in the same statement, and the guarded answer with its \`answered\` event, so two round trips and two transactions per claim+answer:
\`\`\`sql
${sql.guardedClaim};
${sql.guardedAnswer};
\`\`\`
- Exactly once: after every run, in SQL: the clients reported ${int(options.asks)} distinct ask ids between them; every ask is \`answered\` \`complete\` with fence 1 and attempts 1 by the actor that reported it; (all but raw bare) every ask has exactly one \`claimed\` and one \`answered\` event.`);
  }
  if (result.kill) parts.push(`- Fencing: ${KILL.clients} MCP clients over 2 servers claim with \`lease_seconds: ${KILL.leaseSeconds}\`; when ${Math.round(KILL.killAtShare * 100)}% of the queue is answered the first server gets SIGKILL. Its clients stop, keeping the claim they held; the second server's clients go on, polling an empty queue until every ask is answered (the dead server's claims lapse and are claimed again with a higher fence). Then each client of the dead server answers the claim it held through the surviving server with its old fence. Checked from the rows and events: every ask answered exactly once by one actor, none lost; a late answer whose fence is the one the ask was answered with was the client's own answer that committed before its reply was lost; every other late answer (a superseded fence) must be refused.`);
  if (result.search) parts.push(`- ladder_search: bench/lib/ladder-rungs.mjs's workload (the SQLite bench's: ${int(options.rungs)} rungs in 10 repositories with Zipf-distributed words, 1,000 queries of 1–3 words, a quarter limited to one repo, limit 20, after 50 warmups; p50/p99 by nearest rank) on the compiled \`Ladder\` with \`PgRungStore\`, in-process; then the same queries as \`ladder_search\` calls to a \`bulkhead-ladder --http\` server on the database (one MCP client, the operator's token), checked to find the same hits.`);
  return `Method:\n${parts.join('\n')}`;
}

export function postgresReport({ options, result, m, startLoad, endLoad, date }) {
  const v = verdicts(options, result);
  const table = result.claims ? claimsTable(options, result.claims) : '';
  const cTable = result.claims ? cpuTable(options, result.claims) : '';
  const kTable = result.kill ? killTable(result.kill) : '';
  const sTable = result.search ? searchTable(result.search) : '';
  const pg = result.postgres;
  const md = `# ladder benchmark on PostgreSQL

Command: \`${options.command}\`  
Date: ${date}  
Machine: ${m.cpus}, ${m.memory} RAM, ${m.os}, Node ${m.node}; load average ${startLoad} at the start, ${endLoad} at the end  
PostgreSQL: ${pg.version.split(' on ')[0]} (fsync ${pg.fsync}, synchronous_commit ${pg.synchronous_commit}, shared_buffers ${pg.shared_buffers}), on the same machine  
Bulkhead commit: ${m.commit}
${table ? `\nClaim-and-answer throughput over ${int(options.asks)} asks in one lane (claims answered per second, wall time from the start signal to the last answer):\n\n${table}\n\nCPU time per MCP call (a claim or an answer), from the start signal to the last answer: the ladder servers' (/proc user + system) and the MCP client processes' (process.cpuUsage), divided by two calls per ask:\n\n${cTable}\n` : ''}
Targets (issue 19):
${verdictText(v)}
${kTable ? `\n${kTable}\n` : ''}${sTable ? `\nladder_search on PostgreSQL:\n\n${sTable}\n` : ''}
${methodNotes(options, result)}
`;
  const json = `${JSON.stringify({ command: options.command, date, machine: { ...m, startLoad, endLoad }, postgres: pg, options, targets: TARGETS, verdicts: v, timings: result.timings, sql: result.sql, shape: result.shape, claims: result.claims, kill: result.kill, search: result.search }, null, 1)}\n`;
  // Throughput targets may be missed on a busy machine; a failed check of correctness fails the bench.
  const verified = v.filter((line) => line.key === 'exactly-once' || line.key === 'kill').every((line) => line.ok);
  return { md, json, table, cTable, kTable, sTable, verdicts: verdictText(v), verified };
}
