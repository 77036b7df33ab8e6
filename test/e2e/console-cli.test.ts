import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runningConsoles } from '@bulkhead/core';
import { startHttpServer, startStdioServer, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI } from './helpers.js';

/** Where the console is served and how `bulkhead console` hands it to a browser. */

let ws: TempWorkspace | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  ws?.cleanup();
  ws = undefined;
});

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; location?: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ...(res.headers.location ? { location: res.headers.location } : {}) }));
    })
      .on('error', reject)
      .end();
  });
}

/** `bulkhead console` as a user runs it, with `PATH` as given (the test's own browser opener first). */
function runConsole(controlDir: string, path: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [GATEWAY_CLI, 'console', '--config', controlDir], { env: { PATH: path, HOME: process.env['HOME'] ?? '' }, timeout: 15_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

async function stdioGateway(root: string) {
  const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', root], cwd: root });
  closers.push(gateway.close);
  for (let i = 0; i < 100 && !/console: http/.test(gateway.stderr()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return { gateway, url: /console: (http:\/\/127\.0\.0\.1:\d+\/console\/)/.exec(gateway.stderr())?.[1] };
}

describe('bulkhead console', () => {
  it('opens the login link with xdg-open, as one argument and without a shell', async () => {
    ws = tempWorkspace({});
    const { gateway, url } = await stdioGateway(ws.root);
    expect(url).toBeDefined();
    const bin = join(ws.root, 'bin');
    mkdirSync(bin);
    const opened = join(ws.root, 'opened.txt');
    // A stand-in browser opener: it records its arguments, one per line.
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${opened}'; done\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const run = await runConsole(join(ws.root, '.bulkhead'), `${bin}:${process.env['PATH']}`);
    expect(run).toEqual({ code: 0, stdout: '', stderr: `bulkhead: opened the console of bulkhead gateway (pid ${gateway.pid}) at ${url} in your browser\n` });
    for (let i = 0; i < 50 && !readFileSync(opened, { flag: 'a+', encoding: 'utf8' }).includes('\n'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const args = readFileSync(opened, 'utf8').trimEnd().split('\n');
    expect(args).toHaveLength(1);
    // The link goes to the console's own base path (its session cookie's scope), which the banner does not show.
    expect(args[0]).toMatch(new RegExp(`^${url!.replace(/[.]/g, '\\.')}[A-Za-z0-9_-]{22}/login\\?ticket=[A-Za-z0-9_-]{43}$`));
    expect((await get(args[0]!)).status).toBe(303);
  });

  it('prints the link when no browser opener runs', async () => {
    ws = tempWorkspace({});
    const { url } = await stdioGateway(ws.root);
    const empty = join(ws.root, 'empty');
    mkdirSync(empty);
    const run = await runConsole(join(ws.root, '.bulkhead'), empty);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    const [first, second, link, ...rest] = run.stderr.split('\n');
    expect(first).toBe('bulkhead: could not open a browser (xdg-open: spawn xdg-open ENOENT)');
    expect(second).toBe('bulkhead: open this link in a browser on this machine within a minute (it works once):');
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/[A-Za-z0-9_-]{22}\/login\?ticket=[A-Za-z0-9_-]{43}$/);
    expect(link!.startsWith(url!)).toBe(true);
    expect(rest).toEqual(['']);
    expect((await get(link!)).status).toBe(303);
  });

  it('refuses arguments it does not take', async () => {
    ws = tempWorkspace({});
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(process.execPath, [GATEWAY_CLI, 'console', 'now', '--config', join(ws!.root, '.bulkhead')], (error, _stdout, stderr) => resolve({ code: (error as { code?: number } | null)?.code ?? 0, stderr })),
    );
    expect(run).toEqual({ code: 2, stderr: 'bulkhead: console takes no arguments besides its flags (got now) (see `bulkhead help console`)\n' });
  });
});

describe('where the gateway serves its console', () => {
  it('beyond loopback: on a port of its own on 127.0.0.1, never on the public listener', async () => {
    ws = tempWorkspace({});
    const gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root, listen: '0.0.0.0:0' });
    closers.push(gateway.close);
    const gatewayPort = new URL(gateway.url).port;
    const url = /console: (http:\/\/127\.0\.0\.1:(\d+)\/console\/) \(open it with `bulkhead console`\)\n/.exec(gateway.stdout());
    expect(url).not.toBeNull();
    expect(url![2]).not.toBe(gatewayPort);
    expect(runningConsoles(join(ws.root, '.bulkhead')).map((entry) => entry.url)).toEqual([url![1]]);
    const onPublic = await get(`http://127.0.0.1:${gatewayPort}/console/`);
    expect([onPublic.status, JSON.parse(onPublic.body).error.message]).toEqual([404, 'not found; the MCP endpoint is /mcp']);
    expect((await get(url![1]!)).status).toBe(401);
  });

  it('not at all with console: { enabled: false } in bulkhead.yaml', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': 'console:\n  enabled: false\n' });
    const gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
    closers.push(gateway.close);
    expect(gateway.stdout()).not.toContain('console:');
    expect(runningConsoles(join(ws.root, '.bulkhead'))).toEqual([]);
    const answer = await get(gateway.url.replace(/\/mcp$/, '/console/'));
    expect([answer.status, JSON.parse(answer.body).error.message]).toEqual([404, 'not found; the MCP endpoint is /mcp']);
    const stdio = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
    closers.push(stdio.close);
    // The console's line is written with the stdio banner, in one write.
    for (let i = 0; i < 100 && !stdio.stderr().includes('over stdio'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stdio.stderr()).toContain('bulkhead gateway: over stdio');
    expect(stdio.stderr()).not.toContain('console:');
  });

  it('with a console.secret that holds no secret: says so, refuses it as a bearer token, and the gateway and login links still work', async () => {
    ws = tempWorkspace({ '.bulkhead/keys/console.secret': 'guessable\n' });
    const { gateway, url } = await stdioGateway(ws.root);
    const file = join(ws.root, '.bulkhead', 'keys', 'console.secret');
    for (let i = 0; i < 50 && !gateway.stderr().includes(file); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(gateway.stderr()).toContain(`bulkhead: the console at ${url}: ${file} holds no console secret (43 base64url characters); delete it and start again\n`);
    expect((await get(url!, { authorization: 'Bearer guessable' })).status).toBe(401);
    expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toContain('fs__read_file');
    const link = (await runConsole(join(ws.root, '.bulkhead'), join(ws.root, 'no-opener'))).stderr.split('\n')[2]!;
    expect((await get(link)).status).toBe(303);
  });

  it('on the port given by console.port for a stdio gateway', async () => {
    ws = tempWorkspace({});
    // A free port, found by listening on 0 and letting go.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const found = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(found));
      });
    });
    mkdirSync(join(ws.root, '.bulkhead'), { recursive: true });
    writeFileSync(join(ws.root, '.bulkhead', 'bulkhead.yaml'), `console:\n  port: ${port}\n`);
    const { url } = await stdioGateway(ws.root);
    expect(url).toBe(`http://127.0.0.1:${port}/console/`);
  });
});
