import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { runCopyCommand } from '../src/copy-cli.js';
import { runMigrateCommand } from '../src/migrate-cli.js';
import { LANES_COPY } from '../src/store/pg/lanes-schema.js';
import { RUNGS_COPY } from '../src/store/pg/rungs-schema.js';
import type { Ask, Claim, LaneWithHistory } from '../src/store/work-queue.js';
import { runTokenCommand } from '../src/token-cli.js';
import { freePort } from './free-port.js';
import { commit } from './ladder-helpers.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';
import { ladderWorld, type LadderClient, type LadderWorld } from './server-helpers.js';

type Command = typeof runCopyCommand;

async function run(command: Command, argv: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await command(argv, cwd, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** BIGINT (times, counts) as numbers, as the ladder's own pool reads them. */
const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format)) } as pg.CustomTypesConfig;

/** A client of the fresh database, as its owner. */
async function connect(fresh: FreshDatabase): Promise<pg.Client> {
  const url = new URL(fresh.url);
  url.password = fresh.password;
  const client = new pg.Client({ connectionString: url.toString(), types });
  await client.connect();
  return client;
}

/** A statement on the fresh database, as its owner. */
async function sql<R extends pg.QueryResultRow>(fresh: FreshDatabase, text: string, params: unknown[] = []): Promise<R[]> {
  const client = await connect(fresh);
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

const TABLES = [...LANES_COPY.tables, ...RUNGS_COPY.tables];

/** Every row of every ladder table, each table's rows in one order whatever the backend returned. */
function sorted(rows: unknown[][]): string[] {
  return rows.map((row) => JSON.stringify(row)).sort();
}

function fileRows(path: string): Record<string, string[]> {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(TABLES.map((table) => [table.table, sorted(db.prepare(table.sqliteSelect).raw().all() as unknown[][])]));
  } finally {
    db.close();
  }
}

async function databaseRows(fresh: FreshDatabase): Promise<Record<string, string[]>> {
  const client = await connect(fresh);
  try {
    const tables: Record<string, string[]> = {};
    for (const table of TABLES) tables[table.table] = sorted((await client.query({ text: `SELECT ${table.columns.join(', ')} FROM ${table.table}`, rowMode: 'array' })).rows as unknown[][]);
    return tables;
  } finally {
    await client.end();
  }
}

const fingerprint = (path: string) => ({ sha256: createHash('sha256').update(readFileSync(path)).digest('hex'), mtimeMs: statSync(path).mtimeMs, size: statSync(path).size });

describe('bulkhead-ladder migrate', () => {
  let ws: TempWorkspace;
  afterEach(() => ws?.cleanup());

  it('makes a missing SQLite file and says so, then finds it up to date', async () => {
    ws = tempWorkspace({ '.bulkhead/ladder_policy.yaml': 'database: team/ladder.db\n' }, 'bulkhead-ladder-migrate-');
    const file = ws.path('.bulkhead/team/ladder.db');
    expect(await run(runMigrateCommand, [], ws.root)).toEqual({ code: 0, stdout: `created the SQLite file ${file}\n  lanes: version 1, applied 1\n  rungs: version 1, applied 1\n`, stderr: '' });
    expect(await run(runMigrateCommand, ['--config', '.bulkhead'], ws.root)).toEqual({ code: 0, stdout: `the SQLite file ${file}\n  lanes: version 1, up to date\n  rungs: version 1, up to date\n`, stderr: '' });
  });

  it('refuses a SQLite file a newer bulkhead-ladder migrated, and writes nothing to it', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-migrate-');
    const file = ws.path('.bulkhead/ladder.db');
    expect((await run(runMigrateCommand, [], ws.root)).code).toBe(0);
    const db = new Database(file);
    db.prepare("INSERT INTO schema_migrations (component, version, applied_at) VALUES ('rungs', 7, 0)").run();
    db.close();
    const before = fingerprint(file);
    expect(await run(runMigrateCommand, [], ws.root)).toEqual({ code: 2, stdout: '', stderr: `bulkhead-ladder migrate: ${file} holds rungs schema version 7, newer than this bulkhead-ladder knows (1); upgrade bulkhead-ladder\n` });
    expect(fingerprint(file).sha256).toBe(before.sha256);
  });

  it('migrates a PostgreSQL database, refuses one a newer bulkhead-ladder migrated, and reports one it cannot reach as the server does', async () => {
    const fresh = await freshDatabase('migrate');
    try {
      ws = tempWorkspace({ '.bulkhead/ladder_policy.yaml': `database: ${fresh.url}\npassword_file: ${fresh.passwordFile}\n` }, 'bulkhead-ladder-migrate-');
      expect(await run(runMigrateCommand, [], ws.root)).toEqual({ code: 0, stdout: `the PostgreSQL database ${fresh.url}\n  lanes: version 1, applied 1\n  rungs: version 1, applied 1\n`, stderr: '' });
      await sql(fresh, "INSERT INTO schema_migrations (component, version, applied_at) VALUES ('lanes', 4, 0)");
      expect(await run(runMigrateCommand, [], ws.root)).toEqual({ code: 2, stdout: '', stderr: `bulkhead-ladder migrate: ${fresh.url} holds lanes schema version 4, newer than this bulkhead-ladder knows (1); upgrade bulkhead-ladder\n` });

      const port = await freePort();
      writeFileSync(ws.path('.bulkhead/ladder_policy.yaml'), `database: postgres://bulkhead@127.0.0.1:${port}/ladder\n`);
      expect(await run(runMigrateCommand, [], ws.root)).toEqual({
        code: 2,
        stdout: '',
        stderr: `bulkhead-ladder migrate: cannot use the ladder database postgres://bulkhead@127.0.0.1:${port}/ladder: connection refused: no PostgreSQL server listens at 127.0.0.1:${port}; start it, or correct database in ${ws.path('.bulkhead/ladder_policy.yaml')}\n`,
      });
    } finally {
      await fresh.drop();
    }
  });

  it('explains a command line it cannot run, with its usage', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-migrate-');
    const extra = await run(runMigrateCommand, ['now'], ws.root);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/^bulkhead-ladder migrate: migrate takes only --config DIR \(not now\)\n\nusage: bulkhead-ladder migrate \[--config DIR\]\n/);
    expect((await run(runMigrateCommand, ['--force'], ws.root)).stderr).toMatch(/^bulkhead-ladder migrate: Unknown option '--force'\n\nusage: /);
    expect(await run(runMigrateCommand, ['--help'], ws.root)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^usage: bulkhead-ladder migrate \[--config DIR\]\n/), stderr: '' });
  });
});

describe('bulkhead-ladder copy', () => {
  let world: LadderWorld;
  let file: string;
  let secret: string;
  /** What the file's server answered to reading calls, to be answered the same from the copy. */
  let readsOnFile: unknown[];
  let laneId: string;
  const reads = async (client: LadderClient) =>
    Promise.all([
      client.call('ladder_search', { query: 'widget parser' }),
      client.call('ladder_read', { path: 'src/index.js' }),
      client.call('lane_get', { lane_id: laneId }),
      client.call('ask_query_claimable', { lane_id: laneId }),
      client.call('role_list', {}),
    ]).then((calls) =>
      calls.map((call) => {
        // Relevance is each backend's own (bm25 on SQLite, ts_rank on PostgreSQL); the hits and their order are the same.
        const { hits, ...rest } = call.structured as { hits?: Record<string, unknown>[] };
        return hits ? { ...rest, hits: hits.map(({ score: _score, ...hit }) => hit) } : call.structured;
      }),
    );

  /** A ladder made through the server: rungs with history, a lane, asks with a claim, an answer, a dependency and a release, a role, a token. */
  beforeAll(async () => {
    world = await ladderWorld({ 'README.md': '# widgets\n', 'src/index.js': 'export {};\n', 'src/parse.js': 'export function parse() {}\n' });
    file = join(world.controlDir, 'ladder.db');
    const ada = await world.connect('ada');
    const write = (path: string, summary: string) => ada.call('ladder_write_rung', { rungs: [{ path, kind: 'file', commit: 'HEAD', summary }] });
    await write('src/index.js', 'Entry point of the widget parser');
    await write('src/parse.js', 'Parses widget descriptions');
    commit(world.repoDir, 'second', { 'src/index.js': 'export * from "./parse.js";\n' });
    await write('src/index.js', 'Entry point re-exporting the widget parser');
    const lane = (await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Ship widgets', paths: ['src/**'] })).structured.lane;
    await ada.call('role_grant', { principal: 'bob', role: 'contributor' });
    const first = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Write the parser', idempotency_key: 'parser' })).structured.ask;
    await ada.call('ask_post', { lane_id: lane.id, kind: 'work', title: 'Document the parser', depends_on: [first.id] });
    const released = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Benchmark it', priority: 9 })).structured.ask;
    const bob = await world.connect('bob');
    const claim = (await bob.call<{ claim: Claim }>('ask_claim', { ask_id: first.id })).structured.claim;
    await bob.call('ask_answer', { ask_id: first.id, fence: claim.fence, answer: 'complete', note: 'parsed' });
    const second = (await bob.call<{ claim: Claim }>('ask_claim', { ask_id: released.id })).structured.claim;
    await bob.call('ask_release', { ask_id: released.id, fence: second.fence });
    laneId = lane.id;
    readsOnFile = await reads(bob);
    const token = await run(runTokenCommand, ['create', '--actor', 'carol', '--config', world.controlDir], world.ws.root);
    secret = token.stdout.trim();
  });
  /** Databases servers of `world` are connected to: dropped once those servers are closed. */
  const dropAfterWorld: FreshDatabase[] = [];
  afterAll(async () => {
    await world.close();
    for (const fresh of dropAfterWorld) await fresh.drop();
  });

  it('copies every row of every table in one go, leaves the file as it was, and the target carries on past the copied ids', async () => {
    const fresh = await freshDatabase('copy');
    dropAfterWorld.push(fresh);
    const before = fingerprint(file);
    const copied = await run(runCopyCommand, ['--from', `sqlite:${file}`, '--to', fresh.url, '--password-file', fresh.passwordFile], '/');
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    const counts = Object.entries(fileRows(file)).map(([table, rows]) => `  table ${table}: ${rows.length} ${rows.length === 1 ? 'row' : 'rows'}\n`);
    expect(copied.stdout).toBe(`copied ${file} into ${fresh.url} (one transaction, counts checked)\n  schema lanes: version 1, applied 1\n  schema rungs: version 1, applied 1\n${counts.join('')}`);
    expect(counts).toContain('  table rung_revisions: 3 rows\n');
    expect(counts).toContain('  table tokens: 1 row\n');
    expect(fingerprint(file)).toEqual(before);
    expect(await databaseRows(fresh)).toEqual(fileRows(file));
    // Analyzed after the commit: a table never analyzed has reltuples -1 and the planner guesses.
    expect(await sql(fresh, "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname = ANY($1) AND reltuples < 0", [TABLES.map((table) => table.table)])).toEqual([]);

    // A server on the copy reads what the file's server read, and writes after it without colliding.
    expect(await reads(await world.connect('bob', { database: fresh.url, password_file: fresh.passwordFile }))).toEqual(readsOnFile);
    const onPg = await world.connect('ada', { database: fresh.url, password_file: fresh.passwordFile });
    const rewritten = await onPg.call<{ rungs: { revision: number }[] }>('ladder_write_rung', { rungs: [{ path: 'src/index.js', kind: 'file', commit: 'HEAD', summary: 'Third summary' }] });
    expect(rewritten.structured.rungs.map((rung) => rung.revision)).toEqual([3]);
    const lane = (await onPg.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'After the move' })).structured.lane;
    expect((await onPg.call('ask_post', { lane_id: lane.id, kind: 'work', title: 'A new ask' })).isError).toBe(false);
    expect((await onPg.call('ladder_write_rung', { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'A new rung' }] })).isError).toBe(false);
    expect(await sql(fresh, 'SELECT actor FROM tokens WHERE secret_sha256 = $1', [createHash('sha256').update(secret).digest('hex')])).toEqual([{ actor: 'carol' }]);
  });

  it('refuses a target that holds ladder rows, and writes nothing into it', async () => {
    const fresh = await freshDatabase('copy_full');
    try {
      const argv = ['--from', `sqlite:${file}`, '--to', fresh.url, '--password-file', fresh.passwordFile];
      expect((await run(runCopyCommand, argv, '/')).code).toBe(0);
      const before = await databaseRows(fresh);
      expect(await run(runCopyCommand, argv, '/')).toEqual({ code: 2, stdout: '', stderr: `bulkhead-ladder copy: ${fresh.url} is not empty: copy into a new database, or drop its tables first\n` });
      // Only a token row (any one table) is enough to refuse.
      await sql(fresh, `TRUNCATE ${TABLES.map((table) => table.table).join(', ')}`);
      await sql(fresh, "INSERT INTO tokens (id, actor, secret_sha256, created_at) VALUES ('tok-1', 'eve', 'x', 0)");
      expect((await run(runCopyCommand, argv, '/')).stderr).toBe(`bulkhead-ladder copy: ${fresh.url} is not empty: copy into a new database, or drop its tables first\n`);
      expect((await databaseRows(fresh)).tokens).toEqual(['["tok-1","eve","x",0,null,null]']);
      expect(before.asks!.length).toBeGreaterThan(0);
    } finally {
      await fresh.drop();
    }
  });

  it('refuses a file that is not a ladder database of this version, before touching the target', async () => {
    const fresh = await freshDatabase('copy_refused');
    const ws = tempWorkspace({ 'notes.txt': 'not a database at all, just some words that fill more than one hundred bytes of a file '.repeat(3) }, 'bulkhead-ladder-copy-');
    try {
      const copy = (path: string) => run(runCopyCommand, ['--from', `sqlite:${path}`, '--to', fresh.url, '--password-file', fresh.passwordFile], ws.root);
      const refusal = (message: string) => ({ code: 2, stdout: '', stderr: `bulkhead-ladder copy: ${message}\n` });

      expect(await copy('notes.txt')).toEqual(refusal(`${ws.path('notes.txt')} is not a ladder database (file is not a database)`));
      const other = new Database(ws.path('other.db'));
      other.exec('CREATE TABLE things (id INTEGER PRIMARY KEY)');
      other.close();
      expect(await copy('other.db')).toEqual(refusal(`${ws.path('other.db')} is not a ladder database: it has no schema_migrations table`));
      const half = new Database(ws.path('half.db'));
      half.exec("CREATE TABLE schema_migrations (component TEXT, version INTEGER, applied_at INTEGER); INSERT INTO schema_migrations VALUES ('lanes', 1, 0)");
      half.close();
      expect(await copy('half.db')).toEqual(refusal(`${ws.path('half.db')} is not a ladder database: it has no rungs schema`));
      const newer = ws.path('newer.db');
      const live = new Database(file, { readonly: true });
      live.exec(`VACUUM INTO '${newer}'`);
      live.close();
      const raised = new Database(newer);
      raised.prepare("INSERT INTO schema_migrations (component, version, applied_at) VALUES ('lanes', 2, 0)").run();
      raised.close();
      expect(await copy('newer.db')).toEqual(refusal(`${newer} holds lanes schema version 2, newer than this bulkhead-ladder knows (1); upgrade bulkhead-ladder`));
      expect(await copy('missing.db')).toEqual(refusal(`${ws.path('missing.db')} does not exist; --from takes sqlite:PATH of the ladder's database file`));

      const tables = await sql<{ n: number }>(fresh, "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'");
      expect(tables).toEqual([{ n: 0 }]);
    } finally {
      ws.cleanup();
      await fresh.drop();
    }
  });

  it('refuses a password in --to, a target it cannot reach, and command lines it cannot run', async () => {
    const copy = (...argv: string[]) => run(runCopyCommand, argv, '/');
    const from = `sqlite:${file}`;
    expect(await copy('--from', from, '--to', 'postgres://ladder:s3cret@db.internal/ladder')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'bulkhead-ladder copy: --to: the URL holds a password; remove it and give it in PGPASSWORD, in a file named by --password-file, or in ~/.pgpass (never in the policy file)\n',
    });
    const port = await freePort();
    expect(await copy('--from', from, '--to', `postgresql://bulkhead@127.0.0.1:${port}/ladder`)).toEqual({
      code: 2,
      stdout: '',
      stderr: `bulkhead-ladder copy: cannot use the ladder database postgres://bulkhead@127.0.0.1:${port}/ladder: connection refused: no PostgreSQL server listens at 127.0.0.1:${port}; start it, or correct --to\n`,
    });
    const usage = async (argv: string[], problem: string) => {
      const refused = await copy(...argv);
      expect(refused.code).toBe(2);
      expect(refused.stderr.startsWith(`bulkhead-ladder copy: ${problem}\n\nusage: bulkhead-ladder copy --from sqlite:PATH`)).toBe(true);
    };
    await usage(['--from', from], 'copy takes --from sqlite:PATH and --to postgres://user@host:port/database');
    await usage(['--from', file, '--to', 'postgres://u@h/db'], `--from takes sqlite:PATH, the ladder's SQLite file (not ${file})`);
    await usage(['--from', 'sqlite:', '--to', 'postgres://u@h/db'], "--from takes sqlite:PATH, the ladder's SQLite file (not sqlite:)");
    await usage(['--from', from, '--to', 'mysql://u@h/db'], '--to takes postgres://user@host:port/database (or postgresql://)');
    await usage(['--from', from, '--to', 'postgres://u@h/db', 'now'], 'copy takes only its flags (not now)');
    expect(fingerprint(file).size).toBeGreaterThan(0);
  });
});
