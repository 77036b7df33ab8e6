import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { auditFile, auditPolicySchema, PermissionGate, serveHttp, type RunningHttp, type ToolServer } from '@bulkhead/core';
import { connectHttp, toolCall } from '@bulkhead/core/testing';
import { ladderPolicySchema } from '../src/policy.js';
import { createLadderServer, ladderDatabasePath } from '../src/server.js';
import { openDatabase } from '../src/store/database.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import type { Ask, LaneWithHistory } from '../src/store/work-queue.js';
import { ladderWorld, type LadderWorld } from './server-helpers.js';

const OPERATOR_TOKEN = 'operator-token-from-a-file-0123';

let world: LadderWorld | undefined;
/** What a test started, stopped after it whatever happened. */
let running: { server: ToolServer; http: RunningHttp; tokens: SqliteWorkQueueStore; clients: Awaited<ReturnType<typeof connectHttp>>[] } | undefined;

afterEach(async () => {
  if (running) {
    await Promise.allSettled(running.clients.map((client) => client.close()));
    await running.http.close();
    await running.server.close();
    running.tokens.close();
  }
  running = undefined;
  await world?.close();
  world = undefined;
});

interface StartOptions {
  /** permissions.yaml; the world's default allows every ladder tool. */
  readonly permissions?: string;
  readonly audit?: boolean;
  /** ladder_policy.yaml entries besides the actor and the repository name. */
  readonly policy?: Record<string, unknown>;
}

/**
 * A ladder served over Streamable HTTP (MCP at /mcp, zz's endpoint beside it) on a fresh world
 * whose repository is acme/widgets, owned by the operator ada; `--token-file` holds OPERATOR_TOKEN.
 */
async function start(options: StartOptions = {}): Promise<{ base: string; mcp: string; tokens: SqliteWorkQueueStore }> {
  world = await ladderWorld();
  if (options.permissions !== undefined) writeFileSync(join(world.controlDir, 'permissions.yaml'), options.permissions);
  const policy = ladderPolicySchema.parse({ actor: 'ada', repo: { name: 'acme/widgets' }, ...options.policy });
  const server = await createLadderServer({
    roots: [world.repoDir],
    controlDir: world.controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(world.controlDir) },
    audit: auditPolicySchema.parse({ enabled: options.audit ?? false }),
    policy,
  });
  const http = await serveHttp(server, { host: '127.0.0.1', port: 0, token: OPERATOR_TOKEN });
  // Tokens are made the way `bulkhead-ladder token create` makes them: another connection to the file.
  const tokens = new SqliteWorkQueueStore(openDatabase(ladderDatabasePath(world.controlDir, policy)));
  running = { server, http, tokens, clients: [] };
  return { base: http.url.slice(0, -'/mcp'.length), mcp: http.url, tokens };
}

/** Breaks the running server's database behind its back, the way a damaged file would. */
function hideLanesTable(): void {
  const sabotage = openDatabase(ladderDatabasePath(world!.controlDir, ladderPolicySchema.parse({})));
  sabotage.exec('ALTER TABLE lanes RENAME TO lanes_elsewhere');
  sabotage.close();
}

/** Runs `work` with stderr captured, for what the server logs instead of answering. */
async function loggedWhile<T>(work: () => Promise<T>): Promise<{ result: T; logged: string }> {
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const result = await work();
    return { result, logged: spy.mock.calls.map(([text]) => String(text)).join('') };
  } finally {
    spy.mockRestore();
  }
}

function baseUrl(): string {
  if (!running) throw new Error('start() the server first');
  return running.http.url.slice(0, -'/mcp'.length);
}

type EndpointReply = { status: number; body: { result?: Record<string, unknown>; error?: string } };

async function post(tool: string, args: unknown, token?: string, repo = 'acme/widgets'): Promise<EndpointReply> {
  const response = await fetch(`${baseUrl()}/api/repos/${repo}/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(args),
  });
  return { status: response.status, body: (await response.json()) as EndpointReply['body'] };
}

async function mcpClient(token: string): ReturnType<typeof connectHttp> {
  const client = await connectHttp(running!.http.url, { authorization: `Bearer ${token}` });
  running!.clients.push(client);
  return client;
}

describe('the HTTP tool endpoint', () => {
  it('refuses calls without a token, with a wrong one and with a revoked one', async () => {
    const { tokens } = await start();
    const missing = await post('lane_list', {});
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe('send Authorization: Bearer <token> (bulkhead-ladder token create --actor NAME makes one)');
    expect(await post('lane_list', {}, 'tok-0000000000.not-a-secret')).toEqual({ status: 401, body: { error: 'the token is not a ladder token, or it was revoked (bulkhead-ladder token list)' } });
    // The operator's --token-file token opens /mcp, not zz's endpoint: there every caller is a ladder actor.
    expect(await post('lane_list', {}, OPERATOR_TOKEN)).toEqual({
      status: 401,
      body: { error: 'the --token-file token opens /mcp only; this endpoint takes ladder tokens (bulkhead-ladder token create --actor NAME)' },
    });

    const token = await tokens.createToken('bob');
    expect((await post('lane_list', {}, token.secret)).status).toBe(200);
    await tokens.revokeToken(token.id);
    const revoked = await post('lane_list', {}, token.secret);
    expect(revoked).toEqual({ status: 401, body: { error: 'the token is not a ladder token, or it was revoked (bulkhead-ladder token list)' } });
  });

  it('runs the tools as the token actor in the repository the URL names', async () => {
    const { tokens } = await start();
    const bob = (await tokens.createToken('bob')).secret;
    const proposed = await post('lane_propose', { title: 'Over HTTP' }, bob);
    expect(proposed.status).toBe(200);
    const lane = proposed.body.result!['lane'] as LaneWithHistory;
    expect(lane).toMatchObject({ repo: 'acme/widgets', coordinator: 'bob' });

    const first = (await post('ask_post', { lane_id: lane.id, kind: 'work', title: 'First' }, bob)).body.result!['ask'] as Ask;
    const second = (await post('ask_post', { lane_id: lane.id, kind: 'work', title: 'Second', depends_on: [first.id] }, bob)).body.result!['ask'] as Ask;
    const waiting = await post('ask_claim', { ask_id: second.id }, bob);
    expect(waiting.status).toBe(409);
    expect(waiting.body.error).toContain(`waiting on ${first.id}`);

    const impersonating = await post('ask_claim', { ask_id: first.id, actor: 'ada' }, bob);
    expect(impersonating.status).toBe(403);
    expect(impersonating.body.error).toBe('actor is ada, but this call is made by bob; leave actor out or give your own identity');

    const otherRepo = await post('lane_propose', { title: 'Elsewhere', repo: 'acme/other' }, bob);
    expect(otherRepo.status).toBe(400);
    const foreign = (await post('lane_propose', { title: 'Elsewhere' }, bob, 'acme/other')).body.result!['lane'] as LaneWithHistory;
    const crossings = [
      ['lane_get', { lane_id: foreign.id }, 'acme/widgets'],
      ['ask_post', { lane_id: foreign.id, kind: 'work', title: 'Sneaky' }, 'acme/widgets'],
      ['ask_claim', { ask_id: first.id }, 'acme/other'],
      ['lane_add_related', { lane_id: foreign.id, related_lane_id: lane.id }, 'acme/other'],
    ] as const;
    for (const [tool, args, through] of crossings) {
      const crossed = await post(tool, args, bob, through);
      expect({ tool, status: crossed.status }).toEqual({ tool, status: 404 });
    }
    expect((await post('lane_get', { lane_id: foreign.id }, bob)).body.error).toBe(`no lane ${foreign.id} in acme/widgets`);
    // An ask of another repository is not found here either, without naming the lane it is in.
    expect((await post('ask_claim', { ask_id: first.id }, bob, 'acme/other')).body.error).toBe(`no ask ${first.id} in acme/other`);
    expect((await post('lane_get', { lane_id: foreign.id }, bob, 'acme/other')).status).toBe(200);

    const written = await post('ladder_write_rung', { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'The readme' }] }, bob);
    expect(written.status).toBe(200);
    const read = await post('ladder_read', { path: 'README.md' }, bob);
    expect(read.body.result!['reading']).toMatchObject({ repo: 'acme/widgets', freshness: 'fresh' });
  });

  it("takes _repo as the standing lane of the URL's repository, which needs an owner", async () => {
    const { tokens } = await start();
    const bob = (await tokens.createToken('bob')).secret;
    const posted = await post('ask_post', { lane_id: '_repo', kind: 'question', title: 'Where do releases live?' }, bob);
    expect(posted.status).toBe(200);
    const laneId = (posted.body.result!['ask'] as Ask).lane_id;
    const lane = (await post('lane_get', { lane_id: laneId }, bob)).body.result!['lane'] as LaneWithHistory;
    expect(lane).toMatchObject({ repo: 'acme/widgets', coordinator: 'ada', state: 'active' });
    const ownerless = await post('ask_post', { lane_id: '_repo', kind: 'work', title: 'Elsewhere' }, bob, 'acme/other');
    expect(ownerless).toEqual({ status: 404, body: { error: 'acme/other has no owner, so it has no _repo lane; propose a lane with lane_propose instead' } });
  });

  it('answers the public reading tools of a public repository without a token, as anonymous, and nothing else', async () => {
    const { tokens } = await start({ audit: true, policy: { public_read: { repos: ['acme/widgets'] } } });
    const bob = (await tokens.createToken('bob')).secret;
    const lane = (await post('lane_propose', { title: 'Public work' }, bob)).body.result!['lane'] as LaneWithHistory;
    const listed = await post('lane_list', {}, undefined);
    expect(listed.status).toBe(200);
    expect((listed.body.result!['lanes'] as LaneWithHistory[]).map((entry) => entry.id)).toEqual([lane.id]);
    expect((await post('ladder_tree', {}, undefined)).status).toBe(200);
    const refused = [
      ['lane_get', { lane_id: lane.id }, 'acme/widgets'],
      ['lane_propose', { title: 'Anonymous lane' }, 'acme/widgets'],
      ['lane_list', {}, 'acme/other'],
    ] as const;
    for (const [tool, args, repo] of refused) {
      const reply = await post(tool, args, undefined, repo);
      expect({ tool, repo, status: reply.status }).toEqual({ tool, repo, status: 401 });
    }
    expect((await post('lane_list', {}, 'not-a-token')).status).toBe(401);
    const callers = readFileSync(auditFile(world!.controlDir, 'ladder'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { tool: string; caller: string }));
    expect(callers.map(({ tool, caller }) => `${tool} ${caller}`)).toEqual(['ladder:lane_propose tool-endpoint@bob', 'ladder:lane_list tool-endpoint@anonymous', 'ladder:ladder_tree tool-endpoint@anonymous']);
  });

  it('keeps the details of a failure nobody worded off the wire, in the server log instead', async () => {
    const { tokens } = await start();
    const bob = (await tokens.createToken('bob')).secret;
    // A first call opens the database, so the failure below is the tool's, not the opening's (see the next test).
    expect((await post('lane_list', {}, bob)).status).toBe(200);
    hideLanesTable();
    const { result: failed, logged } = await loggedWhile(() => post('lane_list', {}, bob));
    expect(failed).toEqual({ status: 500, body: { error: 'internal error; the server log has the details' } });
    expect(logged).toContain('bulkhead-ladder tool endpoint: ladder:lane_list failed unexpectedly: no such table: lanes');
  });

  it('keeps the details of a database that cannot be opened off the wire when a token check is the first to open it', async () => {
    const { tokens } = await start();
    const bob = (await tokens.createToken('bob')).secret;
    hideLanesTable();
    const { result: failed, logged } = await loggedWhile(() => post('lane_list', {}, bob));
    expect(failed.status).toBe(500);
    expect(JSON.stringify(failed.body)).toContain('the ladder database cannot be read; the server log has the details');
    expect(JSON.stringify(failed.body)).not.toContain('no such table');
    expect(logged).toContain('bulkhead-ladder: a bearer token could not be checked: no such table: lanes');
  });

  it('bounds calls without a token: a small body, a short upload, a few at once', async () => {
    await start({ policy: { public_read: { repos: ['acme/widgets'], max_concurrent_calls: 2, max_body_bytes: 1024, upload_timeout_ms: 300 } } });
    const big = await post('lane_list', { pad: 'x'.repeat(2000) }, undefined);
    expect(big).toEqual({ status: 413, body: { error: 'the body is over 1024 bytes' } });

    // Two uploads that never finish hold both places; a third caller is turned away until they are cut off.
    const port = Number(new URL(baseUrl()).port);
    const stalled = [0, 1].map(() => {
      const request = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/repos/acme/widgets/tools/lane_list', headers: { 'content-length': '100' } });
      request.on('error', () => undefined);
      request.write('{');
      return new Promise<string>((resolve) => {
        request.on('close', () => resolve('closed'));
        request.on('response', () => resolve('answered'));
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const busy = await fetch(`${baseUrl()}/api/repos/acme/widgets/tools/lane_list`, { method: 'POST', body: '{}' });
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toEqual({ error: 'too many calls without a token at once; retry shortly' });
    expect(await Promise.all(stalled)).toEqual(['closed', 'closed']);
    expect((await post('lane_list', {}, undefined)).status).toBe(200);
  });

  it('refuses a reading tool outside public_read.tools in the policy', () => {
    expect(ladderPolicySchema.safeParse({ public_read: { repos: ['acme/widgets'], tools: ['ask_post'] } }).success).toBe(false);
    expect(ladderPolicySchema.safeParse({ public_read: { repos: ['acme/widgets'], tools: ['ask_query_claimable'] } }).success).toBe(false);
    expect(ladderPolicySchema.parse({}).public_read).toEqual({ repos: [], tools: ['lane_list', 'ladder_tree'], max_concurrent_calls: 4, max_body_bytes: 65536, upload_timeout_ms: 10_000 });
  });

  it('answers a malformed percent-encoding in the URL with 400', async () => {
    const { tokens } = await start();
    const bob = (await tokens.createToken('bob')).secret;
    const reply = await fetch(`${baseUrl()}/api/repos/acme/wid%E0%A4%A/tools/lane_list`, { method: 'POST', headers: { authorization: `Bearer ${bob}` }, body: '{}' });
    expect(reply.status).toBe(400);
    expect(await reply.json()).toEqual({ error: 'wid%E0%A4%A in the URL is not well-formed percent-encoding' });
  });

  it('answers unknown tools, wrong methods, bad bodies and bad arguments with an error', async () => {
    const { tokens } = await start();
    const bob = (await tokens.createToken('bob')).secret;
    const unknown = await post('no_such_tool', {}, bob);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/^Unknown tool no_such_tool\. Available tools: ladder_read, /);
    const badArguments = await post('ask_claim', { ask_id: 'nope' }, bob);
    expect(badArguments.status).toBe(400);
    expect(badArguments.body.error).toMatch(/^Invalid arguments for ladder:ask_claim: `ask_id`: .*ask id looks like/);
    const get = await fetch(`${baseUrl()}/api/repos/acme/widgets/tools/lane_list`, { headers: { authorization: `Bearer ${bob}` } });
    expect(get.status).toBe(405);
    const notJson = await fetch(`${baseUrl()}/api/repos/acme/widgets/tools/lane_list`, { method: 'POST', headers: { authorization: `Bearer ${bob}` }, body: '{oops' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: 'the body is not JSON; send the tool arguments as a JSON object' });
    const elsewhere = await fetch(`${baseUrl()}/api/repos/acme/widgets/lanes`, { method: 'POST', headers: { authorization: `Bearer ${bob}` } });
    expect(elsewhere.status).toBe(404);
  });

  it('puts every call through the permission gate: a denied tool is 403 and changes nothing', async () => {
    const { tokens } = await start({ permissions: 'allow:\n  - ladder\ndeny:\n  - ladder:ask_post\n' });
    const bob = (await tokens.createToken('bob')).secret;
    const lane = (await post('lane_propose', { title: 'Gated' }, bob)).body.result!['lane'] as LaneWithHistory;
    const denied = await post('ask_post', { lane_id: lane.id, kind: 'work', title: 'Refused' }, bob);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatch(/^Permission denied: .*ladder:ask_post.* Nothing was run\./);
    expect((await post('ask_query_claimable', { lane_id: lane.id }, bob)).body.result!['claimable']).toEqual([]);
  });

  it('refuses a call the gate would ask about, since nobody over this endpoint can confirm it', async () => {
    const { tokens } = await start({ permissions: 'autonomy: supervised\n' });
    const bob = (await tokens.createToken('bob')).secret;
    expect((await post('lane_list', {}, bob)).status).toBe(200);
    const asked = await post('lane_propose', { title: 'Needs a yes' }, bob);
    expect(asked.status).toBe(403);
    expect(asked.body.error).toContain('This call did not come over MCP, so nobody can be asked to confirm it, so nothing was run.');
    expect((await post('lane_list', {}, bob)).body.result!['lanes']).toEqual([]);
  });

  it('writes every call to the audit log as made by the token actor, refusals of another repository included', async () => {
    const { tokens } = await start({ audit: true, permissions: 'allow:\n  - ladder\ndeny:\n  - ladder:role_grant\n' });
    const bob = (await tokens.createToken('bob')).secret;
    await post('lane_propose', { title: 'Audited' }, bob);
    await post('role_grant', { principal: 'eve', role: 'owner' }, bob);
    const foreign = (await post('lane_propose', { title: 'Elsewhere' }, bob, 'acme/other')).body.result!['lane'] as LaneWithHistory;
    expect((await post('lane_get', { lane_id: foreign.id }, bob)).status).toBe(404);
    expect((await post('lane_list', { repo: 'acme/other' }, bob)).status).toBe(400);
    const lines = readFileSync(auditFile(world!.controlDir, 'ladder'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map(({ tool, caller, outcome, decision }) => ({ tool, caller, outcome, decision }))).toEqual([
      { tool: 'ladder:lane_propose', caller: 'tool-endpoint@bob', outcome: 'ok', decision: 'allow' },
      { tool: 'ladder:role_grant', caller: 'tool-endpoint@bob', outcome: 'denied', decision: 'deny' },
      { tool: 'ladder:lane_propose', caller: 'tool-endpoint@bob', outcome: 'ok', decision: 'allow' },
      { tool: 'ladder:lane_get', caller: 'tool-endpoint@bob', outcome: 'error', decision: 'allow' },
      { tool: 'ladder:lane_list', caller: 'tool-endpoint@bob', outcome: 'error', decision: 'allow' },
    ]);
    expect(lines.at(-1)).toMatchObject({ args: { repo: 'acme/other' }, error: 'repo is acme/other but the URL names acme/widgets; leave repo out' });
  });
});

describe('gated by a gateway', () => {
  it('adds nothing to HTTP: no tool endpoint and no ladder tokens, since no gate would see those calls', async () => {
    world = await ladderWorld();
    const server = await createLadderServer({
      roots: [world.repoDir],
      controlDir: world.controlDir,
      gate: { kind: 'gateway' },
      audit: auditPolicySchema.parse({ enabled: false }),
      policy: ladderPolicySchema.parse({ actor: 'ada' }),
    });
    const http = await serveHttp(server, { host: '127.0.0.1', port: 0, token: OPERATOR_TOKEN });
    const tokens = new SqliteWorkQueueStore(openDatabase(ladderDatabasePath(world.controlDir, ladderPolicySchema.parse({}))));
    running = { server, http, tokens, clients: [] };
    const bob = (await tokens.createToken('bob')).secret;
    expect((await fetch(`${baseUrl()}/api/repos/local/repo/tools/lane_list`, { method: 'POST', headers: { authorization: `Bearer ${bob}` }, body: '{}' })).status).toBe(404);
    await expect(mcpClient(bob)).rejects.toThrow('missing, wrong or revoked bearer token');
    const operator = await mcpClient(OPERATOR_TOKEN);
    expect(toolCall(await operator.callTool({ name: 'lane_list', arguments: {} })).isError).toBeFalsy();
  });
});

describe('MCP over HTTP', () => {
  it('acts as the ladder token actor, or as the operator with the --token-file token', async () => {
    const { tokens } = await start();
    const bob = await mcpClient((await tokens.createToken('bob')).secret);
    const asBob = toolCall<{ lane: LaneWithHistory }>(await bob.callTool({ name: 'lane_propose', arguments: { title: 'From bob' } }));
    expect(asBob.structured?.lane.coordinator).toBe('bob');
    const impersonation = toolCall(await bob.callTool({ name: 'lane_propose', arguments: { title: 'As ada', actor: 'ada' } }));
    expect(impersonation.isError).toBe(true);
    expect(impersonation.text).toBe('actor is ada, but this call is made by bob; leave actor out or give your own identity');

    const operator = await mcpClient(OPERATOR_TOKEN);
    const asAda = toolCall<{ lane: LaneWithHistory }>(await operator.callTool({ name: 'lane_propose', arguments: { title: 'From the operator' } }));
    expect(asAda.structured?.lane.coordinator).toBe('ada');
  });

  it('refuses /mcp without a token, and the next request of a session whose token was revoked', async () => {
    const { tokens, mcp } = await start();
    const unauthenticated = await fetch(mcp, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(unauthenticated.status).toBe(401);
    const token = await tokens.createToken('carol');
    const carol = await mcpClient(token.secret);
    expect(toolCall(await carol.callTool({ name: 'lane_list', arguments: {} })).isError).toBeFalsy();
    await tokens.revokeToken(token.id);
    await expect(carol.callTool({ name: 'lane_list', arguments: {} })).rejects.toThrow('missing, wrong or revoked bearer token');
  });

  it('serves the tool endpoint on the same port and stops it with the server', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/api/repos/acme/widgets/tools/lane_list`, { method: 'POST', body: '{}' })).status).toBe(401);
    await running!.http.close();
    await expect(fetch(`${base}/api/repos/acme/widgets/tools/lane_list`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
