// Every agent its own identity through one gateway: a bearer token of bulkhead.yaml names who
// presents it, the gateway over Streamable HTTP passes that principal to the ladder it started (in
// the call's _meta), and the ladder acts as it: its own lanes, claims, fences and audit lines. The
// attacks: a client naming someone else in _meta, a token without a principal, a gateway over
// stdio, and a ladder reached without a gateway, which believes no _meta principal at all.
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHttpServer, startStdioServer, tempWorkspace, type HttpServerProcess, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { bulkhead, ID, idIn } from './approvals-helpers.js';
import { GATEWAY_CLI, LADDER_CLI, text } from './helpers.js';

const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };
const TOKENS = { ada: 'ada-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef', shared: 'shared-token-0123456789abc', operator: 'operator-token-0123456789ab' };
const FORGED = { 'bulkhead/principal': 'bob' };

/**
 * A git repository served as acme/widgets whose ladder acts as `lead` (its seeded owner), every
 * ladder tool allowed but role_revoke, which asks a human; bulkhead.yaml as a user writes it.
 */
function teamWorkspace(): TempWorkspace {
  const ws = tempWorkspace(
    {
      'README.md': '# widgets\n',
      '.bulkhead/ladder_policy.yaml': 'actor: lead\nrepo:\n  name: acme/widgets\n',
      '.bulkhead/permissions.yaml': 'allow:\n  - ladder\nask:\n  - ladder:role_revoke\napproval_wait_ms: 0\n',
      '.bulkhead/bulkhead.yaml': [
        'servers:',
        '  ladder: {}',
        'profiles:',
        '  agents:',
        '    namespaces: [ladder]',
        'tokens:',
        '  - file: tokens/ada.token',
        '    profile: agents',
        '    principal: ada',
        '  - file: tokens/bob.token',
        '    profile: agents',
        '    principal: bob',
        '  # the build bot: no principal, so it calls as the ladder itself',
        '  - file: tokens/shared.token',
        '    profile: agents',
        '',
      ].join('\n'),
      '.bulkhead/tokens/ada.token': `${TOKENS.ada}\n`,
      '.bulkhead/tokens/bob.token': `${TOKENS.bob}\n`,
      '.bulkhead/tokens/shared.token': `${TOKENS.shared}\n`,
      'operator.token': `${TOKENS.operator}\n`,
    },
    'bulkhead-identity-',
  );
  for (const name of ['tokens/ada.token', 'tokens/bob.token', 'tokens/shared.token']) chmodSync(ws.path(`.bulkhead/${name}`), 0o600);
  chmodSync(ws.path('operator.token'), 0o600);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws.root, env: GIT_ENV });
  git('init', '-q');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'first');
  return ws;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Lane {
  id: string;
  coordinator: string;
  history?: { actor: string; type: string }[];
}
interface Ask {
  id: string;
  holder: string | null;
  fence: number;
  state: string;
  answered_by?: string | null;
  posted_by?: string;
}

/** A ladder tool through the gateway's call_tool; `meta` is what a client adds to the request's _meta. */
async function viaCallTool(client: Client, tool: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  return client.callTool({ name: 'call_tool', arguments: { name: `ladder__${tool}`, arguments: args }, ...(meta ? { _meta: meta } : {}) });
}

function structured<T>(result: unknown): T {
  const reply = result as { structuredContent?: T; isError?: boolean };
  expect(reply.isError, text(result)).toBeFalsy();
  return reply.structuredContent as T;
}

interface AuditLine {
  tool?: string;
  caller?: string;
  outcome?: string;
  args?: { title?: string };
}
const auditOf = (file: string): AuditLine[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditLine)
    .filter((line) => line.tool !== undefined);
/** The ladder's audit lines of every process that wrote one (a second process writes its own chain, ladder.<n>.jsonl). */
const ladderAudit = (ws: TempWorkspace): AuditLine[] =>
  readdirSync(ws.path('.bulkhead/audit'))
    .filter((name) => /^ladder(\.\d+)?\.jsonl$/.test(name))
    .flatMap((name) => auditOf(ws.path(`.bulkhead/audit/${name}`)));
/** The callers the ladder recorded for lane_propose calls with this title. */
const proposedBy = (ws: TempWorkspace, title: string) =>
  ladderAudit(ws)
    .filter((line) => line.tool === 'ladder:lane_propose' && line.args?.title === title)
    .map((line) => line.caller);

describe('agents sharing one gateway over HTTP', () => {
  let ws: TempWorkspace;
  let gateway: HttpServerProcess;
  let ada: Client;
  let bob: Client;
  let shared: Client;

  beforeAll(async () => {
    ws = teamWorkspace();
    gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], headers: bearer(TOKENS.ada) });
    ada = gateway.client;
    bob = await gateway.connectAnother(bearer(TOKENS.bob));
    shared = await gateway.connectAnother(bearer(TOKENS.shared));
  });

  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  it('acts as each token’s principal: lanes, claims and fences are theirs, and the owner stays the ladder’s', async () => {
    // Direct tools/call of loaded tools and call_tool both carry the principal.
    expect((await ada.callTool({ name: 'load_tools', arguments: { names: ['ladder__lane_propose', 'ladder__ask_answer'] } })).isError).toBeFalsy();
    const { lane } = structured<{ lane: Lane }>(await ada.callTool({ name: 'ladder__lane_propose', arguments: { title: 'Release 2.0' } }));
    expect(lane.coordinator).toBe('ada');
    const { ask } = structured<{ ask: Ask }>(await viaCallTool(ada, 'ask_post', { lane_id: lane.id, kind: 'work', title: 'Write the changelog' }));

    const { claim } = structured<{ claim: { ask: Ask; fence: number } }>(await viaCallTool(bob, 'ask_claim_next', { lane_id: lane.id }));
    expect(claim).toMatchObject({ ask: { id: ask.id, holder: 'bob' }, fence: 1 });

    const stolen = await ada.callTool({ name: 'ladder__ask_answer', arguments: { ask_id: ask.id, fence: claim.fence, answer: 'complete' } });
    expect(stolen.isError).toBe(true);
    expect(text(stolen)).toBe(`${ask.id} is held by bob (fence 1), not ada`);
    const answered = structured<{ ask: Ask }>(await viaCallTool(bob, 'ask_answer', { ask_id: ask.id, fence: claim.fence, answer: 'complete' }));
    expect(answered.ask).toMatchObject({ state: 'answered', posted_by: 'ada', answered_by: 'bob' });

    const { lane: read } = structured<{ lane: Lane }>(await viaCallTool(bob, 'lane_get', { lane_id: lane.id }));
    expect(read.history!.map((event) => `${event.actor} ${event.type}`)).toEqual(['ada proposed']);
    const roles = structured<{ roles: { principal: string; role: string }[] }>(await viaCallTool(bob, 'role_list', {})).roles;
    expect(roles.filter((grant) => grant.role === 'owner').map((grant) => grant.principal)).toEqual(['lead']);

    // Both audit lines name the principal: the gateway's after the client, the ladder's after the gateway.
    const gatewayLines = auditOf(ws.path('.bulkhead/audit/gateway.jsonl'));
    expect(gatewayLines.find((line) => line.tool === 'ladder:lane_propose')?.caller).toMatch(/^bulkhead-test\/1\.0\.0#[0-9a-f-]{8}@ada$/);
    expect(gatewayLines.filter((line) => line.tool === 'ladder:ask_answer').map((line) => [line.caller?.replace(/^.*@/, ''), line.outcome])).toEqual([
      ['ada', 'error'],
      ['bob', 'ok'],
    ]);
    const ladderLines = auditOf(ws.path('.bulkhead/audit/ladder.jsonl'));
    expect(ladderLines.filter((line) => line.tool === 'ladder:ask_answer').map((line) => [line.caller, line.outcome])).toEqual([
      ['bulkhead-gateway/0.1.0@ada', 'error'],
      ['bulkhead-gateway/0.1.0@bob', 'ok'],
    ]);
  });

  it('never believes a principal a client names itself, in the request’s _meta or in call_tool', async () => {
    expect((await ada.callTool({ name: 'load_tools', arguments: { names: ['ladder__lane_propose'] } })).isError).toBeFalsy();
    const direct = structured<{ lane: Lane }>(await ada.callTool({ name: 'ladder__lane_propose', arguments: { title: 'direct' }, _meta: FORGED }));
    expect(direct.lane.coordinator).toBe('ada');
    const relayed = structured<{ lane: Lane }>(await viaCallTool(ada, 'lane_propose', { title: 'relayed' }, FORGED));
    expect(relayed.lane.coordinator).toBe('ada');
    // Nor as an argument: call_tool takes none by that name, and the ladder's tool none either.
    const beside = await ada.callTool({ name: 'call_tool', arguments: { name: 'ladder__lane_propose', arguments: { title: 'beside' }, _meta: FORGED } });
    expect(text(beside)).toBe('Invalid arguments for gateway:call_tool: unknown argument `_meta`');
    const inside = await viaCallTool(ada, 'lane_propose', { title: 'inside', _meta: FORGED });
    expect(text(inside)).toBe(
      'Invalid arguments for ladder:lane_propose: unknown argument `_meta`. Expected: repo (string), title (string, required), goal (string), paths (array), priority (integer), actor (string).',
    );
    // A token without a principal calls as the ladder's own actor, whatever it names.
    const unnamed = structured<{ lane: Lane }>(await viaCallTool(shared, 'lane_propose', { title: 'by the build bot' }, FORGED));
    expect(unnamed.lane.coordinator).toBe('lead');
    expect([...proposedBy(ws, 'direct'), ...proposedBy(ws, 'relayed'), ...proposedBy(ws, 'by the build bot')]).toEqual(['bulkhead-gateway/0.1.0@ada', 'bulkhead-gateway/0.1.0@ada', 'bulkhead-gateway/0.1.0']);
    expect([...proposedBy(ws, 'beside'), ...proposedBy(ws, 'inside')]).toEqual([]);
  });

  it('holds a call for a human under the principal, and bulkhead approvals says whose token it came with', async () => {
    const held = await viaCallTool(ada, 'role_revoke', { principal: 'bob', role: 'contributor' });
    const id = idIn(text(held));
    const listed = await bulkhead(['approvals', 'list', '--config', ws.path('.bulkhead')]);
    expect(listed.stdout).toMatch(new RegExp(`^${id}  ladder:role_revoke  \\d+ s ago  from bulkhead-test/1\\.0\\.0#[0-9a-f-]{8}@ada \\(token of ada\\)  principal=bob role=contributor  \\(the call gave up waiting; an identical retry runs once allowed\\)$`, 'm'));
    expect(listed.stdout).not.toMatch(new RegExp(`^(?!${id})${ID}  `, 'm'));
  });
});

describe('without a gateway over HTTP in front, a _meta principal is nobody’s word', () => {
  let ws: TempWorkspace;
  const running: ServerProcess[] = [];

  beforeAll(() => {
    ws = teamWorkspace();
  });

  afterAll(async () => {
    for (const server of running.splice(0)) await server.close();
    ws?.cleanup();
  });

  const propose = async (client: Client, title: string) => structured<{ lane: Lane }>(await client.callTool({ name: 'lane_propose', arguments: { title }, _meta: FORGED })).lane.coordinator;

  it('a gateway over stdio calls as the ladder’s actor', async () => {
    const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    running.push(gateway);
    const lane = structured<{ lane: Lane }>(await viaCallTool(gateway.client, 'lane_propose', { title: 'over stdio' }, FORGED)).lane;
    expect(lane.coordinator).toBe('lead');
    expect(proposedBy(ws, 'over stdio')).toEqual(['bulkhead-gateway/0.1.0']);
  });

  it('a ladder with --gated-by-gateway over HTTP, and one without the flag over stdio, act as their transport’s identity', async () => {
    const overHttp = await startHttpServer({
      script: LADDER_CLI,
      args: ['--root', ws.root, '--config', ws.path('.bulkhead'), '--gated-by-gateway', '--token-file', ws.path('operator.token')],
      headers: bearer(TOKENS.operator),
    });
    running.push(overHttp);
    expect(await propose(overHttp.client, 'gated over HTTP')).toBe('lead');
    const alone = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root, '--config', ws.path('.bulkhead')] });
    running.push(alone);
    expect(await propose(alone.client, 'alone over stdio')).toBe('lead');
    expect(proposedBy(ws, 'gated over HTTP')).toEqual([expect.stringMatching(/^bulkhead-test\/1\.0\.0#[0-9a-f-]{8}@default$/)]);
    expect(proposedBy(ws, 'alone over stdio')).toEqual(['bulkhead-test/1.0.0']);
  });

  it('a ladder its parent started with --gated-by-gateway over stdio acts as the named principal, and refuses one that is not a principal', async () => {
    const child = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root, '--config', ws.path('.bulkhead'), '--gated-by-gateway'] });
    running.push(child);
    expect(await propose(child.client, 'named by the parent')).toBe('bob');
    const refusals: string[] = [];
    for (const given of ['', 'x'.repeat(201), 'ada\nbob', 'ada\u0085', 7, null]) {
      const refused = await child.client.callTool({ name: 'lane_propose', arguments: { title: 'refused' }, _meta: { 'bulkhead/principal': given } }).then(
        () => 'ran',
        (error: Error) => error.message,
      );
      refusals.push(refused);
    }
    const why = (reason: string) => `MCP error -32602: the gateway's _meta["bulkhead/principal"] is not a principal (${reason}); nothing was run`;
    expect(refusals).toEqual([
      why('a principal has at least 1 character'),
      why('a principal has at most 200 characters'),
      why('a principal holds no control characters (a newline?)'),
      why('a principal holds no control characters (a newline?)'),
      why('Invalid input: expected string, received number'),
      why('Invalid input: expected string, received null'),
    ]);
    expect(proposedBy(ws, 'named by the parent')).toEqual(['bulkhead-test/1.0.0@bob']);
    const refused = ladderAudit(ws).filter((line) => line.args?.title === 'refused');
    expect(refused.map((line) => [line.tool, line.caller, line.outcome])).toEqual(Array(6).fill(['ladder:lane_propose', 'bulkhead-test/1.0.0', 'error']));
  });
});
