// Several ladder servers behind one address: two `bulkhead-ladder --http --stateless` processes on
// one PostgreSQL database, behind a proxy that sends each request to the next server in turn, and agents
// whose requests land on either. Tokens, leases, fences and events live in the database, so any
// server answers any request; a server killed mid-claim loses nothing but its lease.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { STATELESS_BANNER } from '@bulkhead/core';
import { startHttpServer, tempWorkspace, type HttpServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { loadLadderPolicy } from '../../servers/ladder/src/server.js';
import { ladderDatabase, openLadderStores, type LadderStoreSet } from '../../servers/ladder/src/store/open-stores.js';
import type { AskWithHistory } from '../../servers/ladder/src/store/work-queue.js';
import { freshDatabase, type FreshDatabase } from '../../servers/ladder/test/postgres.js';
import { LADDER_CLI, text } from './helpers.js';
import { backendOf, startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.js';

const OPERATOR_TOKEN = 'operator-token-0123456789abcdef';
const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };
const AGENTS = ['bob', 'carol', 'dave', 'erin'] as const;
type Agent = (typeof AGENTS)[number];

interface Claim {
  readonly ask: { readonly id: string; readonly holder: string };
  readonly fence: number;
  readonly lease_until: string;
}

let ws: TempWorkspace;
let database: FreshDatabase | undefined;
/** The ladder's stores on the same database, opened by the test to read what no tool shows (an ask's events). */
let stores: LadderStoreSet | undefined;
let servers: HttpServerProcess[] = [];
let proxy: RoundRobinProxy;
let tokens: Record<Agent, string>;
const clients: Client[] = [];
/** Every ask the tests posted: at the end each must have been answered exactly once. */
const posted: string[] = [];

/** `TOKEN=$(bulkhead-ladder token create --actor NAME)`, on the database both servers share. */
function createToken(actor: string): string {
  const made = spawnSync(process.execPath, [LADDER_CLI, 'token', 'create', '--actor', actor, '--config', ws.path('.bulkhead')], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  return made.stdout.trim();
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'ladder-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  // A stateless server issues no session: the next request may go to any server.
  expect(transport.sessionId).toBeUndefined();
  clients.push(client);
  return client;
}

/** A tool's structured result; a refusal fails the test with the refusal's words. */
async function call<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} was refused: ${text(result)}`);
  return result.structuredContent as T;
}

/** The words of a refusal the test expects. */
async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name} was expected to be refused`).toBe(true);
  return text(result);
}

async function newLane(title: string, asks: number): Promise<{ laneId: string; askIds: string[] }> {
  const operator = servers[0]!.client;
  const { lane } = await call<{ lane: { id: string } }>(operator, 'lane_propose', { title });
  const askIds: string[] = [];
  for (let n = 1; n <= asks; n++) {
    const { ask } = await call<{ ask: { id: string } }>(operator, 'ask_post', { lane_id: lane.id, kind: 'work', title: `${title}: step ${n}` });
    askIds.push(ask.id);
  }
  posted.push(...askIds);
  return { laneId: lane.id, askIds };
}

/** An ask with its history, read from the database the servers share (no tool shows an ask's events). */
async function history(askId: string): Promise<AskWithHistory> {
  const controlDir = ws.path('.bulkhead');
  stores ??= await openLadderStores(ladderDatabase(controlDir, loadLadderPolicy(controlDir)));
  return stores.work.getAsk(askId);
}

/** The ask_answer calls each server ran, from the audit chains the servers write (one file per process). */
function answersPerAuditFile(): { caller?: string }[][] {
  const folder = ws.path('.bulkhead/audit');
  return readdirSync(folder)
    .filter((name) => /^ladder(\.\d+)?\.jsonl$/.test(name))
    .sort()
    .map((name) =>
      readFileSync(join(folder, name), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { tool?: string; outcome?: string; caller?: string })
        .filter((entry) => entry.tool === 'ladder:ask_answer' && entry.outcome === 'ok'),
    );
}

beforeAll(async () => {
  database = await freshDatabase('ladder_servers');
  ws = tempWorkspace(
    {
      'README.md': '# widgets\n',
      // The URL names no password: the servers read it from the password file, as a user's would.
      '.bulkhead/ladder_policy.yaml': `database: ${database.url}\npassword_file: ${database.passwordFile}\nactor: ada\nrepo:\n  name: acme/widgets\n`,
      '.bulkhead/permissions.yaml': 'allow:\n  - ladder\n',
      'operator.token': `${OPERATOR_TOKEN}\n`,
    },
    'bulkhead-ladder-servers-',
  );
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws.root, env: GIT_ENV });
  git('init', '-q');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'first');
  tokens = Object.fromEntries(AGENTS.map((agent) => [agent, createToken(agent)])) as Record<Agent, string>;
  const args = ['--root', ws.root, '--config', ws.path('.bulkhead'), '--token-file', ws.path('operator.token'), '--stateless'];
  servers = await Promise.all([0, 1].map(() => startHttpServer({ script: LADDER_CLI, args, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })));
  proxy = await startRoundRobinProxy(servers.map((server) => backendOf(server.url)));
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await proxy?.close();
  await Promise.allSettled(servers.map((server) => server.close()));
  await stores?.close();
  await database?.drop();
  ws?.cleanup();
});

describe('two stateless ladder servers on one database behind one address', () => {
  it('refuses --stateless without --http, saying why', () => {
    const refused = spawnSync(process.execPath, [LADDER_CLI, '--root', ws.root, '--config', ws.path('.bulkhead'), '--stateless'], { encoding: 'utf8', input: '' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe('bulkhead-ladder: --stateless needs --http HOST:PORT: over stdio there is one client on one connection, so there are no sessions to do without (see bulkhead-ladder --help)\n');
  });

  it('opens both servers to one ladder token, and answers through one server a claim made through the other, with its fence', async () => {
    for (const server of servers) expect(server.stdout()).toContain(`\n${STATELESS_BANNER}\n`);
    const { laneId, askIds } = await newLane('Across servers', 1);
    const [viaFirst, viaSecond] = await Promise.all(servers.map((server) => connect(server.url, tokens.bob)));
    const { claim } = await call<{ claim: Claim }>(viaFirst!, 'ask_claim_next', { lane_id: laneId });
    expect(claim).toMatchObject({ ask: { id: askIds[0], holder: 'bob' }, fence: 1 });
    const { ask } = await call<{ ask: { state: string; answered_by: string } }>(viaSecond!, 'ask_answer', { ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' });
    expect(ask).toMatchObject({ state: 'answered', answered_by: 'bob' });
    // The other server sees the answer at once: nothing of it was kept in the first one.
    expect(await refusal(viaFirst!, 'ask_answer', { ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' })).toBe(`${claim.ask.id} was already answered complete by bob; nothing to answer`);
  });

  it('lets four agents spread over both servers drain 40 asks at once, each answered exactly once', async () => {
    const { laneId, askIds } = await newLane('Drained together', 40);
    const agents = await Promise.all(AGENTS.map((agent) => connect(`${proxy.url}/mcp`, tokens[agent])));
    const answeredBefore = answersPerAuditFile();
    const requestsBefore = [...proxy.answered];
    const drain = async (agent: Client): Promise<string[]> => {
      const mine: string[] = [];
      for (;;) {
        const { claim } = await call<{ claim: Claim | null }>(agent, 'ask_claim_next', { lane_id: laneId });
        if (claim === null) return mine;
        await call(agent, 'ask_answer', { ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' });
        mine.push(claim.ask.id);
      }
    };
    const byAgent = await Promise.all(agents.map(drain));
    const answered = byAgent.flat();
    expect(answered).toHaveLength(40);
    expect([...answered].sort()).toEqual([...askIds].sort());
    // Work went to every agent and every server: the proxy forwarded to both, and both ran answers.
    for (const mine of byAgent) expect(mine.length).toBeGreaterThan(0);
    proxy.answered.forEach((count, server) => expect(count, `requests answered by server ${server}`).toBeGreaterThan(requestsBefore[server]!));
    const answeredAfter = answersPerAuditFile();
    expect(answeredAfter).toHaveLength(2);
    const ranHere = answeredAfter.map((entries, file) => entries.length - (answeredBefore[file]?.length ?? 0));
    // The client's name came with an initialize another connection answered: the audit names the caller by its token.
    const callers = new Set(answeredAfter.flatMap((entries, file) => entries.slice(answeredBefore[file]?.length ?? 0).map((entry) => entry.caller)));
    expect([...callers].sort()).toEqual(AGENTS.map((agent) => `unknown@${agent}`));
    expect(ranHere.every((count) => count > 0), `ask_answer calls per server: ${ranHere.join(', ')}`).toBe(true);
    expect(ranHere.reduce((sum, count) => sum + count, 0)).toBe(40);
  });

  it('hands a killed server’s claim to another agent once its lease lapses; the first holder’s late answer is refused as stale', async () => {
    const { laneId, askIds } = await newLane('Survives a crash', 1);
    const [bob, carol] = await Promise.all([connect(`${proxy.url}/mcp`, tokens.bob), connect(`${proxy.url}/mcp`, tokens.carol)]);
    const { claim: first } = await call<{ claim: Claim }>(bob, 'ask_claim_next', { lane_id: laneId, lease_seconds: 1 });
    expect(first).toMatchObject({ ask: { id: askIds[0], holder: 'bob' }, fence: 1 });
    // Bob's server is the one that answered his claim, the last POST the proxy forwarded.
    const victim = proxy.log.filter((entry) => entry.method === 'POST').at(-1)!.backend;
    const survivor = 1 - victim;
    const killed = servers[victim]!;
    const exited = new Promise((resolve) => killed.child.once('exit', resolve));
    killed.child.kill('SIGKILL');
    await exited;
    const afterKill = proxy.log.length;

    // Until bob's lease lapses nothing is claimable; then carol, through the survivor, gets the ask.
    let second: Claim | null = null;
    await expect
      .poll(
        async () => {
          second = (await call<{ claim: Claim | null }>(carol, 'ask_claim_next', { lane_id: laneId })).claim;
          return second;
        },
        { timeout: 20_000, interval: 100 },
      )
      .not.toBeNull();
    const taken = second as unknown as Claim;
    expect(taken).toMatchObject({ ask: { id: askIds[0], holder: 'carol' }, fence: 2 });
    expect(await refusal(bob, 'ask_answer', { ask_id: taken.ask.id, fence: 1, answer: 'complete' })).toBe(
      `${taken.ask.id} is claimed by carol until ${taken.lease_until}; your claim (fence 1) was superseded by fence 2`,
    );
    await call(carol, 'ask_answer', { ask_id: taken.ask.id, fence: 2, answer: 'complete' });
    // Every request since the kill was answered by the survivor: the dead server's refused connections were skipped.
    expect(proxy.log.slice(afterKill).every((entry) => entry.backend === survivor)).toBe(true);

    const events = (await history(taken.ask.id)).history;
    expect(events.filter((event) => event.type === 'claimed').map((event) => [event.actor, event.fence])).toEqual([
      ['bob', 1],
      ['carol', 2],
    ]);
    expect(events.filter((event) => event.type === 'answered').map((event) => [event.actor, event.fence])).toEqual([['carol', 2]]);

    // All of it lived in PostgreSQL: neither server fell back to a SQLite file of its own.
    expect(existsSync(ws.path('.bulkhead/ladder.db'))).toBe(false);
    // No ask of any test was lost or answered twice.
    for (const askId of posted) {
      const ask = await history(askId);
      expect(ask.state, askId).toBe('answered');
      expect(ask.history.filter((event) => event.type === 'answered'), askId).toHaveLength(1);
    }
  });
});
