import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { freePort } from '../../servers/ladder/test/free-port.js';
import { freshDatabase, type FreshDatabase } from '../../servers/ladder/test/postgres.js';
import { LADDER_CLI } from './helpers.js';

const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };
/** No ~/.pgpass of the machine's user answers for these processes unless a test names one. */
const NO_PGPASS = { PGPASSFILE: '/nonexistent/pgpass' };

let fresh: FreshDatabase;
let ws: TempWorkspace | undefined;
let server: ServerProcess | undefined;

beforeAll(async () => {
  fresh = await freshDatabase('e2e');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
  ws = undefined;
});
afterAll(async () => {
  await fresh.drop();
});

/** A user's folder: a git repository and only .bulkhead/ladder_policy.yaml naming the database. */
function userFolder(policy: string): TempWorkspace {
  const w = tempWorkspace({ 'README.md': '# widgets\n', '.bulkhead/ladder_policy.yaml': `actor: ada\n${policy}`, '.bulkhead/permissions.yaml': 'allow:\n  - ladder\n' }, 'bulkhead-ladder-pg-e2e-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: w.root, env: GIT_ENV });
  git('init', '-q');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'first');
  return w;
}

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [LADDER_CLI, ...args], { cwd: ws!.root, encoding: 'utf8', env: { PATH: process.env['PATH']!, HOME: '/nonexistent', ...NO_PGPASS, ...env } });
}

describe('bulkhead-ladder on PostgreSQL, as a user runs it', () => {
  it('serves over stdio with the password from password_file, PGPASSWORD or a .pgpass file', async () => {
    ws = userFolder(`database: ${fresh.url}\npassword_file: ${fresh.passwordFile}\n`);
    server = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root], env: NO_PGPASS });
    const lane = (await server.client.callTool({ name: 'lane_propose', arguments: { title: 'Ship widgets' } })).structuredContent as { lane: { id: string; coordinator: string } };
    expect(lane.lane.coordinator).toBe('ada');
    expect((await server.client.callTool({ name: 'ladder_write_rung', arguments: { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'What widgets are' }] } })).isError).toBeFalsy();
    const ask = (await server.client.callTool({ name: 'ask_post', arguments: { lane_id: lane.lane.id, kind: 'work', title: 'Write the parser' } })).structuredContent as { ask: { id: string } };
    const claim = (await server.client.callTool({ name: 'ask_claim_next', arguments: { lane_id: lane.lane.id } })).structuredContent as { claim: { fence: number; ask: { id: string } } };
    expect(claim.claim.ask.id).toBe(ask.ask.id);
    const answered = await server.client.callTool({ name: 'ask_answer', arguments: { ask_id: ask.ask.id, fence: claim.claim.fence, answer: 'complete' } });
    expect(answered.structuredContent).toMatchObject({ ask: { state: 'answered' } });
    await server.close();

    writeFileSync(ws.path('.bulkhead/ladder_policy.yaml'), `actor: ada\ndatabase: ${fresh.url}\n`);
    server = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root], env: { ...NO_PGPASS, PGPASSWORD: fresh.password } });
    const search = async () => ((await server!.client.callTool({ name: 'ladder_search', arguments: { query: 'widgets' } })).structuredContent as { hits: { path: string }[] }).hits.map((hit) => hit.path);
    expect(await search()).toEqual(['README.md']);
    await server.close();

    const url = new URL(fresh.url);
    writeFileSync(ws.path('pgpass'), `${url.hostname}:${url.port}:${fresh.name}:bulkhead:${fresh.password}\n`, { mode: 0o600 });
    server = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root], env: { PGPASSFILE: ws.path('pgpass') } });
    expect(await search()).toEqual(['README.md']);
  });

  it('refuses to start, in one line, with a password in the URL or a wrong password', () => {
    ws = userFolder(`database: postgres://bulkhead:s3cret@127.0.0.1:5432/ladder\n`);
    const inUrl = cli(['--root', ws.root]);
    expect(inUrl.status).toBe(2);
    expect(inUrl.stderr).toBe(
      `bulkhead-ladder: ${ws.path('.bulkhead/ladder_policy.yaml')}: invalid configuration\n  - \`database\` (line 2): the URL holds a password; remove it and give it in PGPASSWORD, in a file named by password_file, or in ~/.pgpass (never in the policy file)\n`,
    );
    writeFileSync(ws.path('.bulkhead/ladder_policy.yaml'), `actor: ada\ndatabase: ${fresh.url}\n`);
    const wrong = cli(['--root', ws.root], { PGPASSWORD: 'not-the-password' });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toBe(
      `bulkhead-ladder: cannot use the ladder database ${fresh.url}: authentication failed for user bulkhead; give the right password in PGPASSWORD, password_file in ladder_policy.yaml, or ~/.pgpass (mode 0600; PGPASSFILE names another file)\n`,
    );
    const missing = new URL(fresh.url);
    missing.pathname = '/no_such_ladder';
    writeFileSync(ws.path('.bulkhead/ladder_policy.yaml'), `actor: ada\ndatabase: ${missing.toString()}\n`);
    expect(cli(['--root', ws.root], { PGPASSWORD: fresh.password }).stderr).toBe(
      `bulkhead-ladder: cannot use the ladder database ${missing.toString()}: the database no_such_ladder does not exist; create it (createdb -h 127.0.0.1 -p ${missing.port} -U bulkhead no_such_ladder), or correct database in ${ws.path('.bulkhead/ladder_policy.yaml')}\n`,
    );
  });

  it('refuses to start when no server listens', async () => {
    ws = userFolder('');
    const port = await freePort();
    writeFileSync(ws.path('.bulkhead/ladder_policy.yaml'), `actor: ada\ndatabase: postgres://bulkhead@127.0.0.1:${port}/ladder\n`);
    const refused = cli(['--root', ws.root], { PGPASSWORD: fresh.password });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(`bulkhead-ladder: cannot use the ladder database postgres://bulkhead@127.0.0.1:${port}/ladder: connection refused: no PostgreSQL server listens at 127.0.0.1:${port}; start it, or correct database in ${ws.path('.bulkhead/ladder_policy.yaml')}\n`);
  });

  it('copies a SQLite ladder made by the server into PostgreSQL, where a server reads it and takes its token', async () => {
    const target = await freshDatabase('e2e_copy');
    try {
      ws = userFolder('');
      server = await startStdioServer({ script: LADDER_CLI, args: ['--root', ws.root], env: NO_PGPASS });
      const lane = ((await server.client.callTool({ name: 'lane_propose', arguments: { title: 'Ship widgets' } })).structuredContent as { lane: { id: string } }).lane;
      await server.client.callTool({ name: 'ladder_write_rung', arguments: { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'What widgets are' }] } });
      const ask = ((await server.client.callTool({ name: 'ask_post', arguments: { lane_id: lane.id, kind: 'work', title: 'Write the parser' } })).structuredContent as { ask: { id: string } }).ask;
      const claim = ((await server.client.callTool({ name: 'ask_claim_next', arguments: { lane_id: lane.id } })).structuredContent as { claim: { fence: number } }).claim;
      await server.client.callTool({ name: 'ask_answer', arguments: { ask_id: ask.id, fence: claim.fence, answer: 'complete' } });
      await server.close();
      server = undefined;
      const token = cli(['token', 'create', '--actor', 'bob']).stdout.trim();

      const argv = ['copy', '--from', 'sqlite:.bulkhead/ladder.db', '--to', target.url, '--password-file', target.passwordFile];
      const copied = cli(argv);
      expect(copied.status).toBe(0);
      expect(copied.stdout).toContain('  table asks: 1 row\n');
      expect(copied.stdout).toContain('  table tokens: 1 row\n');
      expect(cli(argv).stderr).toBe(`bulkhead-ladder copy: ${target.url} is not empty: copy into a new database, or drop its tables first\n`);

      writeFileSync(ws.path('.bulkhead/ladder_policy.yaml'), `actor: ada\ndatabase: ${target.url}\npassword_file: ${target.passwordFile}\n`);
      const http = await startHttpServer({ script: LADDER_CLI, args: ['--root', ws.root], env: NO_PGPASS, headers: { authorization: `Bearer ${token}` } });
      server = http;
      const hits = (await http.client.callTool({ name: 'ladder_search', arguments: { query: 'widgets' } })).structuredContent as { hits: { path: string }[] };
      expect(hits.hits.map((hit) => hit.path)).toEqual(['README.md']);
      const got = (await http.client.callTool({ name: 'lane_get', arguments: { lane_id: lane.id } })).structuredContent as { lane: { title: string; history: unknown[] } };
      expect(got.lane.title).toBe('Ship widgets');
      expect(got.lane.history.length).toBeGreaterThan(0);
      await http.close();
      server = undefined;
    } finally {
      await target.drop();
    }
  });

  it('migrates (then finds it up to date), and a token made by the CLI opens --http', async () => {
    const own = await freshDatabase('e2e_tokens');
    try {
      ws = userFolder(`database: ${own.url}\npassword_file: ${own.passwordFile}\n`);
      expect(cli(['migrate']).stdout).toBe(`the PostgreSQL database ${own.url}\n  lanes: version 1, applied 1\n  rungs: version 1, applied 1\n`);
      expect(cli(['migrate']).stdout).toBe(`the PostgreSQL database ${own.url}\n  lanes: version 1, up to date\n  rungs: version 1, up to date\n`);
      const made = cli(['token', 'create', '--actor', 'bob']);
      expect(made.status).toBe(0);
      const token = made.stdout.trim();
      const http = await startHttpServer({ script: LADDER_CLI, args: ['--root', ws.root], env: NO_PGPASS, headers: { authorization: `Bearer ${token}` } });
      server = http;
      const proposed = await http.client.callTool({ name: 'lane_propose', arguments: { title: 'Bob’s lane' } });
      expect(proposed.structuredContent).toMatchObject({ lane: { coordinator: 'bob' } });
      await http.close();
      server = undefined;
    } finally {
      await own.drop();
    }
  });
});
