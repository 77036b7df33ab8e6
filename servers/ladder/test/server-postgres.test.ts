import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { ladderPolicySchema } from '../src/policy.js';
import { createLadderServer, loadLadderPolicy } from '../src/server.js';
import type { SearchHit } from '../src/store/rungs.js';
import type { Ask, Claim, LaneWithHistory } from '../src/store/work-queue.js';
import { freePort } from './free-port.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';
import { ladderWorld, type LadderWorld } from './server-helpers.js';

/** Connections of bulkhead-ladder to `database` still open on the server. */
async function ladderConnections(fresh: FreshDatabase): Promise<number> {
  const url = new URL(fresh.url);
  url.password = fresh.password;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'bulkhead-ladder'", [fresh.name]);
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe('the ladder server on PostgreSQL', () => {
  let fresh: FreshDatabase;
  let world: LadderWorld | undefined;

  beforeAll(async () => {
    fresh = await freshDatabase('server');
  });
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });
  afterAll(async () => {
    await fresh.drop();
  });

  it('serves lanes, asks and rungs from the database, shared by a second server, with no SQLite file made', async () => {
    const shared = await ladderWorld();
    world = shared;
    const policy = { database: fresh.url, password_file: fresh.passwordFile };
    const ada = await shared.connect('ada', policy);
    const lane = (await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Ship widgets' })).structured.lane;
    const ask = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Write the parser' })).structured.ask;
    const written = await ada.call('ladder_write_rung', { rungs: [{ path: 'src/index.js', kind: 'file', commit: 'HEAD', summary: 'The widget parser entry point' }] });
    expect(written.isError).toBe(false);

    // Another server on the same database (another agent): it sees ada's lane and rung, and ada stays the only owner.
    const bob = await shared.connect('bob', policy);
    const claim = (await bob.call<{ claim: Claim | null }>('ask_claim_next', { lane_id: lane.id })).structured.claim;
    expect(claim?.ask).toMatchObject({ id: ask.id, holder: 'bob' });
    const answered = await bob.call<{ ask: Ask }>('ask_answer', { ask_id: ask.id, fence: claim!.fence, answer: 'complete' });
    expect(answered.structured.ask).toMatchObject({ state: 'answered', answered_by: 'bob' });
    const hits = (await bob.call<{ hits: SearchHit[] }>('ladder_search', { query: 'parser' })).structured.hits;
    expect(hits.map((hit) => [hit.path, hit.revision])).toEqual([['src/index.js', 1]]);
    const roles = (await bob.call<{ roles: { principal: string; role: string }[] }>('role_list', {})).structured.roles;
    expect(roles.filter(({ role }) => role === 'owner').map(({ principal }) => principal)).toEqual(['ada']);

    expect(existsSync(join(shared.controlDir, 'ladder.db'))).toBe(false);
  });

  it('migrates once when two servers start together, and a closed server leaves no connection open', async () => {
    const together = await freshDatabase('together');
    const ws = tempWorkspace({}, 'bulkhead-ladder-pg-');
    try {
      const start = (actor: string) =>
        createLadderServer({
          roots: [ws.root],
          controlDir: ws.path('.bulkhead'),
          gate: { kind: 'self', permissions: PermissionGate.load(ws.path('.bulkhead')) },
          audit: auditPolicySchema.parse({ enabled: false }),
          policy: ladderPolicySchema.parse({ actor, database: together.url, password_file: together.passwordFile }),
        });
      const servers = await Promise.all([start('ada'), start('bob')]);
      const admin = new URL(together.url);
      admin.password = together.password;
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        const { rows } = await client.query<{ component: string; version: number }>('SELECT component, version FROM schema_migrations ORDER BY component, version');
        expect(rows).toEqual([
          { component: 'lanes', version: 1 },
          { component: 'rungs', version: 1 },
        ]);
      } finally {
        await client.end();
      }
      expect(await ladderConnections(together)).toBeGreaterThan(0);
      await Promise.all(servers.map((server) => server.close()));
      // pool.end() has closed every connection; the server process behind each may take a moment to leave pg_stat_activity.
      let open = await ladderConnections(together);
      for (let attempt = 0; open > 0 && attempt < 50; attempt++) {
        await new Promise((done) => setTimeout(done, 100));
        open = await ladderConnections(together);
      }
      expect(open).toBe(0);
    } finally {
      ws.cleanup();
      await together.drop();
    }
  });
});

describe('a server that cannot use its PostgreSQL database', () => {
  let ws: TempWorkspace;
  let fresh: FreshDatabase;
  const saved = { PGPASSFILE: process.env.PGPASSFILE, PGPASSWORD: process.env.PGPASSWORD };

  beforeAll(async () => {
    fresh = await freshDatabase('refused');
    // Neither the environment nor a ~/.pgpass of the machine's user may answer for a test that gives no password.
    process.env.PGPASSFILE = '/nonexistent/pgpass';
    delete process.env.PGPASSWORD;
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await fresh.drop();
  });
  afterEach(() => ws?.cleanup());

  async function startFailure(policy: Record<string, unknown>, files: Record<string, string> = {}): Promise<string> {
    ws = tempWorkspace(files, 'bulkhead-ladder-pg-refused-');
    const controlDir = ws.path('.bulkhead');
    const started = createLadderServer({
      roots: [ws.root],
      controlDir,
      gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
      audit: auditPolicySchema.parse({ enabled: false }),
      policy: ladderPolicySchema.parse({ actor: 'ada', ...policy }),
    });
    const error = await started.then(
      async (server) => {
        await server.close();
        throw new Error('the server started');
      },
      (failure: unknown) => failure as Error,
    );
    expect(error.message).not.toContain(fresh.password);
    expect(error.message).not.toContain('\n');
    return error.message;
  }

  const policyFile = () => join(ws.path('.bulkhead'), 'ladder_policy.yaml');

  it('names the URL, the cause and the remedy: a wrong password (from a password_file relative to the control-plane folder)', async () => {
    const message = await startFailure({ database: fresh.url, password_file: 'pg.password' }, { '.bulkhead/pg.password': 'not-the-password\n' });
    expect(message).toBe(
      `cannot use the ladder database ${fresh.url}: authentication failed for user bulkhead; give the right password in PGPASSWORD, password_file in ladder_policy.yaml, or ~/.pgpass (mode 0600; PGPASSFILE names another file)`,
    );
  });

  it('no password anywhere', async () => {
    expect(await startFailure({ database: fresh.url })).toBe(
      `cannot use the ladder database ${fresh.url}: the server asks for a password and none was given; give it in PGPASSWORD, password_file in ladder_policy.yaml, or ~/.pgpass (mode 0600; PGPASSFILE names another file)`,
    );
  });

  it('a database that does not exist', async () => {
    const url = new URL(fresh.url);
    url.pathname = '/no_such_ladder';
    const message = await startFailure({ database: url.toString(), password_file: fresh.passwordFile });
    expect(message).toBe(
      `cannot use the ladder database ${url.toString()}: the database no_such_ladder does not exist; create it (createdb -h 127.0.0.1 -p ${url.port} -U bulkhead no_such_ladder), or correct database in ${policyFile()}`,
    );
  });

  it('no server listening', async () => {
    const port = await freePort();
    const url = `postgres://bulkhead@127.0.0.1:${port}/ladder`;
    expect(await startFailure({ database: url, password_file: fresh.passwordFile })).toBe(
      `cannot use the ladder database ${url}: connection refused: no PostgreSQL server listens at 127.0.0.1:${port}; start it, or correct database in ${policyFile()}`,
    );
  });

  it('a host that is not known', async () => {
    const url = 'postgresql://bulkhead@ladder-db.invalid/ladder';
    expect(await startFailure({ database: url, password_file: fresh.passwordFile })).toBe(
      `cannot use the ladder database postgres://bulkhead@ladder-db.invalid/ladder: the host ladder-db.invalid is not known; correct database in ${policyFile()}`,
    );
  });

  it('a password file that cannot be read', async () => {
    const message = await startFailure({ database: fresh.url, password_file: 'pg.password' });
    expect(message).toBe(`${policyFile()}: password_file ${join(ws.path('.bulkhead'), 'pg.password')} cannot be read: ENOENT: no such file or directory, open '${join(ws.path('.bulkhead'), 'pg.password')}'`);
  });
});

describe('database: in ladder_policy.yaml', () => {
  let ws: TempWorkspace;
  afterEach(() => ws?.cleanup());

  function load(yaml: string): string {
    ws = tempWorkspace({ '.bulkhead/ladder_policy.yaml': yaml }, 'bulkhead-ladder-policy-');
    try {
      loadLadderPolicy(ws.path('.bulkhead'));
    } catch (error) {
      return (error as Error).message;
    }
    return 'loaded';
  }
  const invalid = (line: number, key: string, problem: string) => `${ws.path('.bulkhead/ladder_policy.yaml')}: invalid configuration\n  - \`${key}\` (line ${line}): ${problem}`;
  const PASSWORD_REFUSED = 'the URL holds a password; remove it and give it in PGPASSWORD, in a file named by password_file, or in ~/.pgpass (never in the policy file)';

  it('refuses a URL holding a password, in every spelling, without repeating it', () => {
    for (const url of ['postgres://ladder:s3cret@db.internal:5432/ladder', 'postgresql://ladder:s3cret@db.internal/ladder', 'POSTGRES://:s3cret@db.internal/ladder']) {
      const message = load(`actor: ada\ndatabase: ${url}\n`);
      expect(message).toBe(invalid(2, 'database', PASSWORD_REFUSED));
      expect(message).not.toContain('s3cret');
    }
  });

  it('refuses a URL that names no database', () => {
    expect(load('database: postgres://ladder@db.internal:5432\n')).toBe(invalid(1, 'database', 'postgres://db.internal:5432 names no database; write postgres://user@host:port/database'));
    expect(load('database: postgres://ladder@db.internal/\n')).toBe(invalid(1, 'database', 'postgres://db.internal names no database; write postgres://user@host:port/database'));
  });

  it('refuses password_file and pool_size beside a SQLite file, saying why', () => {
    expect(load('password_file: pg.password\n')).toBe(
      invalid(1, 'password_file', 'only for a PostgreSQL database: database is the SQLite file ladder.db, which takes no password; remove password_file, or set database to postgres://user@host:port/database'),
    );
    expect(load('database: team.db\npool_size: 4\n')).toBe(
      invalid(2, 'pool_size', 'only for a PostgreSQL database: database is the SQLite file team.db, which has no connection pool; remove pool_size, or set database to postgres://user@host:port/database'),
    );
  });

  it('takes a URL without a password, with its password file and pool', () => {
    expect(load('database: postgresql://ladder@db.internal:5432/ladder\npassword_file: pg.password\npool_size: 4\n')).toBe('loaded');
    expect(ladderPolicySchema.parse({}).database).toBe('ladder.db');
  });
});
