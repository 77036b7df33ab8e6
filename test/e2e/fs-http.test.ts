import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
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
  it('prints its URL and a Claude Desktop snippet, then serves tools', async () => {
    ws = tempWorkspace({ 'a.txt': 'over http\n' });
    server = await startHttpServer({ script: FS_CLI, args: ['--root', ws.root] });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await expect.poll(() => server!.stdout()).toContain('Ctrl-C stops it.');
    const snippets = [...server.stdout().matchAll(/^\{\n[\s\S]*?^\}$/gm)].map((m) => JSON.parse(m[0]));
    expect(snippets[0]).toEqual({ mcpServers: { 'bulkhead-fs': { command: 'npx', args: ['-y', 'mcp-remote', server.url] } } });
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
    expect(await raw(server.url, {}, JSON.stringify({ pad: 'x'.repeat(17 * 1024 * 1024) }))).toBe(413);
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

  it('binds beyond loopback only with a token, which every request must carry', async () => {
    ws = tempWorkspace({ 'a.txt': 'wide\n' });
    const refused = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [FS_CLI, '--root', ws.root, '--http', '0.0.0.0:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(refused).toEqual({ code: 2, stderr: 'bulkhead-fs: binding to 0.0.0.0 exposes the server beyond this machine; give --token-file FILE so clients must present a bearer token\n' });
    const token = 'wide-open-0123456789-token';
    writeFileSync(ws.path('token'), token);
    server = await startHttpServer({ script: FS_CLI, listen: '0.0.0.0:0', args: ['--root', ws.root, '--token-file', ws.path('token')], headers: { authorization: `Bearer ${token}` } });
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
