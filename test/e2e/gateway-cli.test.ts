import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { alive, descendants, EVERYTHING_ENTRY, GATEWAY_CLI, text } from './helpers.js';

const run = promisify(execFile);
let ws: TempWorkspace;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

describe('bulkhead tools, search, serve and audit verify', () => {
  it('lists what is exposed by tier', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n  fs: {}\n${EVERYTHING_ENTRY}` });
    const { stdout } = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws.root]);
    const [core, meta, deferred] = stdout.split(/^(?=meta|deferred)/m);
    expect(core!.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.trim().split(' ')[0])).toEqual(['fs__glob_files', 'fs__grep', 'fs__read_file']);
    expect(meta).toBe('meta (always bound):\n  tool_search, call_tool, list_tools, load_tools, unload_tools\n');
    expect(deferred).toContain('  fs__list_files — ');
    expect(deferred).toContain('  everything__get-sum — Returns the sum of two numbers\n');
  });

  it('searches from the terminal', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n  fs: {}\n${EVERYTHING_ENTRY}` });
    const { stdout } = await run(process.execPath, [GATEWAY_CLI, 'search', 'sum of two numbers', '--limit', '2', '--root', ws.root]);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^1\. everything__get-sum \(score [\d.]+\)$/);
    expect(lines[1]).toBe('   Returns the sum of two numbers');
    expect(lines.filter((line) => /^\d+\. /.test(line))).toHaveLength(2);
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`bulkhead serve passes ${signal} on, so the compartment stops with it`, async () => {
      ws = tempWorkspace({ 'a.txt': 'alone\n' });
      const served = await startHttpServer({ script: GATEWAY_CLI, args: ['serve', 'fs', '--root', ws.root] });
      server = served;
      const pids = [served.child.pid!, ...descendants(served.child.pid!)];
      expect(pids).toHaveLength(2);
      process.kill(served.child.pid!, signal);
      await expect.poll(() => pids.filter(alive), { timeout: 15_000, interval: 200 }).toEqual([]);
    });
  }

  it('serves one built-in compartment on its own', async () => {
    ws = tempWorkspace({ 'a.txt': 'alone\n' });
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['serve', 'fs', '--root', ws.root] });
    expect((await server.client.listTools()).tools.map((t) => t.name)).toEqual(['read_file', 'grep', 'glob_files', 'list_files']);
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }))).toBe('     1\talone');
  });

  it('refuses to serve a compartment that is not a built-in', async () => {
    const failure = await run(process.execPath, [GATEWAY_CLI, 'serve', 'nosuch']).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toContain('bulkhead: nosuch is not an installed built-in compartment (built-ins: fs, fs_write, shell, web, git, ladder)');
  });

  it('verifies the gateway audit chain', async () => {
    ws = tempWorkspace({ 'a.txt': 'x\n', '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n' });
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    await server.client.callTool({ name: 'fs__read_file', arguments: { path: 'a.txt' } });
    await server.client.callTool({ name: 'tool_search', arguments: { query: 'list a folder' } });
    await server.client.callTool({ name: 'call_tool', arguments: { name: 'fs__list_files', arguments: {} } });
    await server.close();
    server = undefined;
    const { stdout } = await run(process.execPath, [GATEWAY_CLI, 'audit', 'verify', '--root', ws.root]);
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual([
      `OK ${ws.path('.bulkhead/audit/fs.jsonl')}: 2 entries, chain intact`,
      `OK ${ws.path('.bulkhead/audit/gateway.jsonl')}: 3 entries, chain intact`,
    ]);
    const tools = readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8').trimEnd().split('\n').map((line) => (JSON.parse(line) as { tool: string }).tool);
    expect(tools).toEqual(['fs:read_file', 'gateway:tool_search', 'fs:list_files']);
  });
});
