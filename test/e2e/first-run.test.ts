// The product as a new user starts it: the built CLI in an empty folder with no control-plane
// folder, over stdio and Streamable HTTP, through a real MCP client. Nothing here is configured by
// hand, so a broken default fails these tests.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalStore } from '@bulkhead/core';
import { startHttpServer, startStdioServer, type ServerProcess } from '@bulkhead/core/testing';
import { GATEWAY_CLI, text } from './helpers.js';

/** The compartments on by default, each with a query a user would type and the tool it must find. */
const DEFAULT_COMPARTMENTS = [
  ['fs', 'read a file', 'fs__read_file'],
  ['fs_write', 'write a file', 'fs_write__write_file'],
  ['git', 'git log', 'git__git_log'],
  ['web', 'fetch a url', 'web__web_fetch'],
  ['ladder', 'ladder read rung', 'ladder__ladder_read'],
] as const;

const CORE_AND_META = ['fs__read_file', 'fs__grep', 'fs__glob_files', 'tool_search', 'call_tool', 'list_tools', 'load_tools', 'unload_tools'];

let folder: string;
let server: ServerProcess | undefined;

function emptyFolder(): string {
  folder = mkdtempSync(join(tmpdir(), 'bulkhead-first-run-'));
  return folder;
}

afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(folder, { recursive: true, force: true });
});

async function assertEveryDefaultCompartment(client: ServerProcess['client']): Promise<void> {
  // tools/list waits a bounded time for first starts; a loaded machine may need a second look, as a
  // client that follows list_changed takes.
  await expect.poll(async () => (await client.listTools()).tools.map((tool) => tool.name), { timeout: 30_000, interval: 500 }).toEqual(CORE_AND_META);
  for (const [namespace, query, tool] of DEFAULT_COMPARTMENTS) {
    const found = await client.callTool({ name: 'tool_search', arguments: { query, limit: 10 } });
    const names = (found.structuredContent as { results: { name: string }[] }).results.map((result) => result.name);
    expect(names, `tool_search "${query}" finds ${namespace}`).toContain(tool);
  }
  const everything = text(await client.callTool({ name: 'list_tools', arguments: {} }));
  expect(everything).toMatch(/namespaces: fs, fs_write, git, ladder, web\]$/);
  expect(everything).not.toContain('shell__');
}

describe('the first run: bulkhead start in an empty folder', () => {
  it('over stdio, with no flag at all, runs fs, fs_write, git, web and ladder and serves a real call', async () => {
    const root = emptyFolder();
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start'], cwd: root });
    await assertEveryDefaultCompartment(server.client);
    writeFileSync(join(root, 'hello.txt'), 'hello from the first run\n');
    const read = await server.client.callTool({ name: 'fs__read_file', arguments: { path: 'hello.txt' } });
    expect(text(read)).toBe('     1\thello from the first run');
    const lanes = await server.client.callTool({ name: 'call_tool', arguments: { name: 'ladder__lane_list', arguments: { repo: 'me/first-run' } } });
    expect(lanes.isError, text(lanes)).toBeFalsy();
    // fs_write asks, and this client cannot be asked: the call waits for a human's approval, and nothing is written until one decides (here: denies).
    const writing = server.client.callTool({ name: 'call_tool', arguments: { name: 'fs_write__write_file', arguments: { path: 'new.txt', content: 'x' } } });
    const approvals = new ApprovalStore(join(root, '.bulkhead'));
    await expect.poll(() => approvals.pending().length, { timeout: 10_000, interval: 50 }).toBe(1);
    expect(readdirSync(root).sort()).toEqual(['.bulkhead', 'hello.txt']);
    const id = approvals.pending()[0]!.id;
    approvals.decide(id, 'deny', 'the first-run test');
    const write = await writing;
    expect(write.isError).toBe(true);
    expect(text(write)).toMatch(new RegExp(`^Permission denied: the first-run test denied fs_write:write_file \\(approval ${id}\\) at `));
    expect(readdirSync(root).sort()).toEqual(['.bulkhead', 'hello.txt']);
    expect(server.stderr()).toContain('bulkhead: fs is up (4 tools)\n');
    expect(server.stderr()).toContain('bulkhead: shell is up (no tools: shell_policy.yaml enables none)\n');
  });

  it('with --root as the client snippets give it, over Streamable HTTP', async () => {
    const root = emptyFolder();
    server = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', root], cwd: tmpdir() });
    await assertEveryDefaultCompartment(server.client);
    writeFileSync(join(root, 'notes.md'), '# notes\n');
    const read = await server.client.callTool({ name: 'call_tool', arguments: { name: 'fs:read_file', arguments: { path: 'notes.md' } } });
    expect(text(read)).toBe('     1\t# notes');
  });
});
