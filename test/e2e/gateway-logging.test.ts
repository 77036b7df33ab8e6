import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { EVERYTHING, text, until } from './helpers.js';
import { startHttpGateway, startStdioGateway, type HttpGateway, type StdioGateway } from './relay-clients.js';

const PROBE = fileURLToPath(new URL('../fixtures/relay-probe.mjs', import.meta.url));

/** The probe (untrusted) twice, once coming up 6 s late, and server-everything; their tools allowed. */
function workspace(): TempWorkspace {
  const ws = tempWorkspace({
    '.bulkhead/bulkhead.yaml':
      `servers:\n` +
      `  probe:\n    command: ${process.execPath}\n    args: [${PROBE}, PROBE_DIR]\n` +
      `  late:\n    command: ${process.execPath}\n    args: [${PROBE}, LATE_DIR, '6000']\n` +
      `  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n`,
    '.bulkhead/permissions.yaml': 'approval_wait_ms: 0\nallow:\n  - "probe:*"\n  - "everything:*"\n',
  });
  const yaml = readFileSync(ws.path('.bulkhead/bulkhead.yaml'), 'utf8').replace('PROBE_DIR', ws.mkdir('probe')).replace('LATE_DIR', ws.mkdir('late'));
  ws.write('.bulkhead/bulkhead.yaml', yaml);
  return ws;
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('logging', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  beforeAll(async () => {
    ws = workspace();
    gateway = await startStdioGateway(ws.root);
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it("relays server-everything's log messages named by its server", async () => {
    const toggle = () => gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__toggle-simulated-logging', arguments: {} } });
    expect(text(await toggle())).toContain('Started simulated, random-leveled logging');
    // It sends one at once, then one every 5 s.
    await until('a log message from everything', () => gateway.logs.some((log) => log.logger === 'everything'));
    expect(String(gateway.logs.find((log) => log.logger === 'everything')!.data)).toMatch(/^[A-Z][a-z]+[- ]level[- ]message$/);
    expect(text(await toggle())).toContain('Stopped simulated logging');
  });

  it('forwards logging/setLevel to every server that logs, also to one that comes up later, and relays what the level lets through', async () => {
    await gateway.client.setLoggingLevel('warning');
    expect(lines(ws.path('probe/levels.log'))).toEqual(['warning']);
    expect(lines(ws.path('late/levels.log'))).toEqual([]);
    gateway.logs.length = 0;
    expect(text(await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'probe__emit_logs', arguments: {} } }))).toContain('sent');
    await until('the probe\'s last log message', () => gateway.logs.some((log) => typeof log.data === 'object'));
    expect(gateway.logs.map((log) => [log.level, log.logger, log.data])).toEqual([
      ['warning', 'probe/probe', 'warning message'],
      ['error', 'probe/probe', 'error message'],
      ['critical', 'probe/probe', 'critical message'],
      ['alert', 'probe/probe', 'alert message'],
      ['emergency', 'probe/probe', 'emergency message'],
      ['error', 'probe', 'no logger'],
      // A third-party server's text has its invisible characters written out.
      ['error', 'probe/probe', 'hidden\\u{200B}char'],
      ['error', 'probe/probe', { structured: true }],
    ]);
    // The late server was not up when the level was set; it is told when it comes up.
    await until('the late server to be told the level', () => lines(ws.path('late/levels.log')).length > 0, 10_000);
    expect(lines(ws.path('late/levels.log'))).toEqual(['warning']);
  });

  it('filters at the gateway too: a server that ignores the level does not reach a client past it', async () => {
    await gateway.client.setLoggingLevel('critical');
    gateway.logs.length = 0;
    await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'probe__emit_logs', arguments: {} } });
    await until('the probe\'s emergency message', () => gateway.logs.some((log) => log.level === 'emergency'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(gateway.logs.map((log) => log.level)).toEqual(['critical', 'alert', 'emergency']);
    expect(lines(ws.path('probe/levels.log'))).toEqual(['warning', 'critical']);
  });
});

describe('log messages over Streamable HTTP', () => {
  const NARROW_TOKEN = 'everything-only-token-0123456789';
  const FULL_TOKEN = 'full-access-token-0123456789ab';
  let ws: TempWorkspace;
  let gateway: HttpGateway;
  beforeAll(async () => {
    ws = workspace();
    ws.write('.bulkhead/narrow.token', NARROW_TOKEN);
    ws.write('.bulkhead/bulkhead.yaml', `${readFileSync(ws.path('.bulkhead/bulkhead.yaml'), 'utf8')}profiles:\n  narrow:\n    namespaces: [everything]\ntokens:\n  - file: narrow.token\n    profile: narrow\n`);
    gateway = await startHttpGateway(ws.root, { path: ws.write('full.token', FULL_TOKEN), token: FULL_TOKEN });
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it("reach each session as its level lets through (every level before it sets one) when its token's profile sees the server, never one whose profile hides it", async () => {
    const full = await gateway.connect();
    const narrow = await gateway.connect({}, NARROW_TOKEN);
    const silent = await gateway.connect();
    await narrow.client.setLoggingLevel('debug');
    await full.client.setLoggingLevel('error');
    await full.client.callTool({ name: 'call_tool', arguments: { name: 'probe__emit_logs', arguments: {} } });
    await until("the probe's last log message", () => full.logs.some((log) => typeof log.data === 'object'));
    expect(full.logs.map((log) => log.level)).toEqual(['error', 'critical', 'alert', 'emergency', 'error', 'error', 'error']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Its profile shows everything only.
    expect(narrow.logs.filter((log) => log.logger?.startsWith('probe'))).toEqual([]);
    // A session that set no level is sent every level, under the profile of the token it was opened with.
    await until("the probe's last log message to the session that set no level", () => silent.logs.some((log) => typeof log.data === 'object'));
    expect(silent.logs.filter((log) => log.logger?.startsWith('probe')).map((log) => log.level)).toContain('debug');
    // Servers are sent the most verbose level any session set, not the last one set.
    expect(lines(ws.path('probe/levels.log')).at(-1)).toBe('debug');
  });
});

describe('cancellation', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  beforeAll(async () => {
    ws = workspace();
    gateway = await startStdioGateway(ws.root);
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  /** Starts the heartbeat with `start`, aborts it once it beats, and shows that the server's work stopped. */
  async function cancelled(start: (signal: AbortSignal) => Promise<unknown>, cancellations: number): Promise<void> {
    const heartbeat = ws.path('probe/heartbeat.log');
    const before = lines(heartbeat).length;
    const controller = new AbortController();
    const call = start(controller.signal);
    await until('the heartbeat', () => lines(heartbeat).length >= before + 3);
    controller.abort('the user pressed stop');
    await expect(call).rejects.toThrow();
    await until('the server to see notifications/cancelled', () => lines(ws.path('probe/cancelled.log')).length === cancellations);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const stoppedAt = lines(heartbeat).length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(lines(heartbeat).length).toBe(stoppedAt);
    expect(JSON.parse(lines(ws.path('probe/cancelled.log')).at(-1)!)).toMatchObject({ reason: expect.stringContaining('the user pressed stop') });
  }

  it("cancels the server's work when the client cancels a loaded tool's call", async () => {
    await gateway.client.callTool({ name: 'load_tools', arguments: { names: ['probe__heartbeat'] } });
    await cancelled((signal) => gateway.client.callTool({ name: 'probe__heartbeat', arguments: {} }, undefined, { signal }), 1);
  });

  it('cancels it through call_tool as well', async () => {
    await cancelled((signal) => gateway.client.callTool({ name: 'call_tool', arguments: { name: 'probe__heartbeat', arguments: {} } }, undefined, { signal }), 2);
  });
});
