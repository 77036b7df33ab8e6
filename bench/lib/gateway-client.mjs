// MCP servers (a gateway and the servers it starts, or a server on its own) driven over stdio by
// the SDK client, with every process they start tracked so that an error or Ctrl-C stops them.
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { peakRssKb, track, untrack } from './processes.mjs';

const CALL_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 60_000;
export const EXIT_GRACE_MS = 10_000;

/** Parent pid of every process, from /proc (Linux). */
function parentsByPid() {
  const parents = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so split after the last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(name), Number(fields[1]));
    } catch {
      // exited while we looked
    }
  }
  return parents;
}

/** Every live descendant of `pid` (children, grandchildren...). */
export function descendantsOf(pid) {
  const parents = parentsByPid();
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (user + system) a process has used so far, in ms, or 0 once it is gone. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function textOf(result) {
  return (result.content ?? [])
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/**
 * Starts `command args` over stdio and connects. `listing` is the raw `tools` array of the first
 * tools/list reply as it came over the wire (before the SDK's parsing), plus the time from spawn to
 * that reply. The processes it starts (a gateway's downstream servers) are tracked too.
 */
export async function connectStdio({ label, command, args, cwd, env }) {
  const started = performance.now();
  const transport = new StdioClientTransport({ command, args, cwd, env: { ...process.env, ...env }, stderr: 'pipe' });
  let stderrTail = '';
  transport.stderr?.on('data', (data) => {
    stderrTail = (stderrTail + data).slice(-4000);
  });
  const client = new Client({ name: 'bulkhead-bench', version: '0.1.0' });
  const rawReplies = new Map();
  let tracked = [];
  const trackTree = (pid) => {
    for (const child of descendantsOf(pid)) {
      if (!tracked.includes(child)) {
        tracked.push(child);
        track(child);
      }
    }
  };
  let pid;
  let exit;
  const fail = (error) => new Error(`${label}: ${error.message}${stderrTail ? `\n--- its stderr ---\n${stderrTail.trim()}` : ''}`);
  try {
    const giveUp = new AbortController();
    const timeout = sleep(START_TIMEOUT_MS, undefined, { signal: giveUp.signal }).then(
      () => Promise.reject(new Error(`no initialize reply within ${START_TIMEOUT_MS / 1000} s`)),
      () => {},
    );
    try {
      await Promise.race([client.connect(transport), timeout]);
    } finally {
      giveUp.abort();
    }
    pid = transport.pid;
    track(pid);
    // How the server process ended: by itself once stdin closed, or killed by the SDK client's
    // close() (SIGTERM after 2 s, SIGKILL after 4 s).
    transport._process?.once('exit', (code, signal) => {
      exit = { code, signal };
    });
    tracked.push(pid);
    // Keep a copy of each raw reply to tools/list, to measure what the server actually sent.
    const onmessage = transport.onmessage;
    transport.onmessage = (message) => {
      if (message && 'id' in message && message.result && Array.isArray(message.result.tools)) rawReplies.set(message.id, message.result);
      onmessage?.(message);
    };
    trackTree(pid);
  } catch (error) {
    if (transport.pid) track(transport.pid);
    await client.close().catch(() => {});
    throw fail(error);
  }

  const server = {
    label,
    pid,
    client,
    /** Sends tools/list and returns the raw result (with its `tools` array as sent). */
    async listToolsRaw() {
      rawReplies.clear();
      const parsed = await client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
      const raw = [...rawReplies.values()].at(-1);
      if (!raw) throw new Error(`${label}: tools/list reply not captured`);
      return { raw, parsed };
    },
    /** One tools/call; returns its text, or throws with the tool's error text. */
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
      const text = textOf(result);
      if (result.isError) throw new Error(`${label}: ${name} returned an error: ${text.slice(0, 300)}`);
      return text;
    },
    /** CPU time used so far by the server process and its descendants, ms (10 ms resolution). */
    cpuMs() {
      return tracked.reduce((sum, p) => sum + cpuMsOf(p), 0);
    },
    /** Peak RSS (VmHWM, KiB) of the server process and of each of its descendants. */
    peakRss() {
      trackTree(pid);
      return tracked.map((p) => ({ pid: p, kb: peakRssKb(p) })).filter((p) => p.kb !== undefined);
    },
    /** The reply to the first tools/list, sent right after initialization. */
    firstListing: undefined,
    /** Spawn to the first tools/list reply, ms. */
    startMs: 0,
    stderr: () => stderrTail,
    /**
     * Closes stdin (the server then shuts down, a gateway stops its downstream servers), waits,
     * and kills whatever is still alive after the grace period. Returns how long until every
     * process was gone, and the pids that had to be killed.
     */
    async close() {
      const closing = performance.now();
      trackTree(pid);
      await client.close().catch(() => {});
      const deadline = Date.now() + EXIT_GRACE_MS;
      while (tracked.some(alive) && Date.now() < deadline) await sleep(25);
      const stragglers = tracked.filter(alive);
      for (const p of stragglers) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      for (const p of tracked) untrack(p);
      tracked = [];
      return { ms: performance.now() - closing, exit, killed: stragglers };
    },
  };
  try {
    server.firstListing = await server.listToolsRaw();
  } catch (error) {
    await server.close();
    throw fail(error);
  }
  server.startMs = performance.now() - started;
  trackTree(pid);
  return server;
}
