import { execFileSync, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { LADDER_CLI } from './helpers.js';

let ws: TempWorkspace;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

const OPERATOR_TOKEN = 'operator-token-0123456789abcdef';
const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };

/** A repository served as acme/widgets by the operator ada, every ladder tool allowed, and the operator's token file. */
function ladderWorkspace(): TempWorkspace {
  const w = tempWorkspace({
    'README.md': '# widgets\n',
    '.bulkhead/ladder_policy.yaml': 'actor: ada\nrepo:\n  name: acme/widgets\n',
    '.bulkhead/permissions.yaml': 'allow:\n  - ladder\n',
    'operator.token': `${OPERATOR_TOKEN}\n`,
  }, 'bulkhead-ladder-e2e-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: w.root, env: GIT_ENV });
  git('init', '-q');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'first');
  return w;
}

/** `TOKEN=$(bulkhead-ladder token create --actor NAME)`: stdout is the token and a newline, the rest goes to stderr. */
function createToken(actor: string): string {
  const made = spawnSync(process.execPath, [LADDER_CLI, 'token', 'create', '--actor', actor, '--config', ws.path('.bulkhead')], { encoding: 'utf8' });
  expect(made.status).toBe(0);
  expect(made.stdout).toMatch(/^[^\s]+\n$/);
  expect(made.stderr).toMatch(new RegExp(`^bulkhead-ladder token: created token \\S+ for ${actor}, printed on stdout this once`));
  return made.stdout.slice(0, -1);
}

describe('bulkhead-ladder as a process', () => {
  it('serves MCP and zz’s tool endpoint on one port, each caller acting as its token’s actor', async () => {
    ws = ladderWorkspace();
    const bob = createToken('bob');
    expect(bob).toMatch(/^bhl_/);
    const http = await startHttpServer({
      script: LADDER_CLI,
      args: ['--root', ws.root, '--config', ws.path('.bulkhead'), '--token-file', ws.path('operator.token')],
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    server = http;
    const base = http.url.slice(0, -'/mcp'.length);
    expect(http.stdout()).toContain(`zz tool endpoint: POST ${base}/api/repos/<owner>/<repo>/tools/<tool> with Authorization: Bearer <token>`);

    const byOperator = await http.client.callTool({ name: 'lane_propose', arguments: { title: 'Release 2.0' } });
    const lane = (byOperator.structuredContent as { lane: { id: string; coordinator: string } }).lane;
    expect(lane.coordinator).toBe('ada');

    const posted = await fetch(`${base}/api/repos/acme/widgets/tools/ask_post`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lane_id: lane.id, kind: 'work', title: 'Write the changelog' }),
    });
    expect(posted.status).toBe(200);
    const { result } = (await posted.json()) as { result: { ask: { id: string; lane_id: string; title: string } } };
    expect(result.ask).toMatchObject({ lane_id: lane.id, title: 'Write the changelog' });

    const asBob = await http.connectAnother({ authorization: `Bearer ${bob}` });
    const claimed = await asBob.callTool({ name: 'ask_claim_next', arguments: { lane_id: lane.id } });
    expect(claimed.structuredContent).toMatchObject({ claim: { ask: { id: result.ask.id, holder: 'bob' } } });
  });

  it('without --token-file, opens /mcp to its kept token and ladder tokens, and says so', async () => {
    ws = ladderWorkspace();
    const carol = createToken('carol');
    const http = await startHttpServer({ script: LADDER_CLI, args: ['--root', ws.root, '--config', ws.path('.bulkhead')], headers: { authorization: `Bearer ${carol}` } });
    server = http;
    expect(http.stdout()).toContain(`"BULKHEAD_AUTH": "Bearer ${http.token}"`);
    expect(http.stdout()).toContain(`bearer token: made now and kept in ${ws.path('.bulkhead/keys/bulkhead-ladder.http.token')} (mode 0600; the next start uses it again; delete the file for a new one); the server's own bearer tokens are accepted too\n`);
    const operator = await http.connectAnother({ authorization: `Bearer ${http.token}` });
    expect((await operator.callTool({ name: 'lane_propose', arguments: { title: 'The operator’s lane' } })).structuredContent).toMatchObject({ lane: { coordinator: 'ada' } });
    const proposed = await http.client.callTool({ name: 'lane_propose', arguments: { title: 'Carol’s lane' } });
    expect(proposed.structuredContent).toMatchObject({ lane: { coordinator: 'carol' } });
    const anonymous = await fetch(http.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(anonymous.status).toBe(401);
  });

  it('acts as the policy actor over stdio', async () => {
    ws = ladderWorkspace();
    server = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root, '--config', ws.path('.bulkhead')] });
    const proposed = await server.client.callTool({ name: 'lane_propose', arguments: { title: 'Over stdio' } });
    expect(proposed.structuredContent).toMatchObject({ lane: { repo: 'acme/widgets', coordinator: 'ada' } });
  });
});
