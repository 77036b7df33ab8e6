// The stateless mode of the Streamable HTTP transport (--stateless): no MCP sessions, each POST
// answered by a connection of its own, so several servers may stand behind one address.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  ApprovalStore,
  auditPolicySchema,
  commonUsage,
  createToolServer,
  defineTool,
  parseCommonOptions,
  PermissionGate,
  serveHttp,
  serverPolicySchema,
  STATELESS_REFUSAL,
  textReply,
  UsageError,
  type HttpOptions,
  type RunningHttp,
} from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const ping = defineTool<object, z.ZodObject>({
  name: 'ping',
  title: 'Ping',
  description: 'Answers pong, to prove the server still serves.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async () => textReply('pong'),
});

const touched: string[] = [];
const touch = defineTool<object, z.ZodObject>({
  name: 'touch',
  title: 'Touch',
  description: 'Records a name: a call the permission gate asks about.',
  input: z.strictObject({ name: z.string().describe('what to record') }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'medium',
  run: async (args) => {
    const name = String(args['name']);
    touched.push(name);
    return textReply(`touched ${name}`);
  },
});

/** What the waiting tool saw: that it started, and that its call was aborted. */
const waits: string[] = [];
const wait = defineTool<object, z.ZodObject>({
  name: 'wait',
  title: 'Wait',
  description: 'Waits until its call is aborted.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (_args, ctx) => {
    waits.push('started');
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    waits.push('aborted');
    return textReply('aborted');
  },
});

const TOKEN = 'a-very-secret-token-0123456789';
let ws: TempWorkspace;
let running: RunningHttp | undefined;
const clients: Client[] = [];

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await running?.close();
  running = undefined;
  touched.length = 0;
  waits.length = 0;
  ws?.cleanup();
});

/** A stateless server of ping and touch; with `permissions`, the server applies its own gate from that permissions.yaml. */
async function start(options: Partial<HttpOptions> & { permissions?: string } = {}): Promise<RunningHttp> {
  const { permissions, ...http } = options;
  ws = tempWorkspace(permissions === undefined ? {} : { '.bulkhead/permissions.yaml': permissions });
  const controlDir = ws.path('.bulkhead');
  const server = createToolServer<object>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [ping, touch, wait],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: {},
    controlDir,
    gate: permissions === undefined ? { kind: 'gateway' } : { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({ enabled: false }),
    limits: { maxOutputBytes: 0 },
  });
  running = await serveHttp(server, { host: '127.0.0.1', port: 0, noAuth: http.token === undefined, stateless: true, ...http });
  return running;
}

/** An SDK client that declares elicitation, and records every question the server puts to it. */
async function connect(url: string, headers?: Record<string, string>) {
  const asked: string[] = [];
  const notices: string[] = [];
  const client = new Client({ name: 'stateless-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { decision: 'once' } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void notices.push(String(notification.params.data)));
  const transport = new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined);
  await client.connect(transport);
  clients.push(client);
  return { client, transport, asked, notices };
}

const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((c) => c.text).join('\n');
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const CALL_PING = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ping', arguments: {} } });

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers }, body });
}

/** The JSON-RPC messages of a response, whether the SDK answered with JSON or with an SSE stream. */
async function messagesOf(response: Response): Promise<unknown[]> {
  const body = await response.text();
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
  }
  return [JSON.parse(body) as unknown];
}

describe('a stateless Streamable HTTP server', () => {
  it('issues no session and answers every POST alone, a tools/call with no initialize before it included', async () => {
    const { url } = await start();
    const initialized = await post(url, INITIALIZE);
    expect(initialized.status).toBe(200);
    expect(initialized.headers.get('mcp-session-id')).toBeNull();
    expect(await messagesOf(initialized)).toMatchObject([{ id: 1, result: { serverInfo: { name: 'bulkhead-demo' } } }]);
    // As if a load balancer had sent the initialize to another server: this connection never saw it.
    const called = await post(url, CALL_PING);
    expect(called.status).toBe(200);
    expect(called.headers.get('mcp-session-id')).toBeNull();
    expect(await messagesOf(called)).toEqual([{ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'pong' }] } }]);
    // A session id a client kept from elsewhere names nothing here, and is not asked for.
    const withStaleSession = await post(url, CALL_PING, { 'mcp-session-id': 'from-another-server' });
    expect(await messagesOf(withStaleSession)).toMatchObject([{ id: 7, result: { content: [{ text: 'pong' }] } }]);
  });

  it('serves an SDK client, which opens no session and calls tool after tool', async () => {
    const { url } = await start();
    const { client, transport } = await connect(url);
    expect(transport.sessionId).toBeUndefined();
    for (let round = 0; round < 3; round++) expect(text(await client.callTool({ name: 'ping', arguments: {} }))).toBe('pong');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['ping', 'touch', 'wait']);
  });

  it('answers GET, DELETE and any other method with 405 and why, allowing POST only', async () => {
    const { url } = await start();
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const response = await fetch(url, { method, headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': 'whatever' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('POST');
      expect(await response.json(), method).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: STATELESS_REFUSAL } });
    }
    expect(STATELESS_REFUSAL).toBe('this server is stateless (--stateless): it keeps no MCP sessions, so there is no session stream to GET and no session to DELETE; send every message as its own POST');
  });

  it('aborts a call whose POST the client closes: its connection ends with it', async () => {
    const { url } = await start();
    const response = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'wait', arguments: {} } }));
    await expect.poll(() => waits, { timeout: 5000, interval: 10 }).toEqual(['started']);
    // The client leaves: cancelling the body closes the connection the answer would have come on.
    await response.body!.cancel();
    await expect.poll(() => waits, { timeout: 5000, interval: 10 }).toEqual(['started', 'aborted']);
  });

  it('keeps the bearer token, Origin, Host and body checks of a server with sessions', async () => {
    const { url } = await start({ token: TOKEN, maxBodyBytes: 2048 });
    const authorized = { authorization: `Bearer ${TOKEN}` };
    const wrongCredentials: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Bearer ${TOKEN}x` }];
    for (const headers of wrongCredentials) {
      const refused = await post(url, CALL_PING, headers);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(await refused.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'missing, wrong or revoked bearer token' } });
    }
    // A GET without the token is refused for the token first: nothing is said to a stranger about the server.
    expect((await fetch(url)).status).toBe(401);
    const foreign = await post(url, CALL_PING, { ...authorized, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { message: string } }).error.message).toBe('Origin https://evil.example is not allowed (DNS-rebinding protection); add it with --allow-origin');
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {}, pad: 'x'.repeat(5000) } });
    const declared = await post(url, big, authorized);
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { message: string } }).error.message).toBe(`request body is ${Buffer.byteLength(big)} bytes; the limit is 2048`);
    const streamed = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...authorized },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: { message: string } }).error.message).toBe('request body exceeds the limit of 2048 bytes');
    const batch = await post(url, `[${CALL_PING}]`, authorized);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ id: null, error: { message: 'Invalid Request: batches are not supported: send one JSON-RPC message at a time (MCP removed batching in revision 2025-06-18)' } });
    expect(await messagesOf(await post(url, CALL_PING, authorized))).toMatchObject([{ id: 7, result: { content: [{ text: 'pong' }] } }]);
  });

  it('never elicits, even from a client that declares it: an ask becomes a pending approval, without a session to allow it for', async () => {
    const { url } = await start({ permissions: 'ask:\n  - demo:touch\napproval_wait_ms: 0\n' });
    const { client, asked } = await connect(url);
    const refused = await client.callTool({ name: 'touch', arguments: { name: 'x' } });
    expect(refused.isError).toBe(true);
    const id = /\(approval ([a-z2-9]{8})\)/.exec(text(refused))?.[1];
    const controlDir = ws.path('.bulkhead');
    expect(text(refused)).toBe(
      `demo:touch is waiting for a human's approval (approval ${id}); nothing was run yet. Approve it in the Bulkhead console (run \`bulkhead console --config ${controlDir}\` to open the console) or in a terminal: bulkhead approvals allow ${id} --config ${controlDir}. Then make the same call again (same tool, same arguments): it runs without asking again.`,
    );
    expect(asked).toEqual([]);
    expect(touched).toEqual([]);
    const store = new ApprovalStore(controlDir);
    // "For the session" would be remembered by a connection that is gone with this answer: it is not offered.
    expect(store.get(id!)).toMatchObject({ tool: 'demo:touch', offers: ['once', 'deny'] });
    store.decide(id!, 'once', 'a unit test');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'x' } }))).toBe('touched x');
    expect(touched).toEqual(['x']);
    expect(asked).toEqual([]);
  });

  it('holds an ask on its POST while a human decides, telling the client why it waits', async () => {
    const { url } = await start({ permissions: 'ask:\n  - demo:touch\napproval_wait_ms: 60000\n' });
    const { client, asked, notices } = await connect(url);
    const store = new ApprovalStore(ws.path('.bulkhead'));
    const call = client.callTool({ name: 'touch', arguments: { name: 'held' } });
    await expect.poll(() => store.pending().length, { timeout: 5000, interval: 10 }).toBe(1);
    const approval = store.pending()[0]!;
    expect(approval.offers).toEqual(['once', 'deny']);
    await expect.poll(() => notices.length, { timeout: 5000, interval: 10 }).toBe(1);
    expect(notices[0]).toMatch(new RegExp(`^demo:touch waits for a human's approval \\(approval ${approval.id}\\) for up to 60 s\\. `));
    store.decide(approval.id, 'once', 'a unit test');
    expect(text(await call)).toBe('touched held');
    expect(asked).toEqual([]);
  });
});

describe('--stateless', () => {
  it('is taken with --http and refused without it, in words that say why', () => {
    ws = tempWorkspace();
    expect(parseCommonOptions(['--root', ws.root, '--http', '127.0.0.1:0', '--stateless'], ws.root).stateless).toBe(true);
    expect(parseCommonOptions(['--root', ws.root, '--http', '127.0.0.1:0'], ws.root).stateless).toBeUndefined();
    for (const argv of [['--stateless'], ['--root', ws.root, '--stateless', '--gated-by-gateway']]) {
      expect(() => parseCommonOptions(argv, ws.root)).toThrow(UsageError);
      expect(() => parseCommonOptions(argv, ws.root)).toThrow(new Error('--stateless needs --http HOST:PORT: over stdio there is one client on one connection, so there are no sessions to do without'));
    }
    expect(() => parseCommonOptions(['--http', '127.0.0.1:0', '--stateless=yes'], ws.root)).toThrow("Option '--stateless' does not take an argument");
    expect(commonUsage('bulkhead-ladder')).toContain('[--stateless]');
    expect(commonUsage('bulkhead-ladder')).toContain('  --stateless         with --http: keep no MCP sessions, each POST answered on its own, so several servers can\n');
  });
});
