import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, startStdioServer, tempWorkspace, type HttpServerProcess, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_CLI, GATEWAY_CLI, EVERYTHING, text } from './helpers.js';


let ws: TempWorkspace;
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  ws?.cleanup();
});


describe('the gateway over HTTP with tokens mapped to profiles', () => {
  it('gives each token its profile and never lets a session change hands', async () => {
    const full = 'full-access-token-0123456789';
    const narrow = 'readonly-token-0123456789ab';
    ws = tempWorkspace({
      'a.txt': 'a\n',
      'full.token': full,
      '.bulkhead/readonly.token': narrow,
      '.bulkhead/permissions.yaml': 'allow:\n  - everything\n',
      '.bulkhead/bulkhead.yaml': `servers:\n  fs: {}\n  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n    trust: results\nprofiles:\n  readonly:\n    namespaces: [fs]\ntokens:\n  - file: readonly.token\n    profile: readonly\n`,
    });
    const gateway: HttpServerProcess = await startHttpServer({
      script: GATEWAY_CLI,
      args: ['start', '--root', ws.root, '--token-file', ws.path('full.token')],
      headers: { authorization: `Bearer ${full}` },
    });
    closers.push(gateway.close);
    // A third-party result comes back labelled as untrusted data.
    expect(text(await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__echo', arguments: { message: 'full' } } }))).toContain('Echo: full');
    const readonly = await gateway.connectAnother({ authorization: `Bearer ${narrow}` });
    expect(text(await readonly.callTool({ name: 'call_tool', arguments: { name: 'everything__echo', arguments: { message: 'narrow' } } }))).toBe(
      'Unknown tool everything__echo; use tool_search to find tools (names look like fs__read_file or fs:read_file)',
    );
    expect(text(await readonly.callTool({ name: 'fs__read_file', arguments: { path: 'a.txt' } }))).toBe('     1\ta');
    const sessionId = (gateway.client.transport as { sessionId?: string } | undefined)?.sessionId;
    expect(sessionId).toBeTruthy();
    const hijack = await fetch(gateway.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${narrow}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(403);
    expect(((await hijack.json()) as { error: { message: string } }).error.message).toBe('this session was opened with another bearer token');
    const anonymous = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
  });
});

describe('an HTTP downstream', () => {
  function startFsOverHttp(root: string, port: number, token: string): Promise<ChildProcess> {
    writeFileSync(join(root, '..', 'fs.token'), token);
    const child = spawn(process.execPath, [FS_CLI, '--root', root, '--http', `127.0.0.1:${port}`, '--token-file', join(root, '..', 'fs.token')], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('listening on')) resolve(child);
      });
      child.once('exit', (code) => reject(new Error(`fs exited ${code}`)));
    });
  }

  it('is reached with its headers and reconnected after it comes back', async () => {
    ws = tempWorkspace({ 'remote/r.txt': 'remote file\n' });
    const token = 'remote-fs-token-0123456789';
    const probe = await startHttpServer({ script: FS_CLI, args: ['--root', ws.path('remote')] });
    const port = Number(new URL(probe.url).port);
    await probe.close();
    let remote = await startFsOverHttp(ws.path('remote'), port, token);
    const stopRemote = async () => {
      const exited = new Promise((resolve) => remote.once('exit', resolve));
      process.kill(-remote.pid!, 'SIGTERM');
      await exited;
    };
    closers.push(async () => {
      if (remote.exitCode === null) await stopRemote();
    });
    // Our own fs server, so trusted as a built-in is (its annotations keep read_file low risk).
    ws.write('.bulkhead/bulkhead.yaml', `servers:\n  remote:\n    url: http://127.0.0.1:${port}/mcp\n    trust: all\n    headers:\n      Authorization: Bearer ${token}\n`);
    const gateway: ServerProcess = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    closers.push(gateway.close);
    const read = () => gateway.client.callTool({ name: 'call_tool', arguments: { name: 'remote__read_file', arguments: { path: 'r.txt' } } });
    expect(text(await read())).toBe('     1\tremote file');
    await stopRemote();
    const down = await read();
    expect(down.isError).toBe(true);
    expect(text(down)).toMatch(/^remote \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached \(.+\); reconnecting(: restarting in \d+ s \(restart \d+ of at most \d+\))?\. Try again shortly\.$/);
    remote = await startFsOverHttp(ws.path('remote'), port, token);
    await expect.poll(async () => text(await read()), { timeout: 15_000, interval: 300 }).toBe('     1\tremote file');
  });
});

describe('bulkhead start --http, config init and doctor', () => {
  it('prints the URL, where its token is kept and the client snippets with it', async () => {
    ws = tempWorkspace({ 'a.txt': 'a\n', '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n' });
    const gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    closers.push(gateway.close);
    const tokenFile = ws.path('.bulkhead/keys/bulkhead.http.token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(gateway.token).toBe(token);
    expect(gateway.stdout()).toContain(
      `\ndownstream servers: fs (starting; each is reported below when it is up)\nroots: ${ws.root}\ncontrol-plane folder: ${ws.path('.bulkhead')}\n` +
        `bearer token: made now and kept in ${tokenFile} (mode 0600; the next start uses it again; delete the file for a new one)\n`,
    );
    const snippets = [...gateway.stdout().matchAll(/^\{\n[\s\S]*?^\}$/gm)].map((m) => JSON.parse(m[0]));
    expect(snippets[0]).toEqual({ mcpServers: { bulkhead: { command: 'npx', args: ['-y', 'mcp-remote', gateway.url, '--header', 'Authorization:${BULKHEAD_AUTH}'], env: { BULKHEAD_AUTH: `Bearer ${token}` } } } });
    expect(gateway.stdout()).toContain(`\nclaude mcp add --transport http bulkhead ${gateway.url} --header "Authorization: Bearer ${token}"\n`);
    expect(snippets[1]).toEqual({ mcpServers: { bulkhead: { command: process.execPath, args: [GATEWAY_CLI, 'start', '--root', ws.root] } } });
    expect(text(await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'a.txt' } }))).toBe('     1\ta');
  });

  it('writes a commented control-plane folder that doctor accepts, and never overwrites it', async () => {
    ws = tempWorkspace();
    const { execFileSync } = await import('node:child_process');
    const init = execFileSync(process.execPath, [GATEWAY_CLI, 'config', 'init', '--root', ws.root], { encoding: 'utf8' });
    expect(init.split('\n').filter(Boolean)).toEqual(
      ['bulkhead.yaml', 'tool_policy.yaml', 'permissions.yaml', 'audit.yaml', 'hooks.yaml', 'fs_policy.yaml', 'fs_write_policy.yaml', 'git_policy.yaml', 'shell_policy.yaml', 'web_policy.yaml', 'ladder_policy.yaml', '.gitignore'].map((name) => `wrote ${ws.path(`.bulkhead/${name}`)}`),
    );
    writeFileSync(ws.path('.bulkhead/audit.yaml'), 'enabled: false\n');
    const again = execFileSync(process.execPath, [GATEWAY_CLI, 'config', 'init', '--root', ws.root], { encoding: 'utf8' });
    expect(again).toContain(`kept ${ws.path('.bulkhead/audit.yaml')} (it exists)`);
    const doctor = execFileSync(process.execPath, [GATEWAY_CLI, 'doctor', '--root', ws.root], { encoding: 'utf8' });
    expect(doctor).toContain(`ok   configuration: ${ws.path('.bulkhead')} is valid\n`);
    expect(doctor).toContain('ok   server fs: 4 tools\n');
    expect(doctor).toContain('ok   server fs_write: 6 tools\n');
    expect(doctor).toContain('ok   server git: 7 tools\n');
    expect(doctor).toMatch(/^ok {3}ripgrep: ripgrep \d+/m);
  });

  it('makes doctor fail on a bad configuration', async () => {
    ws = tempWorkspace({ '.bulkhead/tool_policy.yaml': 'mode: sometimes\n' });
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(process.execPath, [GATEWAY_CLI, 'doctor', '--root', ws.root], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`fail configuration: ${ws.path('.bulkhead/tool_policy.yaml')}: invalid configuration\n  - \`mode\` (line 1): must be one of "dynamic", "stable"`);
  });
});
