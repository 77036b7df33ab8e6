// One MCP server process over stdio for the fs-write bench: the SDK client, as a real client
// drives it, plus what this bench needs beyond bench/lib/mcp.mjs: the whole reply (error replies
// included, the correctness table reads them), a timeout per call, and the server's CPU time.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { peakRssKb, track, untrack } from './processes.mjs';

export const CALL_TIMEOUT_MS = 120_000;
const RSS_POLL_MS = 100;
/** A server that writes a CPU profile on exit needs a moment after its stdin closes. */
const EXIT_GRACE_MS = 5_000;
const TICK_MS = 1000 / 100; // CLK_TCK is 100 on Linux

/** utime + stime of a process in ms (all its threads), or undefined once it is gone. */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

function describe(error) {
  if (error?.code === ErrorCode.RequestTimeout) return 'timeout';
  return String(error?.message ?? error).split('\n')[0].slice(0, 200);
}

function textOf(result) {
  return (result.content ?? [])
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/**
 * Starts `node [nodeFlags] script args` and connects. `call` never throws for what a server
 * does: it resolves to { ms, ok, text } for a reply (ok false for isError) and { ms, ok: false,
 * failure } for a timeout or a broken connection.
 */
export async function startServer({ name, script, args, nodeFlags = [], requiredTools, env }) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...nodeFlags, script, ...args], stderr: 'pipe', ...(env ? { env } : {}) });
  let stderrTail = '';
  transport.stderr.on('data', (data) => {
    stderrTail = (stderrTail + data).slice(-2000);
  });
  const client = new Client({ name: 'bulkhead-bench', version: '0.1.0' });
  let closed = false;
  const exited = new Promise((resolve) => {
    client.onclose = () => {
      closed = true;
      resolve();
    };
  });
  let failInFlight;
  client.onerror = (error) => failInFlight?.(error);
  await client.connect(transport);
  const pid = transport.pid;
  track(pid);
  let peak = peakRssKb(pid) ?? 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, peakRssKb(pid) ?? 0);
  }, RSS_POLL_MS);
  poll.unref();

  const close = async () => {
    clearInterval(poll);
    peak = Math.max(peak, peakRssKb(pid) ?? 0);
    // Ending stdin lets a server exit on its own (and write a --cpu-prof profile); then the kill.
    transport._process?.stdin?.end();
    if (await Promise.race([exited.then(() => false), sleep(EXIT_GRACE_MS).then(() => true)])) await client.close().catch(() => {});
    if (await Promise.race([exited.then(() => false), sleep(EXIT_GRACE_MS).then(() => true)])) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
      await exited;
    }
    untrack(pid);
  };

  try {
    const { tools } = await client.listTools();
    const missing = requiredTools.filter((tool) => !tools.some((t) => t.name === tool));
    if (missing.length > 0) throw new Error(`${name} lacks tools: ${missing.join(', ')}`);
  } catch (error) {
    await close();
    throw new Error(`${name}: ${error.message}\n${stderrTail}`);
  }

  return {
    name,
    pid,
    get alive() {
      return !closed;
    },
    stderrTail: () => stderrTail,
    cpuMs: () => cpuMs(pid),
    async call(tool, toolArgs, timeoutMs = CALL_TIMEOUT_MS) {
      const started = performance.now();
      const broken = new Promise((_, reject) => {
        failInFlight = reject;
      });
      try {
        const result = await Promise.race([client.callTool({ name: tool, arguments: toolArgs }, undefined, { timeout: timeoutMs }), broken]);
        return { ms: performance.now() - started, ok: !result.isError, text: textOf(result) };
      } catch (error) {
        return { ms: performance.now() - started, ok: false, failure: describe(error) };
      } finally {
        failInFlight = undefined;
      }
    },
    peakRssKb: () => Math.max(peak, peakRssKb(pid) ?? 0),
    close,
  };
}
