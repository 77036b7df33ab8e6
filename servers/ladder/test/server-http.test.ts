import { afterEach, describe, expect, it } from 'vitest';
import { auditPolicySchema } from '@bulkhead/core';
import { serveToolEndpoint, type RunningToolEndpoint } from '../src/http/tool-endpoint.js';
import { ladderPolicySchema } from '../src/policy.js';
import { createLadderServer, ladderTools, openLadder, type OpenedLadder } from '../src/server.js';
import type { Ask, LaneWithHistory } from '../src/store/work-queue.js';
import { ladderWorld, type LadderWorld } from './server-helpers.js';

let world: LadderWorld;
/** The ladder and endpoint a test started; the last test's server owns its own. */
let running: { ladder: OpenedLadder; endpoint: RunningToolEndpoint } | undefined;

afterEach(async () => {
  await running?.endpoint.close();
  running?.ladder.close();
  running = undefined;
  await world.close();
});

/** The endpoint on a fresh world whose repository is served as acme/widgets; the stdio actor ada owns it. */
async function start(): Promise<OpenedLadder> {
  world = await ladderWorld();
  const ladder = await openLadder({
    roots: [world.repoDir],
    controlDir: world.controlDir,
    gate: { kind: 'gateway' },
    audit: auditPolicySchema.parse({ enabled: false }),
    policy: ladderPolicySchema.parse({ actor: 'ada', repo: { name: 'acme/widgets' } }),
  });
  running = { ladder, endpoint: await serveToolEndpoint(ladder.deps, ladderTools, '127.0.0.1', 0) };
  return ladder;
}

function endpointUrl(): string {
  if (!running) throw new Error('start() the endpoint first');
  return running.endpoint.url;
}

async function post(tool: string, args: unknown, token?: string, repo = 'acme/widgets'): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: string } }> {
  const response = await fetch(`${endpointUrl()}/api/repos/${repo}/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(args),
  });
  return { status: response.status, body: (await response.json()) as { result?: Record<string, unknown>; error?: string } };
}

describe('the HTTP tool endpoint', () => {
  it('refuses calls without a token, with a wrong one and with a revoked one', async () => {
    const ladder = await start();
    const missing = await post('lane_list', {});
    expect(missing.status).toBe(401);
    expect(missing.body.error).toContain('Authorization: Bearer');
    expect((await post('lane_list', {}, 'tok-0000000000.not-a-secret')).status).toBe(401);

    const token = await ladder.deps.store.createToken('bob');
    expect((await post('lane_list', {}, token.secret)).status).toBe(200);
    await ladder.deps.store.revokeToken(token.id);
    const revoked = await post('lane_list', {}, token.secret);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toContain('revoked');
  });

  it('runs the tools as the token actor in the repository the URL names', async () => {
    const ladder = await start();
    const bob = (await ladder.deps.store.createToken('bob')).secret;
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
    expect((await post('lane_get', { lane_id: foreign.id }, bob)).body.error).toBe(`${foreign.id} is not a lane of acme/widgets`);

    const written = await post('ladder_write_rung', { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'The readme' }] }, bob);
    expect(written.status).toBe(200);
    const read = await post('ladder_read', { path: 'README.md' }, bob);
    expect(read.body.result!['reading']).toMatchObject({ repo: 'acme/widgets', freshness: 'fresh' });
  });

  it('answers unknown tools, wrong methods and bad arguments with an error', async () => {
    const ladder = await start();
    const bob = (await ladder.deps.store.createToken('bob')).secret;
    expect((await post('no_such_tool', {}, bob)).status).toBe(404);
    const badArguments = await post('ask_claim', { ask_id: 'nope' }, bob);
    expect(badArguments.status).toBe(400);
    expect(badArguments.body.error).toContain('ask id looks like');
    const get = await fetch(`${endpointUrl()}/api/repos/acme/widgets/tools/lane_list`, { headers: { authorization: `Bearer ${bob}` } });
    expect(get.status).toBe(405);
  });
});

describe('the MCP server with the tool endpoint beside it', () => {
  it('serves the endpoint while the server runs and stops it when the server closes', async () => {
    world = await ladderWorld();
    let url = '';
    const server = await createLadderServer({
      roots: [world.repoDir],
      controlDir: world.controlDir,
      gate: { kind: 'gateway' },
      audit: auditPolicySchema.parse({ enabled: false }),
      policy: ladderPolicySchema.parse({ actor: 'ada' }),
      toolEndpoint: { host: '127.0.0.1', port: 0 },
      onToolEndpoint: (listening) => {
        url = listening;
      },
    });
    const unauthenticated = await fetch(`${url}/api/repos/local/repo/tools/lane_list`, { method: 'POST', body: '{}' });
    expect(unauthenticated.status).toBe(401);
    await server.close();
    await expect(fetch(`${url}/api/repos/local/repo/tools/lane_list`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
