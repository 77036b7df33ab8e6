import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auditPolicySchema, createToolServer, defineTool, PermissionGate, principalOf, serveHttp, serverPolicySchema, textReply, type RunningHttp } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const ping = defineTool<object, z.ZodObject>({
  name: 'ping',
  title: 'Ping',
  description: 'Answers pong, to prove the server still serves.',
  input: z.strictObject({ pad: z.string().optional().describe('ignored padding') }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async () => textReply('pong'),
});

const TOKEN = 'a-very-secret-token-0123456789';
let ws: TempWorkspace;
let running: RunningHttp | undefined;
const clients: Client[] = [];

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await running?.close();
  running = undefined;
  ws?.cleanup();
});

function demoServer() {
  ws = tempWorkspace();
  return createToolServer<object>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [ping],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: {},
    controlDir: ws.path('.bulkhead'),
    gate: { kind: 'gateway' },
    audit: auditPolicySchema.parse({ enabled: false }),
    limits: { maxOutputBytes: 0 },
  });
}

/** In-process, most guards are tried without a token (`noAuth`); the CLI's tokens are tried end to end. */
async function start(options: { token?: string; maxBodyBytes?: number; allowedOrigins?: string[]; sessionIdleMs?: number } = {}) {
  running = await serveHttp(demoServer(), { host: '127.0.0.1', port: 0, noAuth: options.token === undefined, ...options });
  return running;
}

async function connect(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined));
  clients.push(client);
  return client;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function post(url: string, headers: Record<string, string> = {}, body = INITIALIZE) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

async function errorOf(response: Response): Promise<string> {
  const body = (await response.json()) as { error: { message: string } };
  return body.error.message;
}

async function stillServes(url: string, headers?: Record<string, string>) {
  const client = await connect(url, headers);
  const result = await client.callTool({ name: 'ping', arguments: {} });
  expect((result.content as { text: string }[])[0]!.text).toBe('pong');
}

describe('Streamable HTTP guards', () => {
  it('serves MCP at /mcp on 127.0.0.1', async () => {
    const { url } = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await stillServes(url);
  });

  it('refuses a foreign Origin with 403 and keeps serving', async () => {
    const { url } = await start();
    const response = await post(url, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect((await errorOf(response))).toBe('Origin https://evil.example is not allowed (DNS-rebinding protection); add it with --allow-origin');
    const local = await post(url, { origin: new URL(url).origin });
    expect(local.status).toBe(200);
    await stillServes(url);
  });

  it('accepts an Origin that was allowed explicitly', async () => {
    const { url } = await start({ allowedOrigins: ['https://inspector.example'] });
    expect((await post(url, { origin: 'https://inspector.example' })).status).toBe(200);
  });

  it('refuses a wrong Host with 403 (DNS rebinding)', async () => {
    const { url, port } = await start();
    // fetch cannot override Host, so this request is made with node:http
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host: `attacker.example:${port}`, 'content-type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end(INITIALIZE);
    });
    expect(status.status).toBe(403);
    expect(JSON.parse(status.body).error.message).toBe(`Host header "attacker.example:${port}" is not allowed (DNS-rebinding protection)`);
    await stillServes(url);
  });

  it('requires the bearer token when one is configured', async () => {
    const { url } = await start({ token: TOKEN });
    const missing = await post(url);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await errorOf(missing))).toBe('missing, wrong or revoked bearer token');
    expect((await post(url, { authorization: 'Bearer wrong-token' })).status).toBe(401);
    expect((await post(url, { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    await stillServes(url, { authorization: `Bearer ${TOKEN}` });
  });

  it('refuses to bind beyond loopback without a token, noAuth or not', async () => {
    for (const noAuth of [false, true]) {
      await expect(serveHttp(demoServer(), { host: '0.0.0.0', port: 0, noAuth })).rejects.toThrow(
        'binding to 0.0.0.0 exposes the server beyond this machine; give --token-file FILE so clients must present a bearer token',
      );
      ws.cleanup();
    }
  });

  it('refuses to serve loopback without a token unless noAuth says so', async () => {
    await expect(serveHttp(demoServer(), { host: '127.0.0.1', port: 0 })).rejects.toThrow(
      'serving HTTP needs a bearer token (token or tokens), or noAuth: true (--no-auth) to serve loopback without one',
    );
  });

  it('refuses an oversized body with 413, by header and by stream', async () => {
    const { url } = await start({ maxBodyBytes: 2048 });
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(5000) } });
    const declared = await post(url, {}, big);
    expect(declared.status).toBe(413);
    expect((await errorOf(declared))).toBe(`request body is ${Buffer.byteLength(big)} bytes; the limit is 2048`);
    const chunked = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await errorOf(chunked))).toBe('request body exceeds the limit of 2048 bytes');
    await stillServes(url);
  });

  it('closes a session that stays idle, and the client can start a new one', async () => {
    const { url } = await start({ sessionIdleMs: 200 });
    const init = await post(url);
    const sessionId = init.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    await new Promise((resolve) => setTimeout(resolve, 800));
    const expired = await post(url, headers, list);
    expect(expired.status).toBe(404);
    expect((await errorOf(expired))).toBe('unknown or expired session; start a new one with initialize');
    await stillServes(url);
  });

  it('answers unknown sessions with 404 and other paths with 404', async () => {
    const { url } = await start();
    const unknown = await post(url, { 'mcp-session-id': 'nope' }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'unknown or expired session; start a new one with initialize' } });
    expect((await fetch(url.replace('/mcp', '/other'))).status).toBe(404);
    await stillServes(url);
  });
});

/** POSTs raw bytes (fetch would re-encode a string) and returns the status and the JSON body. */
async function postBytes(url: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; body: unknown }> {
  const response = await post(url, headers, body as string);
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
}

const refusal = (code: number, message: string, id: string | number | null = null) => ({ status: 400, type: 'application/json', body: { jsonrpc: '2.0', id, error: { code, message } } });
const NOT_JSON = refusal(-32700, 'Parse error: the message is not valid JSON');
const BATCH = refusal(-32600, 'Invalid Request: batches are not supported: send one JSON-RPC message at a time (MCP removed batching in revision 2025-06-18)');
const NOT_UTF8 = refusal(-32700, 'Parse error: the body is not valid UTF-8');

describe('one JSON-RPC message per POST, every invalid one answered', () => {
  it('refuses a batch, whether it opens a session or arrives in one, and runs none of it', async () => {
    const { url } = await start();
    expect(await postBytes(url, `[${INITIALIZE}]`)).toEqual(BATCH);
    expect(await postBytes(url, ` \n [${INITIALIZE}, ${INITIALIZE}]`)).toEqual(BATCH);
    expect(await postBytes(url, '[]')).toEqual(BATCH);
    const init = await post(url);
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ping', arguments: {} } });
    expect(await postBytes(url, JSON.stringify([call(2), call(3)]), session)).toEqual(BATCH);
    await stillServes(url);
  });

  it('refuses a body that is not strict UTF-8: an invalid byte, an overlong encoding, an encoded surrogate, a cut sequence', async () => {
    const { url } = await start();
    const [head, tail] = INITIALIZE.split('raw');
    const bodies = [[0xff], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]].map((bytes) => Buffer.concat([Buffer.from(`${head}`), Buffer.from(bytes), Buffer.from(`${tail}`)]));
    for (const body of bodies) expect(await postBytes(url, body), body.toString('hex')).toEqual(NOT_UTF8);
    await stillServes(url);
  });

  it('refuses a body that starts with a byte order mark, an empty body and a JSON scalar', async () => {
    const { url } = await start();
    expect(await postBytes(url, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(INITIALIZE)]))).toEqual(refusal(-32700, 'Parse error: the body starts with a UTF-8 byte order mark, which JSON text must not'));
    expect(await postBytes(url, '')).toEqual(NOT_JSON);
    expect(await postBytes(url, '{not json')).toEqual(NOT_JSON);
    expect(await postBytes(url, '42')).toEqual(refusal(-32600, 'Invalid Request: a JSON-RPC message is an object, not number'));
    expect(await postBytes(url, '"initialize"')).toEqual(refusal(-32600, 'Invalid Request: a JSON-RPC message is an object, not string'));
    expect(await postBytes(url, 'null')).toEqual(refusal(-32600, 'Invalid Request: a JSON-RPC message is an object, not null'));
    await stillServes(url);
  });

  it('answers an invalid request with its id, in a session and before one', async () => {
    const { url } = await start();
    const bad = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":null}`;
    const PARAMS = 'Invalid Request: "params" must be an object when present';
    expect(await postBytes(url, bad('7'))).toEqual(refusal(-32600, PARAMS, 7));
    const init = await post(url);
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    expect(await postBytes(url, bad('"s-1"'), session)).toEqual(refusal(-32600, PARAMS, 's-1'));
    // The id as written: a client that reads 12345678901234567890 exactly gets it back exactly.
    const huge = await post(url, session, '{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/list"}');
    expect(huge.status).toBe(400);
    expect(await huge.text()).toBe(`{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32600,"message":"Invalid Request: ${ID_RULE}"}}`);
    expect(await postBytes(url, '{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}', session)).toEqual(refusal(-32600, `Invalid Request: ${ID_RULE}`));
    // A notification gets no JSON-RPC answer; HTTP still needs a status, and 400 says it was not taken.
    expect(await postBytes(url, '{"jsonrpc":"2.0","method":"notifications/initialized","params":null}', session)).toEqual(refusal(-32600, PARAMS));
    await stillServes(url);
  });

  it('takes a lone surrogate escape as the valid JSON it is, and a chunked body within the limit', async () => {
    const { url } = await start({ maxBodyBytes: 4096 });
    const client = await connect(url);
    const result = await client.callTool({ name: 'ping', arguments: { pad: '\ud800' } });
    expect((result.content as { text: string }[])[0]!.text).toBe('pong');
    const chunked = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: new ReadableStream({
        start(controller) {
          for (const piece of [INITIALIZE.slice(0, 10), INITIALIZE.slice(10)]) controller.enqueue(new TextEncoder().encode(piece));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(200);
    expect(chunked.headers.get('mcp-session-id')).toBeTruthy();
  });
});

const ID_RULE = 'the id must be a string or an integer from -(2^53-1) to 2^53-1 (not -0)';

const whoami = defineTool<object, z.ZodObject>({
  name: 'whoami',
  title: 'Who am I',
  description: 'Answers the principal the transport authenticated.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (_args, ctx) => textReply(`${ctx.principal ?? 'nobody'}${ctx.routeParams['place'] ? ` at ${ctx.routeParams['place']}` : ''}`),
});

const touch = defineTool<object, z.ZodObject>({
  name: 'touch',
  title: 'Touch',
  description: 'A medium-risk tool the default permissions ask about.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'medium',
  run: async () => textReply('touched'),
});

const DYNAMIC_TOKENS = new Map([['dynamic-token-of-zoe-0123', 'zoe']]);

/** A server whose own route runs calls through its chain, and whose tokens are looked up on each request. */
function serverWithRoute(routePrefix = '/api/') {
  ws = tempWorkspace();
  return createToolServer<object>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [whoami, touch],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: {},
    controlDir: ws.path('.bulkhead'),
    gate: { kind: 'self', permissions: PermissionGate.load(ws.path('.bulkhead')) },
    audit: auditPolicySchema.parse({ enabled: false }),
    limits: { maxOutputBytes: 0 },
    http: (call) => ({
      verifyToken: async (token) => DYNAMIC_TOKENS.get(token),
      routes: [
        {
          pathPrefix: routePrefix,
          describe: (base) => `demo API at ${base}${routePrefix}`,
          handle: async (req, res, caller) => {
            const tool = new URL(req.url ?? '/', 'http://x').pathname.slice(routePrefix.length);
            const principal = principalOf(caller.auth);
            const outcome = await call(tool, {}, { caller: 'demo-route', principal: principal ?? 'route-user', routeParams: { place: 'the route' } });
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...outcome, principal: principal ?? null, label: caller.auth?.token ?? null, presented: caller.presentedCredentials }));
          },
        },
      ],
    }),
  });
}

async function textOf(client: Client, name: string): Promise<string> {
  const result = await client.callTool({ name, arguments: {} });
  return (result.content as { text: string }[])[0]!.text;
}

describe('a server’s own HTTP routes and bearer tokens', () => {
  it('tells tools the principal of a verified token, and nobody for the --token-file token', async () => {
    running = await serveHttp(serverWithRoute(), { host: '127.0.0.1', port: 0, token: TOKEN });
    const zoe = await connect(running.url, { authorization: 'Bearer dynamic-token-of-zoe-0123' });
    expect(await textOf(zoe, 'whoami')).toBe('zoe');
    const operator = await connect(running.url, { authorization: `Bearer ${TOKEN}` });
    expect(await textOf(operator, 'whoami')).toBe('nobody');
  });

  it('requires a token on /mcp once the server verifies tokens, even on loopback without --token-file', async () => {
    running = await serveHttp(serverWithRoute(), { host: '127.0.0.1', port: 0 });
    const missing = await post(running.url);
    expect(missing.status).toBe(401);
    expect(await errorOf(missing)).toBe('missing, wrong or revoked bearer token');
    expect((await post(running.url, { authorization: 'Bearer dynamic-token-of-someone-else' })).status).toBe(401);
  });

  it('refuses the next request of a session whose token was revoked', async () => {
    running = await serveHttp(serverWithRoute(), { host: '127.0.0.1', port: 0 });
    DYNAMIC_TOKENS.set('short-lived-token-of-zoe', 'zoe');
    const client = await connect(running.url, { authorization: 'Bearer short-lived-token-of-zoe' });
    expect(await textOf(client, 'whoami')).toBe('zoe');
    DYNAMIC_TOKENS.delete('short-lived-token-of-zoe');
    await expect(client.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow('missing, wrong or revoked bearer token');
  });

  it('lets bind beyond loopback when tokens are verified', async () => {
    running = await serveHttp(serverWithRoute(), { host: '0.0.0.0', port: 0 });
    expect(running.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/mcp$/);
  });

  it('hands its own paths to the route, which runs calls through the audit and the gate', async () => {
    running = await serveHttp(serverWithRoute(), { host: '127.0.0.1', port: 0 });
    const base = running.url.slice(0, -'/mcp'.length);
    const ran = (await (await fetch(`${base}/api/whoami`)).json()) as { result: { content: { text: string }[] }; errorCode?: string; presented: boolean };
    expect(ran.result.content[0]!.text).toBe('route-user at the route');
    expect(ran.errorCode).toBeUndefined();
    expect(ran.presented).toBe(false);
    const unknown = (await (await fetch(`${base}/api/nope`)).json()) as { errorCode: string };
    expect(unknown.errorCode).toBe('not_found');
    // supervised autonomy asks about medium risk; a call from outside MCP has nobody to ask
    const asked = (await (await fetch(`${base}/api/touch`)).json()) as { result: { content: { text: string }[] }; errorCode: string };
    expect(asked.errorCode).toBe('denied');
    expect(asked.result.content[0]!.text).toContain('This call did not come over MCP, so nobody can be asked to confirm it, so nothing was run. To allow it: add `demo:touch` under allow:');
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  });

  it('tells the route who sent a request by the same token checks as /mcp, and that a wrong token was presented', async () => {
    running = await serveHttp(serverWithRoute(), { host: '127.0.0.1', port: 0, token: TOKEN });
    const base = running.url.slice(0, -'/mcp'.length);
    const ask = async (authorization?: string) =>
      (await (await fetch(`${base}/api/whoami`, authorization ? { headers: { authorization } } : {})).json()) as { principal: string | null; label: string | null; presented: boolean; result: { content: { text: string }[] } };
    expect(await ask('Bearer dynamic-token-of-zoe-0123')).toMatchObject({ principal: 'zoe', presented: true, result: { content: [{ text: 'zoe at the route' }] } });
    expect(await ask(`Bearer ${TOKEN}`)).toMatchObject({ principal: null, label: 'default', presented: true });
    expect(await ask('Bearer not-a-known-token')).toMatchObject({ principal: null, label: null, presented: true });
    expect(await ask()).toMatchObject({ principal: null, label: null, presented: false });
  });

  it('accepts a --token-file token holding spaces, as the whole rest of the header', async () => {
    running = await serveHttp(demoServer(), { host: '127.0.0.1', port: 0, token: 'a pass phrase of several words' });
    await stillServes(running.url, { authorization: 'Bearer a pass phrase of several words' });
    expect((await post(running.url, { authorization: 'Bearer a pass phrase' })).status).toBe(401);
  });

  it('keeps /mcp and /healthz for itself', async () => {
    await expect(serveHttp(serverWithRoute('/mc'), { host: '127.0.0.1', port: 0 })).rejects.toThrow("an HTTP route cannot take /mc: /mcp and /healthz are the server's own");
    await expect(serveHttp(serverWithRoute('/'), { host: '127.0.0.1', port: 0 })).rejects.toThrow('an HTTP route cannot take /:');
  });
});
