import { request as httpRequest } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalStore, consoleSecretFile, runningConsoles, type NewApproval } from '@bulkhead/core';
import { startHttpServer, startStdioServer, tempWorkspace, type HttpServerProcess, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { consoleLink } from './console-browser.js';
import { GATEWAY_CLI } from './helpers.js';

/**
 * Every refusal of the console, tried the way an attacker would: no or wrong credentials (the
 * MCP bearer token among them), a rebinding Host, a foreign Origin, a cross-site form, a missing
 * or stolen csrf field; and that the console's own credentials do not open /mcp.
 */

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One raw HTTP request (node:http, so that Host and Origin are exactly what the test says). */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};
const REFUSED = {
  host: 'Refused: this console answers only at its own address (the Host header names another).\n',
  origin: 'Refused: the request comes from another origin than this console.\n',
  crossSite: 'Refused: a form of another site cannot post to this console (Sec-Fetch-Site).\n',
  csrf: "Refused: the form's csrf field is missing or wrong; reload the page and try again.\n",
};

function expectSecurityHeaders(answer: Answer): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(answer.headers[name], name).toBe(value);
}

function expectLoginPage(answer: Answer, title = 'Log in to the Bulkhead console'): void {
  expect(answer.status).toBe(401);
  expect(answer.headers['content-type']).toBe('text/html; charset=UTF-8');
  expect(answer.headers['www-authenticate']).toBe('Bearer realm="bulkhead console"');
  expect(answer.body).toContain(`<h1>${title}</h1>`);
  expect(answer.body).toContain('Open the console with <code>bulkhead console</code> in a terminal');
  expectSecurityHeaders(answer);
}

const approval = (tool: string): NewApproval => ({
  server: 'gateway',
  pid: process.pid,
  tool,
  caller: 'attacker-test',
  callSha256: 'ab'.repeat(32),
  args: { path: 'x.txt' },
  prompt: `Allow ${tool}?`,
  rest: [],
  reason: `${tool} is medium risk and autonomy is supervised`,
  offers: ['once', 'session', 'always', 'deny'],
});

/** A browser session as `bulkhead console` opens one: the cookie the login link sets, and the csrf field of the page. */
async function session(controlDir: string): Promise<{ cookie: string; csrf: string; url: string }> {
  const link = await consoleLink(controlDir);
  const login = await send(link.link);
  expect(login.status).toBe(303);
  // The console's own base path, which the cookie is scoped to: no other listener on 127.0.0.1 is sent it.
  const base = /^\/console\/[A-Za-z0-9_-]{22}$/.exec(new URL(link.link).pathname.replace(/\/login$/, ''))?.[0];
  expect(base).toBeDefined();
  expect(login.headers['location']).toBe(`${base}/`);
  const setCookie = String(login.headers['set-cookie']);
  expect(setCookie).toMatch(new RegExp(`^bulkhead_console_\\d+=[A-Za-z0-9_-]{43}; Path=${base}; HttpOnly; SameSite=Strict; Max-Age=43200$`));
  const cookie = setCookie.split(';')[0]!;
  const page = await send(link.url, { headers: { cookie } });
  expect(page.status).toBe(200);
  const csrf = /name="csrf" value="([A-Za-z0-9_-]{43})"/.exec(page.body)?.[1];
  return { cookie, csrf: csrf ?? '', url: link.url };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

describe('the console on a port of its own (a stdio gateway)', () => {
  let ws: TempWorkspace;
  let gateway: ServerProcess;
  let controlDir: string;
  let store: ApprovalStore;
  /** The console's own address, where a logged-in browser works (its base path is in keys/consoles/ only). */
  let url: string;
  /** The address the banner and the model's replies show: /console/, which opens no session. */
  let publicUrl: string;
  let host: string;
  let browser: { cookie: string; csrf: string };

  beforeAll(async () => {
    ws = tempWorkspace({});
    controlDir = join(ws.root, '.bulkhead');
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
    for (let i = 0; i < 100 && !/console: http/.test(gateway.stderr()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    publicUrl = /console: (http:\/\/127\.0\.0\.1:\d+\/console\/)/.exec(gateway.stderr())![1]!;
    url = new URL(runningConsoles(controlDir)[0]!.path, publicUrl).href;
    host = new URL(url).host;
    store = new ApprovalStore(controlDir);
    // Pages render pending approvals, so one must exist for the csrf field to be on the page.
    store.create(approval('fs_write:edit_file'));
    browser = await session(controlDir);
  });
  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  const decide = (id: string, headers: Record<string, string>, fields: Record<string, string> = {}) =>
    send(`${url}approvals/decide`, { method: 'POST', headers: { 'content-type': FORM, ...headers }, body: form({ id, decision: 'once', ...fields }) });

  it('keeps its secret out of the banner, 0600 in the 0700 keys folder', () => {
    const secret = readFileSync(consoleSecretFile(controlDir), 'utf8').trim();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(gateway.stderr()).not.toContain(secret);
    expect(statSync(consoleSecretFile(controlDir)).mode & 0o777).toBe(0o600);
    expect(statSync(join(controlDir, 'keys')).mode & 0o777).toBe(0o700);
    expect(runningConsoles(controlDir).map((entry) => [entry.url, entry.server])).toEqual([[publicUrl, 'bulkhead gateway']]);
    expect(gateway.stderr()).not.toContain(runningConsoles(controlDir)[0]!.path);
  });

  it('answers no credentials, a wrong secret, a made-up cookie and a used login link with the login page', async () => {
    const secret = readFileSync(consoleSecretFile(controlDir), 'utf8').trim();
    const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${secret.slice(0, -1)}x` }, { authorization: 'Basic YTpi' }, { cookie: `bulkhead_console_${new URL(url).port}=${'A'.repeat(43)}` }];
    for (const headers of attempts) {
      const answer = await send(url, { headers });
      expectLoginPage(answer);
      expect(answer.body).toContain('This browser is not logged in to the console');
      expect(answer.body).not.toContain(secret);
      expect(answer.body).not.toContain(controlDir);
    }
    // The live-update stream and the actions are behind the same check, before anything else is looked at.
    expectLoginPage(await send(`${url}events`));
    expectLoginPage(await send(`${url}approvals/decide`, { method: 'POST', headers: { 'content-type': FORM }, body: form({ id: 'x', decision: 'once' }) }));
    expectLoginPage(await send(`${url}no-such-page`));
    const script = await send(`${url}console.js`);
    expect([script.status, script.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect(script.body).not.toContain(secret);
    const link = await consoleLink(controlDir);
    expect((await send(link.link)).status).toBe(303);
    const again = await send(link.link);
    expectLoginPage(again, 'This login link does not work');
    expect(again.body).toContain('This login link was used already, has expired (a link works once, within a minute) or was not made by bulkhead console.');
    expect(again.headers['set-cookie']).toBeUndefined();
    // A wrong Authorization header is refused even beside a good cookie: a bad credential is never ignored.
    expectLoginPage(await send(url, { headers: { cookie: browser.cookie, authorization: 'Bearer nope' } }));
  });

  it('opens with the secret as a bearer token, and with the session cookie', async () => {
    const secret = readFileSync(consoleSecretFile(controlDir), 'utf8').trim();
    const bySecret = await send(url, { headers: { authorization: `Bearer ${secret}` } });
    expect(bySecret.status).toBe(200);
    expect(bySecret.body).toContain('<h1>Approvals</h1>');
    expectSecurityHeaders(bySecret);
    expect((await send(url, { headers: { cookie: browser.cookie } })).status).toBe(200);
    // The session works under the console's own base path only, where its cookie is scoped.
    expectLoginPage(await send(publicUrl, { headers: { cookie: browser.cookie } }));
    expectLoginPage(await send(`${publicUrl}activity`, { headers: { cookie: browser.cookie } }));
    expect((await send(`${publicUrl}activity`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
  });

  it('streams a changed event when an approval is opened, on its live-update stream', async () => {
    const target = new URL(`${url}events`);
    const received = await new Promise<{ type: string | undefined; text: string }>((resolve, reject) => {
      const req = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, headers: { cookie: browser.cookie } }, (res) => {
        let text = '';
        let opened = false;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          // Opened once the stream said it is ready: what comes next is news.
          if (text.includes('event: ready') && !opened) {
            opened = true;
            store.create(approval('fs_write:multi_edit'));
          }
          if (text.includes('event: changed')) {
            req.destroy();
            resolve({ type: res.headers['content-type'], text });
          }
        });
      });
      req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
      req.end();
    });
    expect(received.type).toBe('text/event-stream');
    expect(received.text.startsWith('event: ready\ndata: 0\nretry: 3000\n\n')).toBe(true);
    expect(received.text).toContain('event: changed\ndata: 1\n\n');
  });

  it('refuses a Host other than its own (DNS rebinding), with the right cookie too', async () => {
    for (const name of ['evil.example', `evil.example:${new URL(url).port}`, `localhost:${new URL(url).port}`, '127.0.0.1', `127.0.0.1:1`]) {
      const answer = await send(url, { headers: { host: name, cookie: browser.cookie } });
      expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 421, body: REFUSED.host });
      expectSecurityHeaders(answer);
    }
  });

  it('refuses a foreign Origin, a cross-site form and a missing or stolen csrf field, and decides nothing', async () => {
    const id = store.create(approval('fs_write:delete_path')).id;
    const other = await session(controlDir);
    const refusals: [Record<string, string>, Record<string, string>, number, string][] = [
      [{ origin: 'http://evil.example' }, { csrf: browser.csrf }, 403, REFUSED.origin],
      [{ origin: 'http://127.0.0.1:1' }, { csrf: browser.csrf }, 403, REFUSED.origin],
      [{ origin: `https://${host}` }, { csrf: browser.csrf }, 403, REFUSED.origin],
      [{ origin: 'null' }, { csrf: browser.csrf }, 403, REFUSED.origin],
      [{ origin: 'null', 'sec-fetch-site': 'cross-site' }, { csrf: browser.csrf }, 403, REFUSED.origin],
      [{ 'sec-fetch-site': 'cross-site' }, { csrf: browser.csrf }, 403, REFUSED.crossSite],
      // Another port of 127.0.0.1 is the same site: only the console's own origin may post.
      [{ 'sec-fetch-site': 'same-site' }, { csrf: browser.csrf }, 403, REFUSED.crossSite],
      [{ 'sec-fetch-site': 'none' }, { csrf: browser.csrf }, 403, REFUSED.crossSite],
      [{}, {}, 403, REFUSED.csrf],
      [{}, { csrf: '' }, 403, REFUSED.csrf],
      [{}, { csrf: `${browser.csrf.slice(0, -1)}x` }, 403, REFUSED.csrf],
      [{}, { csrf: other.csrf }, 403, REFUSED.csrf],
      [{ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }, { csrf: other.csrf }, 403, REFUSED.csrf],
    ];
    for (const [headers, fields, status, body] of refusals) {
      const answer = await decide(id, { cookie: browser.cookie, ...headers }, fields);
      expect({ headers, fields, status: answer.status, body: answer.body }).toEqual({ headers, fields, status, body });
      expectSecurityHeaders(answer);
    }
    expect(store.get(id)?.decision).toBeUndefined();

    // The browser's own form, as Chromium sends it under Referrer-Policy no-referrer, is taken.
    const taken = await decide(id, { cookie: browser.cookie, origin: 'null', 'sec-fetch-site': 'same-origin' }, { csrf: browser.csrf });
    expect(taken.status).toBe(303);
    expect(taken.headers['location']).toMatch(new RegExp(`^${new URL(url).pathname}\\?outcome=[A-Za-z0-9_-]+$`));
    expect(store.get(id)?.decision).toMatchObject({ decision: 'once', by: 'the Bulkhead console (127.0.0.1)' });
    const shown = await send(`http://${host}${taken.headers['location']}`, { headers: { cookie: browser.cookie } });
    expect(shown.body).toContain(`<p class="outcome ok" role="status">Allowed once: fs_write:delete_path (${id}).</p>`);
    // The outcome belongs to the session that acted: another browser does not see it.
    const elsewhere = await send(`http://${host}${taken.headers['location']}`, { headers: { cookie: other.cookie } });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).not.toContain('class="outcome');
  });

  it('shows a refusal of the store (decided already, unknown id) as the outcome, not a crash', async () => {
    const id = store.create(approval('fs_write:move_path')).id;
    store.decide(id, 'deny', 'bulkhead approvals (user test)');
    const again = await decide(id, { cookie: browser.cookie }, { csrf: browser.csrf });
    expect(again.status).toBe(303);
    const shown = await send(`http://${host}${again.headers['location']}`, { headers: { cookie: browser.cookie } });
    expect(shown.body).toMatch(/<p class="outcome refused" role="status">Not decided: [^<]+<\/p>/);
    expect(store.get(id)?.decision).toMatchObject({ decision: 'deny', by: 'bulkhead approvals (user test)' });
    const unknown = await decide('zzzzzzzz', { cookie: browser.cookie }, { csrf: browser.csrf });
    const unknownShown = await send(`http://${host}${unknown.headers['location']}`, { headers: { cookie: browser.cookie } });
    expect(unknownShown.body).toMatch(/<p class="outcome refused" role="status">Not decided: [^<]+<\/p>/);
    const badDecision = await decide(id, { cookie: browser.cookie }, { csrf: browser.csrf, decision: 'everything' });
    const badShown = await send(`http://${host}${badDecision.headers['location']}`, { headers: { cookie: browser.cookie } });
    expect(badShown.body).toContain('<p class="outcome refused" role="status">Not decided: decision: Invalid option: expected one of &quot;once&quot;|&quot;session&quot;|&quot;always&quot;|&quot;deny&quot;</p>');
  });

  it('takes a script with the secret without a csrf field (no browser sends that header by itself)', async () => {
    const secret = readFileSync(consoleSecretFile(controlDir), 'utf8').trim();
    const id = store.create(approval('fs_write:create_directory')).id;
    const answer = await decide(id, { authorization: `Bearer ${secret}` }, { decision: 'deny' });
    expect(answer.status).toBe(303);
    expect(store.get(id)?.decision).toMatchObject({ decision: 'deny', by: 'the Bulkhead console (127.0.0.1)' });
  });

  it('bounds forms: too big, not a form, another method', async () => {
    const big = await send(`${url}approvals/decide`, { method: 'POST', headers: { 'content-type': FORM, cookie: browser.cookie }, body: `csrf=${browser.csrf}&id=${'a'.repeat(70_000)}` });
    expect([big.status, big.body]).toEqual([413, 'Refused: a console form is at most 65536 bytes.\n']);
    const json = await send(`${url}approvals/decide`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: browser.cookie }, body: '{}' });
    expect([json.status, json.body]).toEqual([415, 'Refused: console forms are sent as application/x-www-form-urlencoded.\n']);
    const put = await send(`${url}approvals/decide`, { method: 'PUT', headers: { cookie: browser.cookie } });
    expect([put.status, put.body]).toEqual([405, 'Refused: the console answers GET and POST only.\n']);
  });
});

describe('the console on the port of an HTTP gateway', () => {
  let ws: TempWorkspace;
  let gateway: HttpServerProcess;
  let controlDir: string;
  let consoleUrl: string;
  let ownUrl: string;

  beforeAll(async () => {
    ws = tempWorkspace({});
    controlDir = join(ws.root, '.bulkhead');
    gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
    consoleUrl = gateway.url.replace(/\/mcp$/, '/console/');
    ownUrl = new URL(runningConsoles(controlDir)[0]!.path, consoleUrl).href;
  });
  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  it('is announced in the banner and registered, without its secret', () => {
    expect(gateway.stdout()).toContain(`console: ${consoleUrl} (open it with \`bulkhead console\`)\n`);
    const secret = readFileSync(consoleSecretFile(controlDir), 'utf8').trim();
    expect(gateway.stdout()).not.toContain(secret);
    expect(runningConsoles(controlDir).map((entry) => entry.url)).toEqual([consoleUrl]);
  });

  it('does not open with the MCP bearer token, and its own credentials do not open /mcp', async () => {
    expect(gateway.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expectLoginPage(await send(consoleUrl, { headers: { authorization: `Bearer ${gateway.token}` } }));

    const secret = readFileSync(consoleSecretFile(controlDir), 'utf8').trim();
    const { cookie } = await session(controlDir);
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const consoleCredentials: Record<string, string>[] = [{ authorization: `Bearer ${secret}` }, { cookie }];
    for (const headers of consoleCredentials) {
      const answer = await send(gateway.url, { method: 'POST', headers: { ...mcpHeaders, ...headers }, body: initialize });
      expect([answer.status, JSON.parse(answer.body)]).toEqual([401, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'missing, wrong or revoked bearer token' } }]);
    }
    // And the MCP token still opens /mcp: the console took nothing from it.
    expect((await send(gateway.url, { method: 'POST', headers: { ...mcpHeaders, authorization: `Bearer ${gateway.token}` }, body: initialize })).status).toBe(200);
  });

  it('refuses a rebinding Host and a foreign Origin before the console sees them, and another loopback name after', async () => {
    const { cookie } = await session(controlDir);
    const port = new URL(ownUrl).port;
    const rebound = await send(ownUrl, { headers: { host: `evil.example:${port}`, cookie } });
    expect([rebound.status, JSON.parse(rebound.body).error.message]).toEqual([403, `Host header "evil.example:${port}" is not allowed (DNS-rebinding protection)`]);
    const foreign = await send(ownUrl, { headers: { origin: 'http://evil.example', cookie } });
    expect([foreign.status, JSON.parse(foreign.body).error.message]).toEqual([403, 'Origin http://evil.example is not allowed (DNS-rebinding protection); add it with --allow-origin']);
    // localhost is a name the MCP endpoint answers to, but not the console's own address.
    const otherName = await send(ownUrl, { headers: { host: `localhost:${port}`, cookie } });
    expect([otherName.status, otherName.body]).toEqual([421, REFUSED.host]);
    expect((await send(ownUrl, { headers: { cookie } })).status).toBe(200);
    expect((await send(gateway.url.replace(/\/mcp$/, '/healthz'))).body).toBe('ok\n');
  });

  it('is gone from the registry when the gateway stops, and bulkhead console then serves one itself', async () => {
    await gateway.close();
    expect(runningConsoles(controlDir)).toEqual([]);
    const store = new ApprovalStore(controlDir);
    const id = store.create(approval('fs_write:write_file')).id;
    const alone = await consoleLink(controlDir);
    try {
      expect(alone.stderr()).toMatch(/^bulkhead: no gateway is running for .*; serving its console at http:\/\/127\.0\.0\.1:\d+\/console\/ until Ctrl-C \(approvals, activity, trash and policy work; live gateway data needs a running gateway\)\n$/);
      expect(runningConsoles(controlDir).map((entry) => [new URL(entry.path, entry.url).href, entry.server])).toEqual([[alone.url, 'bulkhead console']]);
      const login = await send(alone.link);
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const page = await send(alone.url, { headers: { cookie } });
      expect(page.body).toContain(`data-approval="${id}"`);
      expect(page.body).toContain('no gateway is running, so live gateway data (servers, their tools) is not shown.');
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const decided = await send(`${alone.url}approvals/decide`, { method: 'POST', headers: { 'content-type': FORM, cookie }, body: form({ csrf, id, decision: 'once' }) });
      expect(decided.status).toBe(303);
      expect(store.get(id)?.decision).toMatchObject({ decision: 'once', by: 'the Bulkhead console (127.0.0.1)' });
    } finally {
      await alone.stop();
    }
    expect(runningConsoles(controlDir)).toEqual([]);
  });
});
