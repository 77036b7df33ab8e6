// Downstreams never hold up the gateway: it answers at once, a slow server's tools arrive later,
// a silent one is given up on after start_timeout_ms, and one that lists without end is capped;
// each is reported by name wherever a user looks.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, text } from './helpers.js';

const run = promisify(execFile);
const SLUGGISH = new URL('../fixtures/sluggish-server.mjs', import.meta.url).pathname;

let ws: TempWorkspace;
let gateway: ServerProcess | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  ws?.cleanup();
});

/** What the slow server answers, as a third-party result reaches the client: wrapped as untrusted content. */
const LATE_ANSWER = '<untrusted_external_content source="slow (third-party MCP server)">\nran late_answer\n</untrusted_external_content>';

/** Its annotations trusted, so its read-only tool runs unasked (an untrusted server's tools are medium and ask). */
function entry(namespace: string, ...args: string[]): string {
  return `  ${namespace}:\n    command: ${process.execPath}\n    args: ${JSON.stringify([SLUGGISH, ...args])}\n    trust: annotations\n`;
}

/** A server that never answers, given up on after `ms` (fs keeps the default, so load cannot fail it). */
function silent(namespace: string, ms: number): string {
  return `${entry(namespace, 'silent')}    start_timeout_ms: ${ms}\n`;
}

function workspace(settings: string, servers: string): TempWorkspace {
  return tempWorkspace({ 'notes.txt': 'notes\n', '.bulkhead/bulkhead.yaml': `${settings}servers:\n  fs: {}\n${servers}` });
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the gateway while its downstreams start', () => {
  it('answers before a slow server is up, reports it as starting, and brings its tools with list_changed', async () => {
    ws = workspace('list_wait_ms: 1500\n', entry('slow', 'slow', '6000'));
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    // initialize was answered while the slow server was still asleep.
    expect(gateway.stderr()).not.toContain('slow is up');
    let changes = 0;
    gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changes++;
    });
    const early = await gateway.client.callTool({ name: 'tool_search', arguments: { query: 'time of a server that starts slowly' } });
    expect(text(early)).toMatch(/\n\nNot every server is available: (fs is still starting; )?slow is still starting\.$/);
    expect((early.structuredContent as { unavailable: string[] }).unavailable).toContain('slow is still starting');
    // A call for the slow server's tool waits for its first start instead of calling it unknown.
    const called = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'slow__late_answer', arguments: {} } });
    expect(text(called)).toBe(LATE_ANSWER);
    await until(() => gateway!.stderr().includes('bulkhead: slow is up (1 tool)\n'), 'the report of the slow server');
    await until(() => changes > 0, 'a tools/list_changed notification');
    const late = await gateway.client.callTool({ name: 'tool_search', arguments: { query: 'time of a server that starts slowly' } });
    expect(text(late).split('\n')[0]).toMatch(/^1\. slow__late_answer \(score [\d.]+\)$/);
    expect(text(late)).not.toContain('Not every server is available');
  });

  it("makes a client's first tools/list wait for a core tool's server, at most list_wait_ms", async () => {
    // Claude Desktop lists once and ignores list_changed: a core tool must be in that first answer.
    ws = tempWorkspace({
      '.bulkhead/bulkhead.yaml': `list_wait_ms: 30000\nservers:\n${entry('slow', 'slow', '2000')}`,
      '.bulkhead/tool_policy.yaml': 'core_tools: [slow:late_answer]\n',
    });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    expect(gateway.stderr()).not.toContain('slow is up');
    expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toEqual(['slow__late_answer', 'tool_search', 'call_tool', 'list_tools', 'load_tools', 'unload_tools']);
    expect(text(await gateway.client.callTool({ name: 'slow__late_answer', arguments: {} }))).toBe(LATE_ANSWER);
  });

  it('gives up on a server that never answers after start_timeout_ms and says so, while the rest works', async () => {
    ws = workspace('', silent('mute', 1500));
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toContain('fs__read_file');
    expect(text(await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'notes.txt' } }))).toBe('     1\tnotes');
    await until(() => gateway!.stderr().includes('mute did not start'), 'the report of the silent server');
    expect(gateway.stderr()).toMatch(/^bulkhead: mute did not start: it did not answer initialize and list its tools within 1\.5 s \(start_timeout_ms in bulkhead\.yaml\) \(restart 1 of at most 8, next attempt in \d+ s\)$/m);
    const search = await gateway.client.callTool({ name: 'tool_search', arguments: { query: 'read a file' } });
    expect(text(search)).toMatch(/Not every server is available: mute did not start: it did not answer initialize/);
    const unknown = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'mute__anything', arguments: {} } });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^Unknown tool mute__anything; mute did not start: it did not answer initialize/);
  });

  it('names the silent server in bulkhead tools and doctor, which still finish', async () => {
    ws = workspace('', silent('mute', 1000));
    const tools = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws.root]);
    expect(tools.stdout).toContain('fs__read_file');
    expect(tools.stderr).toMatch(/^bulkhead: mute did not start: it did not answer initialize and list its tools within 1 s/m);
    const doctor = await run(process.execPath, [GATEWAY_CLI, 'doctor', '--root', ws.root]).catch((error: { stdout: string; code: number }) => error);
    expect('code' in doctor ? doctor.code : 0).toBe(1);
    expect(doctor.stdout).toMatch(/^ok {3}server fs: 4 tools$/m);
    expect(doctor.stdout).toMatch(/^fail server mute: mute did not start: it did not answer initialize and list its tools within 1 s/m);
  });

  it('caps a server that pages tools/list without end', async () => {
    ws = workspace('', entry('endless', 'endless'));
    const tools = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws.root]);
    expect(tools.stderr).toBe('bulkhead: endless: it kept paging tools/list past 100 pages; the tools of the first 100 are used\n');
    expect(tools.stdout.match(/endless__page_\d+/g)).toHaveLength(100);
  });

  it('caps a server that lists more tools than max_tools_per_server', async () => {
    ws = workspace('max_tools_per_server: 10\n', entry('crowded', 'crowded', '25'));
    const tools = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws.root]);
    expect(tools.stderr).toBe('bulkhead: crowded: it lists more than 10 tools; the first 10 are used (max_tools_per_server in bulkhead.yaml)\n');
    expect(tools.stdout.match(/crowded__tool_\d+/g)).toHaveLength(10);
  });

  it('bounds the start of an HTTP server that answers initialize and then never answers again', async () => {
    const stall = createServer((request, response) => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
        if (message.method !== 'initialize') return; // held open: the initialized notification and everything after
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stall', version: '1' } } }));
      });
    });
    await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(stall.address() as { port: number }).port}/mcp`;
      ws = workspace('', `  stall:\n    url: ${url}\n    start_timeout_ms: 1000\n`);
      const tools = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws.root], { timeout: 30_000 });
      expect(tools.stderr).toMatch(/^bulkhead: stall did not start: it did not answer initialize and list its tools within 1 s \(start_timeout_ms in bulkhead\.yaml\) \(restart 1 of at most 8, next attempt in 1 s\)$/m);
      expect(tools.stdout).toContain('fs__read_file');
    } finally {
      stall.closeAllConnections();
      await new Promise((resolve) => stall.close(resolve));
    }
  });

  it('counts a server that dies while listing its tools as one failed attempt, and reports every retry', async () => {
    ws = workspace('', entry('dies', 'dies'));
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    await until(() => (gateway!.stderr().match(/bulkhead: dies did not start/g) ?? []).length >= 2, 'two reports of the dying server');
    const reports = gateway.stderr().split('\n').filter((line) => line.startsWith('bulkhead: dies did not start'));
    expect(reports[0]).toMatch(/\(restart 1 of at most 8, next attempt in 1 s\)$/);
    expect(reports[1]).toMatch(/\(restart 2 of at most 8, next attempt in 2 s\)$/);
    expect(reports[0]).toMatch(/^bulkhead: dies did not start: it exited with code 3 \(restart 1/);
  });
});
