// The call's progress: a heartbeat in any 3 s of silence, one counter per call whoever speaks,
// and nothing once the call ended. The class on its own with fake timers (exact times), then
// through a real server built by the kit and a real SDK client over an in-memory pair.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  auditPolicySchema,
  CallProgress,
  createToolServer,
  defineTool,
  PermissionGate,
  PROGRESS_EVERY_MS,
  PROGRESS_REPORT_GAP_MS,
  RELAY_PROGRESS_EVERY_MS,
  serverPolicySchema,
  startProgress,
  textReply,
  ToolError,
  type BaseContext,
  type ToolServer,
} from '@bulkhead/core';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Progress, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

interface Sent {
  readonly progress: number;
  readonly message: string;
}

function recorder() {
  const sent: Sent[] = [];
  const send = async (progress: number, message: string) => {
    sent.push({ progress, message });
  };
  return { sent, send };
}

function strictlyIncreasing(values: readonly number[]): boolean {
  return values.every((value, i) => i === 0 || value > values[i - 1]!);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('CallProgress on its own', () => {
  it('stays silent for the first interval, then beats every 3 s with the time the call has run', async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const progress = new CallProgress('run_shell', send, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS - 1);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([{ progress: 1, message: 'run_shell: running for 3 s' }]);
    await vi.advanceTimersByTimeAsync(2 * PROGRESS_EVERY_MS);
    expect(sent).toEqual([
      { progress: 1, message: 'run_shell: running for 3 s' },
      { progress: 2, message: 'run_shell: running for 6 s' },
      { progress: 3, message: 'run_shell: running for 9 s' },
    ]);
    progress.stop();
  });

  it('sends nothing after stop, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const progress = new CallProgress('grep', send, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    expect(sent).toHaveLength(1);
    progress.stop();
    expect(vi.getTimerCount()).toBe(0);
    progress.report('late words');
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_EVERY_MS);
    expect(sent).toHaveLength(1);
  });

  it('stops the moment its signal aborts (cancellation, shutdown), and a held report is dropped with it', async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const controller = new AbortController();
    const progress = new CallProgress('wait_task', send, controller.signal);
    progress.report('first');
    progress.report('held');
    controller.abort(new Error('cancelled'));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_EVERY_MS);
    expect(sent).toEqual([{ progress: 1, message: 'first' }]);
  });

  it('never starts for a signal already aborted', async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const controller = new AbortController();
    controller.abort();
    const progress = new CallProgress('web_fetch', send, controller.signal);
    expect(vi.getTimerCount()).toBe(0);
    progress.report('words');
    await progress.during(() => 'a phase', async () => undefined);
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_EVERY_MS);
    expect(sent).toEqual([]);
  });

  it("sends a tool's report at once, holds the next ones for a second keeping only the newest, and beats only after 3 s without any", async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const progress = new CallProgress('grep', send, new AbortController().signal);
    progress.report('grep: 10 files');
    await vi.advanceTimersByTimeAsync(100);
    progress.report('grep: 20 files');
    progress.report('grep: 30 files');
    expect(sent).toEqual([{ progress: 1, message: 'grep: 10 files' }]);
    await vi.advanceTimersByTimeAsync(PROGRESS_REPORT_GAP_MS - 100);
    expect(sent).toEqual([
      { progress: 1, message: 'grep: 10 files' },
      { progress: 2, message: 'grep: 30 files' },
    ]);
    // 3 s after the last report, not 3 s after the start: the heartbeat fills silence only.
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS - 1);
    expect(sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent[2]).toEqual({ progress: 3, message: 'grep: running for 4 s' });
    progress.report('grep: 40 files');
    expect(sent[3]).toEqual({ progress: 4, message: 'grep: 40 files' });
    expect(strictlyIncreasing(sent.map((s) => s.progress))).toBe(true);
    progress.stop();
  });

  it('says what a phase waits for at once and on every beat of it, then goes back to the running time; one counter throughout', async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const progress = new CallProgress('write_file', send, new AbortController().signal);
    let left = 9;
    let decide: () => void = () => undefined;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    const waiting = progress.during(() => `waiting for approval (${left} s left)`, () => decided);
    expect(sent).toEqual([{ progress: 1, message: 'waiting for approval (9 s left)' }]);
    left = 6;
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    expect(sent[1]).toEqual({ progress: 2, message: 'waiting for approval (6 s left)' });
    decide();
    await waiting;
    progress.report('write_file: writing');
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    expect(sent.slice(2)).toEqual([
      { progress: 3, message: 'write_file: writing' },
      { progress: 4, message: 'write_file: running for 6 s' },
    ]);
    progress.stop();
  });

  it("beats after the relay's longer silence when given it, so a relay never speaks between a built-in's 3 s beats", async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const progress = new CallProgress('shell:run_shell', send, new AbortController().signal, RELAY_PROGRESS_EVERY_MS);
    for (let beat = 1; beat <= 3; beat++) {
      await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
      progress.report(`run_shell: running for ${beat * 3} s`);
    }
    expect(sent.map((s) => s.message)).toEqual(['run_shell: running for 3 s', 'run_shell: running for 6 s', 'run_shell: running for 9 s']);
    // The server fell silent: the relay fills the silence itself, 4 s after the last word.
    await vi.advanceTimersByTimeAsync(RELAY_PROGRESS_EVERY_MS - 1);
    expect(sent).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent[3]).toEqual({ progress: 4, message: 'shell:run_shell: running for 13 s' });
    progress.stop();
  });

  it("beats every 3 s in a relay's own phase (the approval desk's wait), where no server speaks", async () => {
    vi.useFakeTimers();
    const { sent, send } = recorder();
    const progress = new CallProgress('fs_write:write_file', send, new AbortController().signal, RELAY_PROGRESS_EVERY_MS);
    let decide: () => void = () => undefined;
    const waiting = progress.during(() => 'waiting for approval', () => new Promise<void>((resolve) => (decide = resolve)));
    await vi.advanceTimersByTimeAsync(2 * PROGRESS_EVERY_MS);
    expect(sent.map((s) => s.message)).toEqual(['waiting for approval', 'waiting for approval', 'waiting for approval']);
    decide();
    await waiting;
    // Out of the phase, after the beat already due, the relay waits its longer silence again.
    await vi.advanceTimersByTimeAsync(RELAY_PROGRESS_EVERY_MS);
    expect(sent).toHaveLength(4);
    expect(sent[3]!.message).toMatch(/^fs_write:write_file: running for \d+ s$/);
    progress.stop();
  });

  it('goes on beating when a send fails (the client may be slow or gone; the call ends it, not a failed send)', async () => {
    vi.useFakeTimers();
    let attempts = 0;
    const progress = new CallProgress(
      'git_blame',
      async () => {
        attempts++;
        throw new Error('Not connected');
      },
      new AbortController().signal,
    );
    await vi.advanceTimersByTimeAsync(3 * PROGRESS_EVERY_MS);
    expect(attempts).toBe(3);
    progress.stop();
  });

  it('is started only for a request that carries a progress token, and sends that token', async () => {
    vi.useFakeTimers();
    const notifications: ServerNotification[] = [];
    const extra = (meta: Record<string, unknown> | undefined) =>
      ({
        signal: new AbortController().signal,
        requestId: 7,
        ...(meta ? { _meta: meta } : {}),
        sendNotification: async (notification: ServerNotification) => {
          notifications.push(notification);
        },
        sendRequest: async () => {
          throw new Error('unused');
        },
      }) as unknown as RequestHandlerExtra<ServerRequest, ServerNotification>;
    expect(startProgress(extra(undefined), 'run_shell', new AbortController().signal)).toBeUndefined();
    expect(startProgress(extra({}), 'run_shell', new AbortController().signal)).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
    const progress = startProgress(extra({ progressToken: 'tok-1' }), 'run_shell', new AbortController().signal)!;
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    expect(notifications).toEqual([{ method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 1, message: 'run_shell: running for 3 s' } }]);
    progress.stop();
  });
});

// ---- through a server the kit built, and a real client ----

interface Script {
  /** What the tool does with its context; the test decides when it ends. */
  run: (ctx: BaseContext) => Promise<string>;
}

const script: Script = { run: async () => 'unset' };

const work = defineTool<Script, z.ZodObject>({
  name: 'work',
  title: 'Work',
  description: 'Does what the test scripted.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (_args, ctx) => textReply(await script.run(ctx)),
});

let ws: TempWorkspace | undefined;
let server: ToolServer | undefined;
let connectedClient: Client | undefined;
/**
 * Every progress notification that reached the client's side of the wire. The SDK client drops
 * one whose request already ended before any onprogress sees it, so "nothing after the result"
 * is checked here.
 */
let onTheWire: JSONRPCMessage[] = [];

afterEach(async () => {
  await connectedClient?.close();
  await server?.close();
  ws?.cleanup();
  connectedClient = undefined;
  server = undefined;
  ws = undefined;
  onTheWire = [];
});

async function start() {
  ws = tempWorkspace({});
  const controlDir = ws.path('.bulkhead');
  server = createToolServer<Script>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [work],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: script,
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({}),
    limits: { maxOutputBytes: 10_000 },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'progress-test', version: '1.0.0' });
  connectedClient = client;
  await client.connect(clientSide);
  const deliver = clientSide.onmessage!;
  clientSide.onmessage = (message) => {
    if ('method' in message && message.method === 'notifications/progress') onTheWire.push(message);
    deliver(message);
  };
  return client;
}

/** A tool body that waits until the test lets it go, with what it said meanwhile. */
function controlled() {
  let finish: (outcome: string | Error) => void = () => undefined;
  const ended = new Promise<string>((resolve, reject) => {
    finish = (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
  });
  return { ended, finish: (outcome: string | Error) => finish(outcome) };
}

describe('the heartbeat of every call the kit runs', () => {
  it('beats every 3 s while a call runs, stops with the result, and keeps a resetting client past its 60 s timeout', async () => {
    const client = await start();
    vi.useFakeTimers();
    const gate = controlled();
    script.run = () => gate.ended;
    const updates: Progress[] = [];
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { onprogress: (update) => updates.push(update), resetTimeoutOnProgress: true });
    await vi.advanceTimersByTimeAsync(65_000);
    expect(updates).toHaveLength(21);
    expect(updates[0]).toEqual({ progress: 1, message: 'work: running for 3 s' });
    expect(updates[20]).toEqual({ progress: 21, message: 'work: running for 63 s' });
    gate.finish('done after 65 s');
    expect((await call).content).toEqual([{ type: 'text', text: 'done after 65 s' }]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(updates).toHaveLength(21);
    expect(onTheWire).toHaveLength(21);
  });

  it('lets a client that does not reset on progress time out at its own 60 s as before', async () => {
    const client = await start();
    vi.useFakeTimers();
    const gate = controlled();
    script.run = () => gate.ended;
    const updates: Progress[] = [];
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { onprogress: (update) => updates.push(update) });
    const failed = expect(call).rejects.toThrow('Request timed out');
    await vi.advanceTimersByTimeAsync(60_000);
    await failed;
    // Beats at 3 … 57 s; the one due at 60 s comes after the client's timer, set first, gave up.
    expect(updates).toHaveLength(19);
    // The timeout cancelled the call: its heartbeat stopped with it.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(updates).toHaveLength(19);
    expect(onTheWire).toHaveLength(19);
    gate.finish('too late');
  });

  it('sends nothing for a request without a progress token, however long the call runs', async () => {
    const client = await start();
    vi.useFakeTimers();
    const gate = controlled();
    const notified: string[] = [];
    client.fallbackNotificationHandler = async (notification) => {
      notified.push(notification.method);
    };
    script.run = (ctx) => {
      ctx.progress('words nobody asked for');
      return gate.ended;
    };
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { timeout: 120_000 });
    await vi.advanceTimersByTimeAsync(30_000);
    gate.finish('done');
    await call;
    expect(notified).toEqual([]);
    expect(onTheWire).toEqual([]);
  });

  it('sends nothing for a call that ends within the first interval', async () => {
    const client = await start();
    vi.useFakeTimers();
    script.run = async () => {
      await new Promise((resolve) => setTimeout(resolve, PROGRESS_EVERY_MS - 100));
      return 'quick';
    };
    const updates: Progress[] = [];
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { onprogress: (update) => updates.push(update) });
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS - 100);
    await call;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(updates).toEqual([]);
    expect(onTheWire).toEqual([]);
  });

  it("interleaves the tool's own words, prefixed with its name, on the same strictly increasing counter", async () => {
    const client = await start();
    vi.useFakeTimers();
    const gate = controlled();
    let context: BaseContext | undefined;
    script.run = (ctx) => {
      context = ctx;
      ctx.progress('1 of 3 rungs');
      return gate.ended;
    };
    const updates: Progress[] = [];
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { onprogress: (update) => updates.push(update) });
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS + 500);
    context!.progress('2 of 3 rungs');
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    gate.finish('3 of 3');
    await call;
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_EVERY_MS);
    expect(onTheWire).toHaveLength(4);
    expect(updates).toEqual([
      { progress: 1, message: 'work: 1 of 3 rungs' },
      { progress: 2, message: 'work: running for 3 s' },
      { progress: 3, message: 'work: 2 of 3 rungs' },
      { progress: 4, message: 'work: running for 7 s' },
    ]);
  });

  it('stops when the tool fails, and the error reaches the client as before', async () => {
    const client = await start();
    vi.useFakeTimers();
    const gate = controlled();
    script.run = () => gate.ended;
    const updates: Progress[] = [];
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { onprogress: (update) => updates.push(update) });
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    gate.finish(new ToolError('the task vanished', 'not_found'));
    const result = await call;
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the task vanished' }] });
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_EVERY_MS);
    expect(updates).toEqual([{ progress: 1, message: 'work: running for 3 s' }]);
    expect(onTheWire).toHaveLength(1);
  });

  it('stops when the client cancels, and the tool sees the abort', async () => {
    const client = await start();
    vi.useFakeTimers();
    let aborted = false;
    script.run = (ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          aborted = true;
          reject(ctx.signal.reason);
        });
      });
    const controller = new AbortController();
    const updates: Progress[] = [];
    const call = client.callTool({ name: 'work', arguments: {} }, undefined, { signal: controller.signal, onprogress: (update) => updates.push(update) });
    const failed = expect(call).rejects.toThrow('user pressed stop');
    await vi.advanceTimersByTimeAsync(2 * PROGRESS_EVERY_MS);
    controller.abort('user pressed stop');
    await failed;
    await vi.advanceTimersByTimeAsync(1);
    expect(aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_EVERY_MS);
    expect(updates.map((update) => update.progress)).toEqual([1, 2]);
    expect(onTheWire).toHaveLength(2);
  });
});
