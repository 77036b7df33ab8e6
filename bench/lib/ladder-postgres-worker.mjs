// One claiming process of `pnpm bench ladder --backend postgres`: runs one or more clients of one
// variant, says "ready", waits for "go", then each client claims and answers asks until the queue
// is empty, and the process reports the ask ids each client answered and when it ended (epoch ms).
//   node ladder-postgres-worker.mjs CONFIG_JSON
// Variants (every client acts as its own actor):
//   mcp         an MCP client over Streamable HTTP to a bulkhead-ladder --http server, with its own
//               ladder token: ask_claim_next, then ask_answer with the fence
//   store       PgWorkQueueStore from servers/ladder/dist in this process: claimNext + answer complete
//   raw-bare    two autocommit UPDATEs (ladder-postgres-sql.mjs)
//   raw-events  the guarded claim and the answer, each one statement with its event row
// With `kill` (mcp only), a client whose server goes away keeps the claim it held, stops, and on
// {late: URL} answers it through that other server with its old fence; an empty queue is polled
// until "stop", since asks held by the dead server's clients come back when their leases lapse.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from '../../servers/ladder/node_modules/pg/lib/index.js';
import { PgDatabase } from '../../servers/ladder/dist/store/pg/database.js';
import { readPassword, withPassword } from './ladder-postgres-servers.mjs';
import { rawSql } from './ladder-postgres-sql.mjs';

const config = JSON.parse(process.argv[2]);
const LEASE_MS = 15 * 60_000;
/** How long an MCP call may take before the client counts its server as gone (kill run only). */
const KILL_CALL_TIMEOUT_MS = 5_000;
const EMPTY_POLL_MS = 150;

let stopped = false;

/** The first text of a tool result, for refusals. */
const textOf = (result) => result.content?.find((part) => part.type === 'text')?.text ?? '';

async function mcpClient(url, token) {
  const client = new Client({ name: 'bulkhead-bench-ladder', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } }, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } }));
  return client;
}

/** A tool call's structured result; a refusal (isError) throws with its text. */
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, config.kill ? { timeout: KILL_CALL_TIMEOUT_MS } : undefined);
  if (result.isError) {
    const error = new Error(textOf(result));
    error.refusal = true;
    throw error;
  }
  return result.structuredContent;
}

async function setupMcp(spec) {
  const client = await mcpClient(spec.url, spec.token);
  const state = { held: undefined };
  return {
    state,
    async claim() {
      const { claim } = await call(client, 'ask_claim_next', { lane_id: config.laneId, ...(config.leaseSeconds ? { lease_seconds: config.leaseSeconds } : {}) });
      if (claim === null) return undefined;
      state.held = { id: claim.ask.id, fence: claim.fence };
      return state.held;
    },
    async answer(claimed) {
      await call(client, 'ask_answer', { ask_id: claimed.id, fence: claimed.fence, answer: 'complete' });
      state.held = undefined;
    },
    close: () => client.close().catch(() => {}),
  };
}

async function setupStore(spec) {
  const { PgWorkQueueStore } = await import('../../servers/ladder/dist/store/pg/work-queue.js');
  const db = new PgDatabase({ url: config.db.url, passwordFile: config.db.passwordFile, poolSize: 2, source: 'the bench' });
  const store = await PgWorkQueueStore.open(db, {});
  return {
    async claim() {
      const claim = await store.claimNext(config.laneId, spec.actor);
      return claim ? { id: claim.ask.id, fence: claim.fence } : undefined;
    },
    async answer(claimed) {
      await store.answer({ ask_id: claimed.id, fence: claimed.fence, answer: 'complete' }, spec.actor);
    },
    async close() {
      await store.close?.();
      await db.close().catch(() => {});
    },
  };
}

async function setupRaw(spec) {
  const client = new pg.Client({ connectionString: withPassword(config.db.url, readPassword(config.db.passwordFile)), application_name: 'bulkhead-bench-raw' });
  await client.connect();
  const sql = rawSql(config.shape);
  // Named statements: parsed once per connection, as a hand-written client would prepare them.
  const q = (name, values) => client.query({ name, text: sql[name], values });
  const bare = config.variant === 'raw-bare';
  return {
    async claim() {
      const { rows } = await q(bare ? 'bareClaim' : 'guardedClaim', [config.laneId, spec.actor, LEASE_MS]);
      return rows[0] ? { id: rows[0].id, fence: Number(rows[0].fence) } : undefined;
    },
    async answer(claimed) {
      const { rowCount } = await q(bare ? 'bareAnswer' : 'guardedAnswer', [claimed.id, spec.actor, claimed.fence]);
      if (rowCount !== 1) throw new Error(`answer of ${claimed.id} matched no row`);
    },
    close: () => client.end().catch(() => {}),
  };
}

const SETUPS = { mcp: setupMcp, store: setupStore, 'raw-bare': setupRaw, 'raw-events': setupRaw };

/** One client's loop; in a kill run a broken server ends it with the claim it held. */
async function drain(spec, worker) {
  const out = { actor: spec.actor, ids: [], orphaned: false, held: undefined, endedAt: 0, errors: [] };
  for (;;) {
    let claimed;
    try {
      claimed = await worker.claim();
      if (claimed === undefined) {
        if (!config.kill || stopped) break;
        await sleep(EMPTY_POLL_MS);
        continue;
      }
      await worker.answer(claimed);
      out.ids.push(claimed.id);
    } catch (error) {
      if (!config.kill || error.refusal) throw error;
      out.orphaned = true;
      out.held = worker.state?.held;
      out.errors.push(String(error?.message ?? error).slice(0, 200));
      break;
    }
  }
  out.endedAt = performance.timeOrigin + performance.now();
  return out;
}

/** After the kill: an orphaned client answers the claim it held through another server, with its old fence. */
async function lateAnswer(spec, result, url) {
  if (!result.orphaned || result.held === undefined) return;
  const client = await mcpClient(url, spec.token);
  try {
    await call(client, 'ask_answer', { ask_id: result.held.id, fence: result.held.fence, answer: 'complete' });
    result.late = { ...result.held, accepted: true };
  } catch (error) {
    if (!error.refusal) throw error;
    result.late = { ...result.held, accepted: false, refusal: error.message };
  } finally {
    await client.close().catch(() => {});
  }
}

async function main() {
  const setup = SETUPS[config.variant];
  if (!setup) throw new Error(`unknown variant ${config.variant}`);
  const workers = await Promise.all(config.clients.map((spec) => setup({ ...spec, variant: config.variant })));
  const go = new Promise((resolve) => process.on('message', (message) => message === 'go' && resolve()));
  let late;
  const lateAsked = new Promise((resolve) => {
    late = resolve;
  });
  const stop = new Promise((resolve) =>
    process.on('message', (message) => {
      if (message === 'stop') {
        stopped = true;
        resolve();
      } else if (message?.late) late(message.late);
    }),
  );
  process.send('ready');
  await go;
  const cpuAtGo = process.cpuUsage();
  const results = await Promise.all(
    config.clients.map(async (spec, i) => {
      const result = await drain(spec, workers[i]);
      if (result.orphaned) await lateAnswer(spec, result, await lateAsked);
      return result;
    }),
  );
  const cpu = process.cpuUsage(cpuAtGo);
  if (config.kill) await stop;
  await Promise.all(workers.map((w) => w.close()));
  process.send({ results, cpuMs: (cpu.user + cpu.system) / 1000 });
}

main().then(
  () => process.disconnect(),
  (error) => {
    process.send({ error: String(error?.stack ?? error) });
    process.exitCode = 1;
    process.disconnect();
  },
);
