import { symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Root } from '@modelcontextprotocol/sdk/types.js';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { text, until } from './helpers.js';
import { startHttpGateway, startStdioGateway, type HttpGateway, type StdioGateway, type TestClient } from './relay-clients.js';

const require = createRequire(import.meta.url);
/** The reference filesystem server from npm, started with no folder: it relies on MCP roots for what it may touch. */
const SERVER_FILESYSTEM = join(dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist', 'index.js');

const PROBE = fileURLToPath(new URL('../fixtures/relay-probe.mjs', import.meta.url));

/** A folder with the gateway's root `proj` (its control plane inside) and a sibling `outside` the gateway does not serve. */
function workspace(): TempWorkspace {
  const ws = tempWorkspace({
    'proj/.bulkhead/bulkhead.yaml': `servers:\n  filesystem:\n    command: ${process.execPath}\n    args: [${SERVER_FILESYSTEM}]\n    trust: [results]\n`,
    'proj/.bulkhead/permissions.yaml': 'approval_wait_ms: 0\nallow:\n  - "filesystem:*"\n',
    'proj/notes.txt': 'notes in the root\n',
    'proj/sub/deep.txt': 'deep in sub\n',
    'outside/secret.txt': 'not for the gateway\n',
    'proj_evil/secret.txt': 'a look-alike of the root beside it\n',
  });
  symlinkSync(ws.path('outside'), ws.path('proj/link'));
  return ws;
}

const call = (gateway: StdioGateway, name: string, args: Record<string, unknown> = {}) => gateway.client.callTool({ name: 'call_tool', arguments: { name: `filesystem__${name}`, arguments: args } });
const allowed = async (gateway: StdioGateway) => text(await call(gateway, 'list_allowed_directories'));
const read = async (gateway: StdioGateway, path: string) => text(await call(gateway, 'read_text_file', { path }));
const root = (path: string, name = 'client root'): Root => ({ uri: pathToFileURL(path).href, name });

/** server-filesystem asks for roots when it starts and after each list_changed; its answer comes shortly after. */
async function allowedBecomes(gateway: StdioGateway, expected: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  let last = await allowed(gateway);
  while (last !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await allowed(gateway);
  }
  expect(last).toBe(expected);
}

describe('server-filesystem with no folders, from a client without roots', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  beforeAll(async () => {
    ws = workspace();
    gateway = await startStdioGateway(ws.path('proj'));
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it("gets the gateway's root, reads in it, and is refused outside it", async () => {
    await allowedBecomes(gateway, `Allowed directories:\n${ws.path('proj')}`);
    expect(await read(gateway, ws.path('proj/notes.txt'))).toBe('notes in the root\n');
    expect(await read(gateway, ws.path('proj/sub/deep.txt'))).toBe('deep in sub\n');
    expect(await read(gateway, ws.path('outside/secret.txt'))).toContain('Access denied - path outside allowed directories');
    // Through a symlink in the root that leads out of it, too (server-filesystem resolves it).
    expect(await read(gateway, ws.path('proj/link/secret.txt'))).toContain('Access denied');
  });
});

describe('server-filesystem from a client with roots of its own', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  let roots: Root[] = [];
  beforeAll(async () => {
    ws = workspace();
    roots = [root(ws.path('proj/sub'), 'sub'), root(ws.path('outside')), root(ws.path('proj_evil')), root(ws.path('proj/link')), { uri: 'https://example.com/', name: 'web' }, root(ws.path('proj/gone'))];
    gateway = await startStdioGateway(ws.path('proj'), { roots: () => roots });
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it('is limited to the client roots inside the gateway root; one outside it, a look-alike beside it, a symlink out, a missing folder and a non-file root are not passed on', async () => {
    await allowedBecomes(gateway, `Allowed directories:\n${ws.path("proj/sub")}`);
    expect(await read(gateway, ws.path('proj/sub/deep.txt'))).toBe('deep in sub\n');
    expect(await read(gateway, ws.path('proj/notes.txt'))).toContain('Access denied - path outside allowed directories');
    expect(await read(gateway, ws.path('outside/secret.txt'))).toContain('Access denied - path outside allowed directories');
    expect(await read(gateway, ws.path('proj_evil/secret.txt'))).toContain('Access denied - path outside allowed directories');
  });

  it("follows the client's roots/list_changed, and a client root wider than the gateway's gives the gateway's", async () => {
    roots = [root(ws.root, 'everything')];
    await gateway.client.sendRootsListChanged();
    await allowedBecomes(gateway, `Allowed directories:\n${ws.path('proj')}`);
    expect(await read(gateway, ws.path('proj/notes.txt'))).toBe('notes in the root\n');
    expect(await read(gateway, ws.path('outside/secret.txt'))).toContain('Access denied - path outside allowed directories');
    // Only a root outside the gateway's: nothing is passed on (server-filesystem then keeps what it had, never that folder).
    const asked = gateway.requests.length;
    roots = [root(ws.path('outside'))];
    await gateway.client.sendRootsListChanged();
    await until('server-filesystem to ask again', () => gateway.requests.length > asked, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await allowed(gateway)).toBe(`Allowed directories:\n${ws.path('proj')}`);
    expect(await read(gateway, ws.path('outside/secret.txt'))).toContain('Access denied - path outside allowed directories');
  });
});

describe('roots/list during a tool call, over Streamable HTTP', () => {
  let ws: TempWorkspace;
  let gateway: HttpGateway;
  beforeAll(async () => {
    ws = workspace();
    ws.write('proj/.bulkhead/bulkhead.yaml', `servers:\n  probe:\n    command: ${process.execPath}\n    args: [${PROBE}, ${ws.mkdir('probe')}]\n    trust: [results]\n`);
    ws.write('proj/.bulkhead/permissions.yaml', 'approval_wait_ms: 0\nallow:\n  - "probe:*"\n');
    gateway = await startHttpGateway(ws.path('proj'));
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  const listed = async (client: TestClient) => JSON.parse(text(await client.client.callTool({ name: 'call_tool', arguments: { name: 'probe__list_roots', arguments: {} } }))) as Root[];

  it("is answered for the client whose call asks: its own roots narrowed, or the gateway's for a client without roots", async () => {
    const narrow = await gateway.connect({ roots: () => [root(ws.path('proj/sub'), 'sub'), root(ws.path('outside'))] });
    const plain = await gateway.connect();
    expect(await listed(narrow)).toEqual([root(ws.path('proj/sub'), 'sub')]);
    expect(await listed(plain)).toEqual([root(ws.path('proj'), 'proj')]);
    expect(narrow.requests.map((request) => request.method)).toEqual(['roots/list']);
  });
});
