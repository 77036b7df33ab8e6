// Every HTTP server asks for a bearer token, loopback included, as a user starts it: the built CLI
// with --http in an empty folder, connected with the token its banner prints. Attacks go through
// raw fetch and assert the exact status, header and JSON-RPC body.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, startHttpServer, type HttpServerProcess } from '@bulkhead/core/testing';
import { FS_CLI, GATEWAY_CLI, GIT_CLI, LADDER_CLI, SHELL_CLI, text, WEB_CLI } from './helpers.js';

const FS_WRITE_CLI = new URL('../../servers/fs-write/dist/cli.js', import.meta.url).pathname;

/** Each HTTP server: its command name (which names its token file), script and leading arguments. */
const SERVERS = [
  ['bulkhead-fs', FS_CLI, []],
  ['bulkhead-fs-write', FS_WRITE_CLI, []],
  ['bulkhead-shell', SHELL_CLI, []],
  ['bulkhead-web', WEB_CLI, []],
  ['bulkhead-git', GIT_CLI, []],
  ['bulkhead-ladder', LADDER_CLI, []],
  ['bulkhead', GATEWAY_CLI, ['start']],
] as const;

const UNAUTHORIZED = { status: 401, authenticate: 'Bearer', body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'missing, wrong or revoked bearer token' } } };
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } } });

const folders: string[] = [];
/** The bearer tokens kept in a control-plane folder (the gateway's console keeps its own secret and registry beside them). */
function keptTokens(folder: string): string[] {
  const keys = join(folder, '.bulkhead', 'keys');
  return existsSync(keys) ? readdirSync(keys).filter((name) => name.endsWith('.http.token')) : [];
}

function emptyFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'bulkhead-http-auth-'));
  folders.push(folder);
  return folder;
}

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function attempt(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<{ status: number; authenticate: string | null; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    body: INITIALIZE,
    ...init,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...init.headers },
  });
  const raw = await response.text();
  const isJson = response.headers.get('content-type') === 'application/json';
  return { status: response.status, authenticate: response.headers.get('www-authenticate'), body: isJson ? (JSON.parse(raw) as unknown) : raw };
}

/** Starts a server and reads its whole banner, connecting nothing: what a user sees in the terminal. */
async function startBare(script: string, args: readonly string[], cwd: string): Promise<{ url: string; stdout: string; close: () => Promise<void> }> {
  const child = spawn(process.execPath, [script, ...args, '--http', '127.0.0.1:0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('Ctrl-C stops it.')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url: /listening on (\S+)/.exec(stdout)![1]!, stdout, close };
}

/** Starts a server as README tells a user: in the folder it serves, with --root and --http. */
function start(script: string, lead: readonly string[], folder: string, extra: readonly string[] = []): Promise<HttpServerProcess> {
  return startHttpServer({ script, args: [...lead, '--root', folder, ...extra], cwd: folder });
}

describe('a bearer token on every HTTP server, loopback included', () => {
  const running = new Map<string, { server: HttpServerProcess; folder: string }>();

  beforeAll(async () => {
    for (const [bin, script, lead] of SERVERS) {
      const folder = emptyFolder();
      running.set(bin, { server: await start(script, lead, folder), folder });
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...running.values()].map(({ server }) => server.close()));
  });

  for (const [bin] of SERVERS) {
    describe(bin, () => {
      it('makes its token at the first start, keeps it mode 0600 in the control-plane folder, and prints it in its snippets', () => {
        const { server, folder } = running.get(bin)!;
        const file = join(folder, '.bulkhead', 'keys', `${bin}.http.token`);
        expect(readdirSync(join(folder, '.bulkhead', 'keys')).filter((name) => !name.startsWith('console'))).toEqual([`${bin}.http.token`]);
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(statSync(join(folder, '.bulkhead', 'keys')).mode & 0o777).toBe(0o700);
        const token = readFileSync(file, 'utf8').trim();
        expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(server.token).toBe(token);
        expect(server.stdout()).toContain(`\nbearer token: made now and kept in ${file} (mode 0600; the next start uses it again; delete the file for a new one)`);
        expect(server.stdout()).toContain(`"BULKHEAD_AUTH": "Bearer ${token}"`);
        expect(server.stdout()).toContain(`claude mcp add --transport http ${bin} ${server.url} --header "Authorization: Bearer ${token}"`);
      });

      it('serves an MCP client that sends the token', async () => {
        const { server } = running.get(bin)!;
        expect((await server.client.listTools()).tools).toBeInstanceOf(Array);
        expect(await attempt(server.url, { headers: { authorization: `Bearer ${server.token}` } })).toMatchObject({ status: 200 });
      });

      it('refuses every request without the token: none, wrong, cut, extended, of another scheme or header, in the URL', async () => {
        const { server } = running.get(bin)!;
        const token = server.token!;
        const refusals: Record<string, string>[] = [
          {},
          { authorization: '' },
          { authorization: 'Bearer' },
          { authorization: `Bearer ${'A'.repeat(43)}` },
          { authorization: `Bearer ${token.slice(0, -1)}` },
          { authorization: `Bearer ${token}x` },
          { authorization: `Bearer x${token}` },
          { authorization: `Token ${token}` },
          { authorization: `Basic ${Buffer.from(`user:${token}`).toString('base64')}` },
          { authorization: token },
          { 'x-api-key': token },
          { cookie: `token=${token}` },
        ];
        for (const headers of refusals) expect(await attempt(server.url, { headers }), JSON.stringify(headers)).toEqual(UNAUTHORIZED);
        expect(await attempt(`${server.url}?access_token=${token}&token=${token}`)).toEqual(UNAUTHORIZED);
        for (const method of ['GET', 'DELETE']) expect(await attempt(server.url, { method, body: null }), method).toEqual(UNAUTHORIZED);
      });

      it('refuses the token of every other server', async () => {
        const { server } = running.get(bin)!;
        for (const [other, { server: otherServer }] of running) {
          if (other === bin) continue;
          expect(otherServer.token).not.toBe(server.token);
          expect(await attempt(server.url, { headers: { authorization: `Bearer ${otherServer.token}` } }), other).toEqual(UNAUTHORIZED);
        }
      });

      it('answers /healthz without a token and tells it nothing', async () => {
        const { server } = running.get(bin)!;
        const health = await fetch(server.url.replace(/\/mcp$/, '/healthz'));
        expect(health.status).toBe(200);
        expect(health.headers.get('content-type')).toBe('text/plain');
        expect(await health.text()).toBe('ok\n');
      });
    });
  }

  it('lets a request refused for its token reach no tool: nothing written, no call audited, with a stolen session id too', async () => {
    for (const [bin, name] of [
      ['bulkhead-fs-write', 'write_file'],
      ['bulkhead', 'fs_write__write_file'],
    ] as const) {
      const { server, folder } = running.get(bin)!;
      const sessionId = (server.client.transport as { sessionId?: string }).sessionId!;
      expect(sessionId).toBeTruthy();
      const call = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name, arguments: { path: 'planted.txt', content: 'attacker was here\n' } } });
      const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
      expect(await attempt(server.url, { headers: session, body: call }), bin).toEqual(UNAUTHORIZED);
      expect(await attempt(server.url, { headers: { ...session, authorization: 'Bearer stolen-session-wrong-token-000000000000' }, body: call }), bin).toEqual(UNAUTHORIZED);
      const other = bin === 'bulkhead' ? running.get('bulkhead-fs-write')! : running.get('bulkhead')!;
      expect(await attempt(server.url, { headers: { ...session, authorization: `Bearer ${other.server.token}` }, body: call }), bin).toEqual(UNAUTHORIZED);
      expect(existsSync(join(folder, 'planted.txt'))).toBe(false);
      const audit = join(folder, '.bulkhead', 'audit');
      const lines = existsSync(audit) ? readdirSync(audit).flatMap((file) => readFileSync(join(audit, file), 'utf8').split('\n')) : [];
      expect(lines.filter((line) => line.includes('write_file')), bin).toEqual([]);
    }
  });
});

describe('the kept token', () => {
  it('is used again on the next start, so a client config keeps working', async () => {
    const folder = emptyFolder();
    const first = await start(FS_CLI, [], folder);
    const token = first.token;
    await first.close();
    const second = await start(FS_CLI, [], folder);
    try {
      expect(second.token).toBe(token);
      expect(second.stdout()).toContain(`\nbearer token: kept in ${join(folder, '.bulkhead', 'keys', 'bulkhead-fs.http.token')} (mode 0600;`);
      expect((await second.client.listTools()).tools.map((tool) => tool.name)).toContain('read_file');
    } finally {
      await second.close();
    }
  });

  /** Runs a server to its end in `folder`; it must refuse to start. */
  function refusedStart(script: string, lead: readonly string[], folder: string): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [script, ...lead, '--root', folder, '--http', '127.0.0.1:0'], { cwd: folder, encoding: 'utf8', timeout: 20_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  for (const [bin, script, lead] of [SERVERS[0], SERVERS[6]] as const) {
    const prefix = bin === 'bulkhead' ? 'bulkhead' : bin;
    it(`is refused by ${bin} when others may read it, when it is short, a link or in an open folder, and never replaced`, () => {
      const folder = emptyFolder();
      const keys = join(folder, '.bulkhead', 'keys');
      const file = join(keys, `${bin}.http.token`);
      const cases: [string, () => void, string][] = [
        [
          'readable by others',
          () => {
            writeFileSync(file, `${'k'.repeat(43)}\n`, { mode: 0o600 });
            chmodSync(file, 0o644);
          },
          `the bearer token file ${file} has mode 0644, so other users may read it; run chmod 600 ${file}, or delete it and a new token is made`,
        ],
        [
          'readable by the group',
          () => chmodSync(file, 0o640),
          `the bearer token file ${file} has mode 0640, so other users may read it; run chmod 600 ${file}, or delete it and a new token is made`,
        ],
        [
          'short',
          () => {
            rmSync(file);
            writeFileSync(file, 'short-token\n', { mode: 0o600 });
          },
          `the bearer token file ${file} holds 11 characters, fewer than the 43 of a made token; delete it and a new token is made`,
        ],
        [
          'empty',
          () => writeFileSync(file, '', { mode: 0o600 }),
          `the bearer token file ${file} holds 0 characters, fewer than the 43 of a made token; delete it and a new token is made`,
        ],
        [
          'a symbolic link',
          () => {
            rmSync(file);
            writeFileSync(join(folder, 'elsewhere'), `${'k'.repeat(43)}\n`, { mode: 0o600 });
            symlinkSync(join(folder, 'elsewhere'), file);
          },
          `the bearer token file ${file} is a symbolic link; a kept token is a plain file (delete the link and a new token is made)`,
        ],
        [
          'in a folder others may write',
          () => {
            rmSync(file);
            writeFileSync(file, `${'k'.repeat(43)}\n`, { mode: 0o600 });
            chmodSync(keys, 0o777);
          },
          `the key folder ${keys} has mode 0777, so other users may replace the bearer token kept in it; run chmod 700 ${keys}`,
        ],
      ];
      spawnSync('mkdir', ['-p', '-m', '700', keys]);
      for (const [what, prepare, message] of cases) {
        prepare();
        const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
        const result = refusedStart(script, lead, folder);
        expect(result, what).toEqual({ status: 2, stdout: '', stderr: `${prefix}: ${message}\n` });
        expect(existsSync(file) ? readFileSync(file, 'utf8') : undefined, what).toBe(before);
      }
    });
  }
});

describe('--no-auth', () => {
  for (const [bin, script, lead] of SERVERS) {
    it(`${bin} serves loopback without a token when asked, says so, and makes no token`, async () => {
      const folder = emptyFolder();
      const server = await startBare(script, [...lead, '--root', folder, '--no-auth'], folder);
      try {
        const open = await attempt(server.url);
        if (bin === 'bulkhead-ladder') {
          // The ladder's own tokens stay required on /mcp: --no-auth only drops the kept one.
          expect(open).toEqual(UNAUTHORIZED);
          expect(server.stdout).toContain("\nbearer tokens: the server's own bearer tokens only (--no-auth turned off the kept token)\n");
        } else {
          expect(open.status).toBe(200);
          const client = await connectHttp(server.url);
          expect((await client.listTools()).tools).toBeInstanceOf(Array);
          await client.close();
          expect(server.stdout).toContain('\nno bearer token (--no-auth): every process on this machine can call these tools\n');
          expect(server.stdout).toContain(`claude mcp add --transport http ${bin} ${server.url}\n`);
          expect(server.stdout).not.toContain('BULKHEAD_AUTH');
        }
        expect(keptTokens(folder)).toEqual([]);
      } finally {
        await server.close();
      }
    });
  }
});

describe('the gateway with tokens: in bulkhead.yaml', () => {
  it('asks for those tokens alone and makes none, and refuses --no-auth beside them', async () => {
    const folder = emptyFolder();
    const token = 'a-token-of-bulkhead-yaml-0123456789';
    spawnSync('mkdir', ['-p', join(folder, '.bulkhead')]);
    writeFileSync(join(folder, '.bulkhead', 'team.token'), `${token}\n`, { mode: 0o600 });
    writeFileSync(join(folder, '.bulkhead', 'bulkhead.yaml'), 'servers:\n  fs: {}\ntokens:\n  - file: team.token\n');
    const gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', folder], cwd: folder, headers: { authorization: `Bearer ${token}` } });
    try {
      expect(gateway.token).toBeUndefined();
      expect(gateway.stdout()).toContain('\nbearer tokens: the tokens: of bulkhead.yaml, each opening its profile\n');
      expect(gateway.stdout()).toContain('"BULKHEAD_AUTH": "Bearer <a token of the tokens: in bulkhead.yaml>"');
      expect(keptTokens(folder)).toEqual([]);
      expect(await attempt(gateway.url)).toEqual(UNAUTHORIZED);
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toContain('fs__read_file');
    } finally {
      await gateway.close();
    }
    const refused = spawnSync(process.execPath, [GATEWAY_CLI, 'start', '--root', folder, '--http', '127.0.0.1:0', '--no-auth'], { cwd: folder, encoding: 'utf8', timeout: 20_000 });
    expect({ status: refused.status, stdout: refused.stdout, stderr: refused.stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr: 'bulkhead: --no-auth cannot turn off the tokens: of bulkhead.yaml; remove them there, or leave out --no-auth (see `bulkhead help start`)\n',
    });
  });
});

describe('the token file is out of the compartments’ reach', () => {
  it('is refused to fs__read_file and listed by neither grep nor glob, through the gateway over HTTP', async () => {
    const folder = emptyFolder();
    writeFileSync(join(folder, 'notes.txt'), 'nothing secret\n');
    const gateway = await start(GATEWAY_CLI, ['start'], folder);
    try {
      const token = gateway.token!;
      const read = await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: '.bulkhead/keys/bulkhead.http.token' } });
      expect(read.isError).toBe(true);
      expect(text(read)).toBe(".bulkhead/keys/bulkhead.http.token is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read");
      const absolute = await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: join(folder, '.bulkhead', 'keys', 'bulkhead.http.token') } });
      expect(absolute.isError).toBe(true);
      expect(text(absolute)).not.toContain(token);
      // A pattern that matches the token without holding it: the audit log keeps every pattern searched for.
      const probe = `${token.slice(0, 6)}[${token[6]}]${token.slice(7, 12)}`;
      for (const path of [undefined, '.bulkhead']) {
        const grep = await gateway.client.callTool({ name: 'fs__grep', arguments: { pattern: probe, hidden: true, ...(path ? { path } : {}) } });
        expect(text(grep), path).toBe(`No matches for "${probe}" in ${path ?? 'the root'}.`);
      }
      for (const path of ['.bulkhead/keys', '.bulkhead/keys/bulkhead.http.token']) {
        const named = await gateway.client.callTool({ name: 'fs__grep', arguments: { pattern: probe, hidden: true, path } });
        expect(named.isError, path).toBe(true);
        expect(text(named), path).toBe(`${path} is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read`);
      }
      for (const pattern of ['**/*', '**/*.token', '.bulkhead/**']) {
        const glob = await gateway.client.callTool({ name: 'fs__glob_files', arguments: { pattern, hidden: true, include_ignored: true } });
        expect(text(glob), pattern).not.toContain('http.token');
      }
      const keys = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fs__list_files', arguments: { path: '.bulkhead/keys' } } });
      expect(keys.isError).toBe(true);
      expect(text(keys)).toBe(".bulkhead/keys is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read");
    } finally {
      await gateway.close();
    }
  });
});
