import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, tempWorkspace, type HttpServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_CLI, text } from './helpers.js';


let ws: TempWorkspace;
let server: HttpServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});


function raw(url: string, headers: Record<string, string>, body: string): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe('bulkhead-fs over Streamable HTTP (a real process)', () => {
  it('prints its URL, where its token is kept and client snippets that carry it, then serves tools', async () => {
    ws = tempWorkspace({ 'a.txt': 'over http\n' });
    server = await startHttpServer({ script: FS_CLI, args: ['--root', ws.root] });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const tokenFile = ws.path('.bulkhead/keys/bulkhead-fs.http.token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.token).toBe(token);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(ws.path('.bulkhead/keys')).mode & 0o777).toBe(0o700);
    expect(server.stdout()).toContain(`\nbearer token: made now and kept in ${tokenFile} (mode 0600; the next start uses it again; delete the file for a new one)\n`);
    const snippets = [...server.stdout().matchAll(/^\{\n[\s\S]*?^\}$/gm)].map((m) => JSON.parse(m[0]));
    expect(snippets[0]).toEqual({
      mcpServers: { 'bulkhead-fs': { command: 'npx', args: ['-y', 'mcp-remote', server.url, '--header', 'Authorization:${BULKHEAD_AUTH}'], env: { BULKHEAD_AUTH: `Bearer ${token}` } } },
    });
    expect(server.stdout()).toContain(`\nClaude Code, over HTTP:\nclaude mcp add --transport http bulkhead-fs ${server.url} --header "Authorization: Bearer ${token}"\n`);
    expect(snippets[1]).toEqual({ mcpServers: { 'bulkhead-fs': { command: process.execPath, args: [FS_CLI, '--root', ws.root] } } });
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }))).toBe('     1\tover http');
    const second = await server.connectAnother();
    expect((await second.listTools()).tools).toHaveLength(4);
  });

  it('rejects foreign Origin and Host with 403 and oversized bodies with 413, and keeps serving', async () => {
    ws = tempWorkspace({ 'a.txt': 'still here\n' });
    server = await startHttpServer({ script: FS_CLI, args: ['--root', ws.root] });
    const port = new URL(server.url).port;
    expect(await raw(server.url, { origin: 'http://evil.example' }, INIT)).toBe(403);
    expect(await raw(server.url, { host: `rebind.example:${port}` }, INIT)).toBe(403);
    expect(await raw(server.url, { authorization: `Bearer ${server.token}` }, JSON.stringify({ pad: 'x'.repeat(17 * 1024 * 1024) }))).toBe(413);
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }))).toBe('     1\tstill here');
  });

  it('requires the token from --token-file', async () => {
    ws = tempWorkspace({ 'a.txt': 'secret place\n' });
    const token = 'tok-0123456789abcdef-xyz';
    writeFileSync(ws.path('token'), `${token}\n`);
    server = await startHttpServer({ script: FS_CLI, args: ['--root', ws.root, '--token-file', ws.path('token')], headers: { authorization: `Bearer ${token}` } });
    expect(await raw(server.url, {}, INIT)).toBe(401);
    expect(await raw(server.url, { authorization: 'Bearer nope' }, INIT)).toBe(401);
    await expect(server.connectAnother({ authorization: 'Bearer wrong' })).rejects.toThrow();
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }))).toBe('     1\tsecret place');
  });

  it('binds beyond loopback with its kept token, which every request must carry', async () => {
    ws = tempWorkspace({ 'a.txt': 'wide\n' });
    server = await startHttpServer({ script: FS_CLI, listen: '0.0.0.0:0', args: ['--root', ws.root] });
    expect(server.token).toBe(readFileSync(ws.path('.bulkhead/keys/bulkhead-fs.http.token'), 'utf8').trim());
    expect(await raw(server.url, {}, INIT)).toBe(401);
    expect(await raw(server.url, { authorization: 'Bearer wrong' }, INIT)).toBe(401);
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }))).toBe('     1\twide');
  });

  it('stops on SIGTERM', async () => {
    ws = tempWorkspace();
    server = await startHttpServer({ script: FS_CLI, args: ['--root', ws.root] });
    const exited = new Promise<number | null>((resolve) => server!.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(143);
  });
});
