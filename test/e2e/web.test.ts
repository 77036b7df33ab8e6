import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, text, WEB_CLI } from './helpers.js';

let ws: TempWorkspace;
let server: ServerProcess | undefined;
let site: Server;
let port: number;

beforeAll(async () => {
  // The only network these tests touch: a page on 127.0.0.1.
  site = createServer((request, response) => {
    // /search answers as a SearXNG instance's JSON API does; every other path is a page.
    if (request.url?.startsWith('/search?')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ query: 'local', results: [{ url: 'https://example.org/', title: 'Example <b>page</b>', content: 'found locally', engine: 'brave' }] }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Local</title><p>served locally</p>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  port = (site.address() as AddressInfo).port;
});

afterAll(async () => {
  site.closeAllConnections();
  await new Promise<void>((resolve) => site.close(() => resolve()));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

describe('bulkhead-web as a process', () => {
  it('refuses loopback under the default policy', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - web\n' });
    server = await startStdioServer({ script: WEB_CLI, args: ['--root', ws.root] });
    expect((await server.client.listTools()).tools.map((t) => t.name)).toEqual(['web_fetch', 'web_search']);
    const refused = await server.client.callTool({ name: 'web_fetch', arguments: { url: `http://127.0.0.1:${port}/` } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe('127.0.0.1 is refused: it is a loopback address (allow_private in web_policy.yaml lists CIDRs that may be reached)');
    expect(server.stderr()).toContain('bulkhead-web: serving 2 tools over stdio');
  });

  it('is started by the gateway from bulkhead.yaml and fetches what web_policy.yaml allows', async () => {
    ws = tempWorkspace({
      '.bulkhead/bulkhead.yaml': 'servers:\n  web: {}\n',
      '.bulkhead/web_policy.yaml': `allow_private: [127.0.0.1/32]\nports: [${port}]\n`,
      '.bulkhead/permissions.yaml': 'allow:\n  - web\n',
    });
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const fetched = await server.client.callTool({ name: 'call_tool', arguments: { name: 'web:web_fetch', arguments: { url: `http://127.0.0.1:${port}/` } } });
    expect(fetched.isError).toBeFalsy();
    expect(text(fetched)).toContain(`<untrusted_external_content source="http://127.0.0.1:${port}/">\nTitle: Local\n\nserved locally\n</untrusted_external_content>`);
  });

  it('searches the self-hosted SearXNG that web_policy.yaml names', async () => {
    ws = tempWorkspace({
      '.bulkhead/web_policy.yaml': `search:\n  provider: searxng\n  endpoint: http://127.0.0.1:${port}/\n  allow_private_endpoint: true\n`,
      '.bulkhead/permissions.yaml': 'allow:\n  - web\n',
    });
    server = await startStdioServer({ script: WEB_CLI, args: ['--root', ws.root] });
    const found = await server.client.callTool({ name: 'web_search', arguments: { query: 'local' } });
    expect(found.isError).toBeFalsy();
    expect(text(found)).toBe('1 result from SearXNG for "local":\n<untrusted_external_content source="searxng">\n1. Example page\n   https://example.org/\n   found locally\n</untrusted_external_content>');
  });
});
