// Progress from every long built-in call, as a user meets it: an SDK client with its default 60 s
// request timeout calls `run_shell "sleep 65"` through the real gateway over stdio. With
// resetTimeoutOnProgress the heartbeat keeps it waiting and the call succeeds; without, the same
// call ends in the SDK's own `Request timed out` (so the test can fail). Both run at once, beside
// a call held for approval (the desk's progress, then the shell's heartbeat, on one counter), a
// third-party server's progress renumbered, and compartments served alone (bulkhead-shell's
// heartbeat, bulkhead-fs's grep words over a generated tree).
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { decide, ID } from './approvals-helpers.js';
import { EVERYTHING_ENTRY, FS_CLI, GATEWAY_CLI, SHELL_CLI, text } from './helpers.js';

/** The SDK client's DEFAULT_REQUEST_TIMEOUT_MSEC: no test passes a timeout of its own. */
const SDK_DEFAULT_TIMEOUT_MS = 60_000;

function strictlyIncreasing(values: readonly number[]): boolean {
  return values.every((value, i) => i === 0 || value > values[i - 1]!);
}

/**
 * What reached the client's end of the wire, in order: every progress notification's token and
 * every response's id (the SDK client's progress token is its request's id). The SDK client drops
 * a progress notification that arrives in the same read as its response before any onprogress
 * sees it (modelcontextprotocol/typescript-sdk#2580), so what a server sent is checked here.
 */
interface WireEvent {
  readonly kind: 'progress' | 'response';
  readonly id: string;
  readonly message?: string;
}

function tapWire(client: Client): WireEvent[] {
  const events: WireEvent[] = [];
  const transport = client.transport!;
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    if ('method' in message && message.method === 'notifications/progress') {
      const params = message.params as { progressToken: string | number; message?: string };
      events.push({ kind: 'progress', id: String(params.progressToken), ...(params.message !== undefined ? { message: params.message } : {}) });
    } else if ('id' in message && ('result' in message || 'error' in message)) events.push({ kind: 'response', id: String(message.id) });
    deliver(message, extra);
  };
  return events;
}

/** Progress that came after its own request's response: there must be none. */
function progressAfterResult(events: readonly WireEvent[]): WireEvent[] {
  const answered = new Set<string>();
  const late: WireEvent[] = [];
  for (const event of events) {
    if (event.kind === 'response') answered.add(event.id);
    else if (answered.has(event.id)) late.push(event);
  }
  return late;
}

describe.concurrent('progress from long built-in calls, over stdio', () => {
  let ws: TempWorkspace;
  let gateway: ServerProcess;
  let wire: WireEvent[];
  let notices: string[];
  let alone: TempWorkspace;
  let shell: ServerProcess;
  let fsAlone: ServerProcess;

  beforeAll(async () => {
    // What a user writes to turn the shell on behind the gateway. The default autonomy (supervised)
    // allows `sleep`, a read-only command (low risk); the ask line holds one exact command for a
    // human, so a call waits for approval and then runs long enough for the shell's heartbeat.
    ws = tempWorkspace({
      '.bulkhead/bulkhead.yaml': `servers:\n  shell: {}\n${EVERYTHING_ENTRY}`,
      '.bulkhead/shell_policy.yaml': 'enabled: true\n',
      '.bulkhead/permissions.yaml': 'approval_wait_ms: 20000\nask:\n  - shell:run_shell(sleep 4.5)\n',
    });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    wire = tapWire(gateway.client);
    notices = [];
    gateway.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      notices.push(String(notification.params.data));
    });
    // The shell's and fs's compartments served alone, as Claude Desktop entries start them.
    alone = tempWorkspace({ '.bulkhead/shell_policy.yaml': 'enabled: true\n' });
    // A tree for grep: 40 folders of 100 files, every tenth one matching.
    for (let d = 0; d < 40; d++) {
      mkdirSync(alone.path(`tree/d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(alone.path(`tree/d${d}/f${f}.txt`), f % 10 === 0 ? `line\nneedle ${d}-${f}\n` : 'hay\n'.repeat(50));
    }
    shell = await startStdioServer({ script: SHELL_CLI, args: ['--root', alone.root] });
    fsAlone = await startStdioServer({ script: FS_CLI, args: ['--root', alone.root] });
  });

  afterAll(async () => {
    await gateway?.close();
    await shell?.close();
    await fsAlone?.close();
    ws?.cleanup();
    alone?.cleanup();
  });

  const runShell = (command: string, options: { onprogress: (update: Progress) => void; resetTimeoutOnProgress?: boolean }) =>
    gateway.client.callTool({ name: 'call_tool', arguments: { name: 'shell:run_shell', arguments: { command } } }, undefined, options);

  it('keeps run_shell "sleep 65" alive past the client\'s 60 s timeout with resetTimeoutOnProgress, and the same call without it times out', { timeout: 120_000 }, async ({ expect }) => {
    const kept: Progress[] = [];
    const dropped: Progress[] = [];
    const started = Date.now();
    const [alive, timedOut] = await Promise.allSettled([
      runShell('sleep 65', { onprogress: (update) => kept.push(update), resetTimeoutOnProgress: true }),
      runShell('sleep 65', { onprogress: (update) => dropped.push(update) }),
    ]);
    expect(Date.now() - started).toBeGreaterThan(SDK_DEFAULT_TIMEOUT_MS);

    expect(alive.status).toBe('fulfilled');
    const result = (alive as PromiseFulfilledResult<Awaited<ReturnType<typeof runShell>>>).value;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toMatch(/^\(no output\)\n\[exit code 0 · 6[5-9]\.\d+ s\]$/);
    expect(timedOut.status).toBe('rejected');
    expect(String((timedOut as PromiseRejectedResult).reason)).toMatch(/^McpError: MCP error -32001: Request timed out$/);

    // The shell's heartbeat, relayed on the gateway's counter for each request.
    for (const updates of [kept, dropped]) {
      expect(strictlyIncreasing(updates.map((update) => update.progress))).toBe(true);
      expect(updates.every((update) => update.total === undefined && /^(shell:)?run_shell: running for \d+ s$/.test(update.message ?? ''))).toBe(true);
    }
    expect(kept.length).toBeGreaterThanOrEqual(15);
    // The shell's first beat, or the gateway's own when the shell's came more than 4 s into the call (a busy machine).
    expect(kept[0]).toEqual({ progress: 1, message: expect.stringMatching(/^(shell:)?run_shell: running for [34] s$/) });
    // The one that timed out heard progress too: the reset, not the progress, is what kept the other.
    expect(dropped.length).toBeGreaterThanOrEqual(10);
    expect(dropped.length).toBeLessThan(kept.length);
    // Nothing came after the answered one's result.
    expect(progressAfterResult(wire)).toEqual([]);
  });

  it('bulkhead-fs served alone sends grep\'s own words over a big tree: the matching files found so far', async ({ expect }) => {
    const fsWire = tapWire(fsAlone.client);
    const result = await fsAlone.client.callTool({ name: 'grep', arguments: { pattern: 'needle', path: 'tree' } }, undefined, { onprogress: () => undefined });
    expect(text(result).split('\n').filter((line) => line.startsWith('tree/'))).toHaveLength(250);
    const words = fsWire.filter((event) => event.kind === 'progress').map((event) => event.message);
    expect(words.length).toBeGreaterThanOrEqual(1);
    expect(words.every((message) => /^grep: \d+ matching files? so far in tree$/.test(message ?? ''))).toBe(true);
    expect(words[0]).toMatch(/^grep: 1 matching file so far in tree$/);
    expect(progressAfterResult(fsWire)).toEqual([]);
  });

  it("renumbers a third-party server's progress on the request's counter and keeps its own count as words", async ({ expect }) => {
    const updates: Progress[] = [];
    const result = await gateway.client.callTool(
      { name: 'call_tool', arguments: { name: 'everything:trigger-long-running-operation', arguments: { duration: 6, steps: 4 } } },
      undefined,
      { onprogress: (update) => updates.push(update) },
    );
    expect(text(result)).toBe('Long running operation completed. Duration: 6 seconds, Steps: 4.');
    // server-everything sends progress 1…4 with total 4 and no message, every 1.5 s: never 4 s of
    // silence for the gateway to fill. Two that reach the gateway less than a second apart (a busy
    // machine) are one notification, the newer, and one held when the result comes is dropped.
    expect(updates[0]).toEqual({ progress: 1, message: 'everything:trigger-long-running-operation: 1 of 4' });
    expect(updates.length).toBeGreaterThanOrEqual(2);
    const steps = updates.map((update) => Number(/^everything:trigger-long-running-operation: ([1-4]) of 4$/.exec(update.message ?? '')?.[1]));
    expect(updates.map((update) => update.progress)).toEqual(updates.map((_, i) => i + 1));
    expect(strictlyIncreasing(steps)).toBe(true);
  });

  it('numbers the desk\'s progress while a call waits for approval and the shell\'s heartbeat after it on one counter', async ({ expect }) => {
    const updates: Progress[] = [];
    const call = runShell('sleep 4.5', { onprogress: (update) => updates.push(update), resetTimeoutOnProgress: true });
    // The gateway's notice of the held call names its approval (server-everything logs beside it).
    const announced = new RegExp(`^shell:run_shell waits for a human's approval \\(approval (${ID})\\)`);
    await expect.poll(() => notices.some((notice) => announced.test(notice)), { timeout: 15_000, interval: 20 }).toBe(true);
    const id = announced.exec(notices.find((notice) => announced.test(notice))!)![1]!;
    await expect.poll(() => updates.length, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(2);
    await decide(ws.path('.bulkhead'), id, 'once');
    const result = await call;
    expect(result.isError).toBeFalsy();
    const waiting = updates.filter((update) => update.message?.startsWith(`waiting for approval ${id}… (`));
    const running = updates.filter((update) => /^run_shell: running for \d+ s$/.test(update.message ?? ''));
    expect(waiting.length).toBeGreaterThanOrEqual(2);
    expect(running.length).toBeGreaterThanOrEqual(1);
    expect(updates.map((update) => update.progress)).toEqual(updates.map((_, i) => i + 1));
    expect(updates.indexOf(waiting.at(-1)!)).toBeLessThan(updates.indexOf(running[0]!));
    expect(progressAfterResult(wire)).toEqual([]);
  });

  it('bulkhead-shell served alone beats during a long run_shell, and not at all for a request without a progress token', async ({ expect }) => {
    const shellWire = tapWire(shell.client);
    const updates: Progress[] = [];
    const [withToken, withoutToken] = await Promise.all([
      shell.client.callTool({ name: 'run_shell', arguments: { command: 'sleep 7' } }, undefined, { onprogress: (update) => updates.push(update) }),
      shell.client.callTool({ name: 'run_shell', arguments: { command: 'sleep 7' } }),
    ]);
    expect(text(withToken)).toMatch(/^\(no output\)\n\[exit code 0 · 7\.\d+ s\]$/);
    expect(text(withoutToken)).toMatch(/^\(no output\)\n\[exit code 0 · 7\.\d+ s\]$/);
    // Beats at 3 and 6 s (the times are the kit's to say; a busy machine may end the call before the second).
    expect(updates[0]).toEqual({ progress: 1, message: expect.stringMatching(/^run_shell: running for [34] s$/) });
    expect(updates.length).toBeLessThanOrEqual(2);
    expect(updates.slice(1)).toEqual(updates.length === 2 ? [{ progress: 2, message: expect.stringMatching(/^run_shell: running for [67] s$/) }] : []);
    expect(progressAfterResult(shellWire)).toEqual([]);
  });
});
