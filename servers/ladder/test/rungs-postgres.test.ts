import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/database.js';
import { PgDatabase } from '../src/store/pg/database.js';
import { migratePgRungs, RUNGS_COPY } from '../src/store/pg/rungs-schema.js';
import { PgRungStore } from '../src/store/pg/rungs.js';
import type { RungWrite } from '../src/store/rungs.js';
import { SqliteRungStore } from '../src/store/rungs-sqlite.js';
import { freshDatabase, testPostgres, type FreshDatabase } from './postgres.js';

const CONFLICT_TAIL = ' — someone wrote first; read it again and merge. Nothing in this write was saved.';

function rung(path: string, summary: string, extra: Partial<RungWrite> = {}): RungWrite {
  return { path, kind: 'file', commit: 'c'.repeat(40), objectId: 'o'.repeat(40), summary, ...extra };
}

/** A connection as the test server's superuser, outside any PgDatabase: to hold locks and make roles. */
async function adminClient(database: string): Promise<pg.Client> {
  const server = testPostgres();
  const url = new URL(server.url);
  url.pathname = `/${database}`;
  url.password = server.password;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return client;
}

let database: FreshDatabase;
const pools: PgDatabase[] = [];
function pool(url = database.url, passwordFile = database.passwordFile): PgDatabase {
  const db = new PgDatabase({ url, passwordFile, poolSize: 2 });
  pools.push(db);
  return db;
}

beforeAll(async () => {
  database = await freshDatabase('rungs_pg');
});
afterAll(async () => {
  await Promise.all(pools.splice(0).map((db) => db.close()));
  await database.drop();
});

describe('two servers writing the same paths at once', () => {
  /**
   * Runs the writes of two servers (two pools) at the same moment: a third connection holds an
   * exclusive lock on rungs until both writes are waiting for it, so both start deciding together.
   */
  async function race(writes: readonly ((store: PgRungStore) => Promise<unknown>)[]): Promise<PromiseSettledResult<unknown>[]> {
    const stores = await Promise.all(writes.map(() => PgRungStore.open(pool())));
    const blocker = await adminClient(database.name);
    const observer = pool();
    try {
      await blocker.query('BEGIN; LOCK TABLE rungs IN ACCESS EXCLUSIVE MODE');
      const settled = Promise.allSettled(writes.map((write, i) => write(stores[i]!)));
      const waiting = async () =>
        (
          await observer.one<{ waiting: number }>(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'bulkhead-ladder' AND wait_event_type = 'Lock'",
          )
        )!.waiting;
      while ((await waiting()) < writes.length) await new Promise((resolve) => setTimeout(resolve, 5));
      await blocker.query('COMMIT');
      return await settled;
    } finally {
      await blocker.end();
    }
  }

  function outcomes(settled: readonly PromiseSettledResult<unknown>[]): { written: unknown[]; refused: unknown[] } {
    return {
      written: settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])),
      refused: settled.flatMap((result) => (result.status === 'rejected' ? [result.reason] : [])),
    };
  }

  it('against the same expected revision: one wins, the other is refused naming the new revision', async () => {
    const store = await PgRungStore.open(pool());
    await store.write('acme/race1', [rung('src/index.js', 'v1')], 'ada');
    const { written, refused } = outcomes(await race([(s) => s.write('acme/race1', [rung('src/index.js', 'by ada', { expectedRevision: 1 })], 'ada'), (s) => s.write('acme/race1', [rung('src/index.js', 'by bob', { expectedRevision: 1 })], 'bob')]));
    expect(written).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ message: `src/index.js is at revision 2; you expected 1${CONFLICT_TAIL}`, code: 'revision_conflict' });
    const history = await store.history('acme/race1', 'src/index.js');
    expect(history.map((entry) => entry.revision)).toEqual([2, 1]);
    expect(history[0]!.summary).toBe((written[0] as { summary: string }[])[0]!.summary);
  });

  it('creating the same rung (expected revision 0): one creates it, the other is refused', async () => {
    const store = await PgRungStore.open(pool());
    const { written, refused } = outcomes(await race([(s) => s.write('acme/race2', [rung('README.md', 'by ada', { expectedRevision: 0 })], 'ada'), (s) => s.write('acme/race2', [rung('README.md', 'by bob', { expectedRevision: 0 })], 'bob')]));
    expect(written).toHaveLength(1);
    expect(refused[0]).toMatchObject({ message: `README.md is at revision 1; you expected 0${CONFLICT_TAIL}`, code: 'revision_conflict' });
    expect(await store.history('acme/race2', 'README.md')).toHaveLength(1);
    expect((await store.get('acme/race2', 'README.md'))!.summary).toBe((written[0] as { summary: string }[])[0]!.summary);
  });

  it('blind first writes of the same paths in opposite orders both land, one after the other, without a deadlock', async () => {
    const store = await PgRungStore.open(pool());
    const { written, refused } = outcomes(await race([(s) => s.write('acme/race3', [rung('a.js', 'ada a'), rung('b.js', 'ada b')], 'ada'), (s) => s.write('acme/race3', [rung('b.js', 'bob b'), rung('a.js', 'bob a')], 'bob')]));
    expect(refused).toEqual([]);
    expect(written).toHaveLength(2);
    for (const path of ['a.js', 'b.js']) expect((await store.history('acme/race3', path)).map((entry) => entry.revision)).toEqual([2, 1]);
    const [a, b] = [await store.get('acme/race3', 'a.js'), await store.get('acme/race3', 'b.js')];
    expect(a!.author).toBe(b!.author);
  });
});

describe('query text is never tsquery syntax', () => {
  const REPO = 'acme/syntax';
  let store: PgRungStore;
  beforeAll(async () => {
    store = await PgRungStore.open(pool());
    await store.write(
      REPO,
      [
        rung('src/index.js', 'Retries failed requests with backoff', { body: 'The entry point.' }),
        rung('src/util.js', 'Helpers for strings and dates', { body: 'It also retries requests.' }),
        rung('README.md', 'Project overview', { body: 'Install and use.' }),
        rung('docs/gadget.md', 'Gadget retries overview'),
        rung('src/parser/lexer.ts', 'Tokens of the grammar', { body: 'Le café est prêt, à la française.' }),
      ],
      'ada',
    );
  });
  const paths = async (query: string) => (await store.search(query, { repo: REPO, limit: 20 })).hits.map((hit) => hit.path).sort();
  const RETRIES = ['docs/gadget.md', 'src/index.js', 'src/util.js'];

  it.each([
    ["'", []],
    ["retries'", RETRIES],
    ["'retries", RETRIES],
    ['"retries"', RETRIES],
    ['!retries', RETRIES],
    ['(retries', RETRIES],
    ['retries)', RETRIES],
    ['retries\\', RETRIES],
    ['\\retries', RETRIES],
    ['retries:*', RETRIES],
    ['retri*', RETRIES],
    ['*', []],
    ['retries <-> backoff', ['src/index.js']],
    ['requests&with', ['src/index.js']],
    ['retries&backoff', []],
    ['retries|overview', ['docs/gadget.md']],
    ['retries:A', []],
    ['retries\0', RETRIES],
    ['\0', []],
    ['retries\0overview', ['docs/gadget.md']],
    ["retri'||'es", []],
  ] as const)('%j finds %j', async (query, expected) => {
    expect(await paths(query)).toEqual(expected);
  });

  it('very long input: its first 32 terms, and a word too long for the index matches nothing', async () => {
    expect(await paths('retries '.repeat(20_000))).toEqual(RETRIES);
    // A 33rd term is left out: overview would narrow the hits to one.
    expect(await paths(`${'retries '.repeat(32)}overview`)).toEqual(RETRIES);
    expect(await paths('x'.repeat(100_000))).toEqual([]);
    expect(await paths(`retries ${'é'.repeat(1_500)}`)).toEqual([]);
  });

  it('path words are split as SQLite splits them, diacritics are folded, words are stemmed, and snippets bracket the matches', async () => {
    expect(await paths('lexer')).toEqual(['src/parser/lexer.ts']);
    expect(await paths('parser/lexer.ts')).toEqual(['src/parser/lexer.ts']);
    expect(await paths('lex*')).toEqual(['src/parser/lexer.ts']);
    expect(await paths('cafe francaise')).toEqual(['src/parser/lexer.ts']);
    expect(await paths('CAFÉ PRET')).toEqual(['src/parser/lexer.ts']);
    expect(await paths('token grammars')).toEqual(['src/parser/lexer.ts']);
    const [hit] = (await store.search('lexer', { repo: REPO, limit: 1 })).hits;
    expect(hit!.snippet).toBe('src/parser/[lexer].ts');
    const [body] = (await store.search('cafe', { repo: REPO, limit: 1 })).hits;
    expect(body!.snippet).toBe('Le [café] est prêt, à la française.');
  });
});

describe('writes PostgreSQL cannot store', () => {
  it.each([
    [[rung('README.md', 'a\0b')], 'rungs[0] (README.md): summary holds a NUL character (U+0000), which PostgreSQL cannot store; remove it'],
    [[rung('a.md', 'fine'), rung('README.md', 'fine', { body: 'x\0' })], 'rungs[1] (README.md): body holds a NUL character (U+0000), which PostgreSQL cannot store; remove it'],
  ] as const)('are refused before anything is written: %#', async (rungs, message) => {
    const store = await PgRungStore.open(pool());
    await expect(store.write('acme/nul', rungs, 'ada')).rejects.toMatchObject({ message, code: 'bad_argument' });
    expect(await store.list('acme/nul')).toEqual([]);
  });
});

describe('the migration', () => {
  const roles: string[] = [];
  const databases: FreshDatabase[] = [];
  let ws: TempWorkspace;
  beforeAll(() => {
    ws = tempWorkspace({}, 'bulkhead-pg-roles-');
  });
  afterAll(async () => {
    await Promise.all(pools.splice(0).map((db) => db.close()));
    for (const made of databases) await made.drop();
    const admin = await adminClient('postgres');
    try {
      for (const role of roles) await admin.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await admin.end();
    }
    ws.cleanup();
  });

  /** A role that may log in and is no superuser, and a password file for it. */
  async function makeRole(prefix: string): Promise<{ role: string; passwordFile: string }> {
    const role = `${prefix}_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    const admin = await adminClient('postgres');
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB PASSWORD '${password}'`);
    } finally {
      await admin.end();
    }
    roles.push(role);
    const passwordFile = ws.path(role);
    writeFileSync(passwordFile, `${password}\n`);
    return { role, passwordFile };
  }

  function asRole(made: FreshDatabase, role: string, passwordFile: string): PgDatabase {
    const url = new URL(made.url);
    url.username = role;
    return pool(url.toString(), passwordFile);
  }

  it('run twice applies nothing the second time', async () => {
    const made = await freshDatabase('rungs_twice');
    databases.push(made);
    const db = pool(made.url, made.passwordFile);
    expect(await migratePgRungs(db)).toEqual({ component: 'rungs', version: 1, applied: [1] });
    expect(await migratePgRungs(db)).toEqual({ component: 'rungs', version: 1, applied: [] });
    expect(await db.rows("SELECT version FROM schema_migrations WHERE component = 'rungs'")).toEqual([{ version: 1 }]);
    expect(await db.rows("SELECT cfgname FROM pg_ts_config WHERE cfgname = 'ladder_search'")).toEqual([{ cfgname: 'ladder_search' }]);
  });

  it('works for a database owner who is no superuser: it creates unaccent itself', async () => {
    const { role, passwordFile } = await makeRole('ladder_owner');
    const made = await freshDatabase('rungs_owner');
    databases.push(made);
    const admin = await adminClient(made.name);
    try {
      await admin.query(`ALTER DATABASE ${made.name} OWNER TO ${role}`);
    } finally {
      await admin.end();
    }
    const db = asRole(made, role, passwordFile);
    expect(await db.one('SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).toEqual({ rolsuper: false });
    const store = await PgRungStore.open(db);
    await store.write('acme/owner', [rung('README.md', 'Le café')], 'ada');
    expect((await store.search('cafe', { limit: 5 })).hits.map((hit) => hit.snippet)).toEqual(['Le [café]']);
  });

  it('a user who may make tables but not unaccent is told who must; once it exists, in any schema, that user migrates', async () => {
    const { role, passwordFile } = await makeRole('ladder_user');
    const made = await freshDatabase('rungs_user');
    databases.push(made);
    const grant = async (sql: string) => {
      const admin = await adminClient(made.name);
      try {
        await admin.query(sql);
      } finally {
        await admin.end();
      }
    };
    await grant(`GRANT CREATE ON SCHEMA public TO ${role}`);
    const db = asRole(made, role, passwordFile);
    await expect(migratePgRungs(db)).rejects.toThrow(
      `the ladder's search needs the unaccent extension, and ${role} may not create it here: have the database owner run CREATE EXTENSION unaccent in ${made.name}, then start again`,
    );
    await grant(`CREATE SCHEMA extensions; CREATE EXTENSION unaccent SCHEMA extensions; GRANT USAGE ON SCHEMA extensions TO ${role}`);
    const store = await PgRungStore.open(db);
    await store.write('acme/user', [rung('README.md', 'Überblick')], 'ada');
    expect((await store.search('uberblick', { limit: 5 })).hits.map((hit) => hit.path)).toEqual(['README.md']);
  });

  it('RUNGS_COPY moves a SQLite ladder column for column, then builds search and moves the id sequence past the copied ids', async () => {
    const made = await freshDatabase('rungs_copy');
    databases.push(made);
    const sqlite = openDatabase(ws.path('copy.db'));
    try {
      const source = new SqliteRungStore(sqlite, () => 1_000);
      await source.write('acme/copy', [rung('src/parser/lexer.ts', 'Tokens'), rung('README.md', 'Overview')], 'ada');
      await source.write('acme/copy', [rung('README.md', 'Overview, again')], 'bob');
      const db = pool(made.url, made.passwordFile);
      await migratePgRungs(db);
      await db.transaction(async (tx) => {
        for (const table of RUNGS_COPY.tables) {
          const placeholders = table.columns.map((_, i) => `$${i + 1}`).join(', ');
          for (const row of sqlite.prepare(table.sqliteSelect).raw().all() as unknown[][]) {
            await tx.run(`INSERT INTO ${table.table} (${table.columns.join(', ')}) VALUES (${placeholders})`, row);
          }
        }
        for (const statement of RUNGS_COPY.finish) await tx.run(statement);
      });
      const store = await PgRungStore.open(db);
      expect((await store.search('lexer', { limit: 5 })).hits.map((hit) => hit.path)).toEqual(['src/parser/lexer.ts']);
      expect(await store.history('acme/copy', 'README.md')).toEqual(await source.history('acme/copy', 'README.md'));
      const [added] = await store.write('acme/copy', [rung('NEW.md', 'Added after the copy')], 'ada');
      expect(added!.revision).toBe(1);
      expect((await db.one<{ id: number }>("SELECT id FROM rungs WHERE path = 'NEW.md'"))!.id).toBe(3);
    } finally {
      sqlite.close();
    }
  });
});
