// An MCP server process driven over stdio with the SDK client, as a real client would drive it.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { peakRssKb, track, untrack } from './processes.mjs';

export const CALL_TIMEOUT_MS = 120_000;
const RSS_POLL_MS = 100;
const EXIT_GRACE_MS = 500;

export class CallError extends Error {
  constructor(message, ms) {
    super(message);
    this.ms = ms;
  }
}

function describe(error) {
  if (error?.code === ErrorCode.RequestTimeout) return `timeout (${CALL_TIMEOUT_MS / 1000} s)`;
  const message = String(error?.message ?? error).split('\n')[0];
  if (message.startsWith('ReadBuffer exceeded')) return `error: reply over the SDK stdio client's message limit (${message})`;
  return `error: ${message.slice(0, 160)}`;
}

/**
 * Starts `command args` and connects to it. The peak RSS is polled while it runs because a
 * server that dies (or that the transport kills) takes its /proc entry with it.
 */
export async function startServer({ command, args, requiredTools }) {
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let stderrTail = '';
  transport.stderr.on('data', (data) => {
    stderrTail = (stderrTail + data).slice(-2000);
  });
  const client = new Client({ name: 'bulkhead-bench', version: '0.1.0' });
  const exited = new Promise((resolve) => {
    client.onclose = resolve;
  });
  let failInFlight;
  // The SDK reports a broken stream (such as a reply over its 10 MiB stdio cap) here, not to the request.
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
    await client.close().catch(() => {});
    // After a broken stream the transport has already given up on the server without waiting for
    // it, and its last resort (SIGKILL) is not awaited either; a server still busy with a huge
    // reply would slow down the next case, so wait until it is really gone.
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
    const missing = requiredTools.filter((name) => !tools.some((tool) => tool.name === name));
    if (missing.length > 0) throw new Error(`${command} ${args.join(' ')} lacks tools: ${missing.join(', ')}`);
  } catch (error) {
    await close();
    throw new Error(`${error.message}\n${stderrTail}`);
  }

  return {
    pid,
    /** Times one tools/call round trip; throws CallError on tool errors, timeouts and broken streams. */
    async call(name, args) {
      const started = performance.now();
      const broken = new Promise((_, reject) => {
        failInFlight = reject;
      });
      try {
        const result = await Promise.race([client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }), broken]);
        const ms = performance.now() - started;
        if (result.isError) throw new CallError(`tool error: ${textOf(result).split('\n')[0].slice(0, 160)}`, ms);
        return { ms, text: textOf(result) };
      } catch (error) {
        if (error instanceof CallError) throw error;
        throw new CallError(describe(error), performance.now() - started);
      } finally {
        failInFlight = undefined;
      }
    },
    peakRssKb: () => Math.max(peak, peakRssKb(pid) ?? 0),
    close,
  };
}

function textOf(result) {
  return result.content
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}
