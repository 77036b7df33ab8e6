import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { openDatabase } from '../src/store/database.js';
import { migrateLanes } from '../src/store/lanes-schema.js';
import { PgDatabase } from '../src/store/pg/database.js';
import { LANES_COPY, migratePgLanes } from '../src/store/pg/lanes-schema.js';
import { PgWorkQueueStore } from '../src/store/pg/work-queue.js';
import { migrateRungs } from '../src/store/rungs-schema.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import { freshDatabase } from './postgres.js';
import { REPO, START } from './store-fixture.js';

const LANES_TABLES = ['lanes', 'lane_events', 'asks', 'ask_dependencies', 'ask_events', 'roles', 'tokens'];

describe('lanes schema (SQLite only)', () => {
  let ws: TempWorkspace;
  afterEach(() => ws.cleanup());

  it('migrates idempotently and shares schema_migrations with the rungs store', () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-schema-');
    const file = ws.path('ladder.db');
    const first = openDatabase(file);
    migrateLanes(first, 1000);
    migrateRungs(first, 2000);
    first.close();
    const second = openDatabase(file);
    migrateLanes(second, 3000);
    migrateLanes(second, 4000);
    const tables = second.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[];
    expect(tables).toEqual(expect.arrayContaining(['lanes', 'lane_events', 'asks', 'ask_dependencies', 'ask_events', 'roles', 'tokens', 'schema_migrations']));
    const lanesSteps = second.prepare(`SELECT version, applied_at FROM schema_migrations WHERE component = 'lanes'`).all();
    expect(lanesSteps).toEqual([{ version: 1, applied_at: 1000 }]);
    expect(second.prepare(`SELECT count(*) FROM schema_migrations WHERE component <> 'lanes'`).pluck().get()).toBeGreaterThan(0);
    second.close();
  });
});

describe('lanes schema on postgres', () => {
  it('mirrors SQLite table for table, column for column and index for index (plus seq where SQLite orders by rowid), with its CHECKs', async () => {
    const ws = tempWorkspace({}, 'bulkhead-ladder-schema-');
    const sqlite = openDatabase(ws.path('ladder.db'));
    migrateLanes(sqlite, 1000);
    const database = await freshDatabase('ladder_schema');
    const pg = new PgDatabase({ url: database.url, passwordFile: database.passwordFile });
    try {
      await migratePgLanes(pg);
      for (const table of LANES_TABLES) {
        const sqliteColumns = (sqlite.prepare(`SELECT name FROM pragma_table_info(?) ORDER BY cid`).pluck().all(table) as string[]).filter((name) => name !== 'seq');
        const pgColumns = await pg.rows<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`, [table]);
        const expected = table === 'lanes' || table === 'asks' ? [...sqliteColumns, 'seq'] : table.endsWith('_events') ? ['seq', ...sqliteColumns] : sqliteColumns;
        expect(pgColumns.map((row) => row.column_name), table).toEqual(expected);
        // The copy from SQLite moves every column.
        expect([...(LANES_COPY.tables.find((copy) => copy.table === table)?.columns ?? [])].sort(), table).toEqual([...expected].sort());
      }
      const sqliteIndexes = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' AND tbl_name <> 'schema_migrations' ORDER BY name`).pluck().all() as string[];
      const pgIndexes = await pg.rows<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key' ORDER BY indexname`);
      expect(pgIndexes.map((row) => row.indexname)).toEqual(sqliteIndexes);
      const lane = `INSERT INTO lanes (id, repo, title, goal, paths, priority, state, coordinator, related_lanes, created_at, updated_at) VALUES ('lane-0000000001', 'r', 't', '', '[]', 5, $1, 'c', '[]', 0, 0)`;
      await expect(pg.run(lane, ['finished'])).rejects.toThrow(/lanes_state_check/);
      await pg.run(lane, ['active']);
      const ask = `INSERT INTO asks (id, lane_id, kind, title, body, payload, priority, posted_by, state, max_attempts, answer, created_at, updated_at)
        VALUES ('ask-0000000001', 'lane-0000000001', 'work', 't', '', 'null', 5, 'p', $1, 5, $2, 0, 0)`;
      await expect(pg.run(ask, ['waiting', null])).rejects.toThrow(/asks_state_check/);
      await expect(pg.run(ask, ['answered', 'maybe'])).rejects.toThrow(/asks_answer_check/);
      await expect(pg.run(`INSERT INTO roles (repo, principal, role, granted_by, granted_at) VALUES ('r', 'p', 'king', 'p', 0)`)).rejects.toThrow(/roles_role_check/);
    } finally {
      sqlite.close();
      ws.cleanup();
      await pg.close();
      await database.drop();
    }
  });
});

describe('lanes copy spec (SQLite to postgres)', () => {
  it('moves every row so the PostgreSQL store reads what the SQLite store wrote, and new rows follow the copied ones', async () => {
    const ws = tempWorkspace({}, 'bulkhead-ladder-copy-');
    const now = () => START;
    const sqlite = new SqliteWorkQueueStore(openDatabase(ws.path('ladder.db')), {}, now);
    const database = await freshDatabase('ladder_copy');
    const pg = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, clock: now });
    try {
      await sqlite.seedOwner(REPO, 'olga');
      const lane = await sqlite.proposeLane({ repo: REPO, title: 'copied', paths: ['src/**'] }, 'alice');
      await sqlite.grantRole({ repo: REPO, principal: 'mia', role: 'maintainer', lane_id: lane.id }, 'olga');
      const first = (await sqlite.postAsk({ lane_id: lane.id, kind: 'work', title: 'first', payload: { n: 1 }, idempotency_key: 'k' }, 'alice')).ask;
      const second = (await sqlite.postAsk({ lane_id: lane.id, kind: 'work', title: 'second', depends_on: [first.id] }, 'alice')).ask;
      const claim = await sqlite.claim(first.id, 'bob');
      await sqlite.answer({ ask_id: first.id, fence: claim.fence, answer: 'complete' }, 'bob');
      const token = await sqlite.createToken('bob');
      const file = openDatabase(ws.path('ladder.db'));
      const target = await PgWorkQueueStore.open(pg);
      for (const table of LANES_COPY.tables) {
        for (const row of file.prepare(table.sqliteSelect).raw().all() as unknown[][]) {
          await pg.run(`INSERT INTO ${table.table} (${table.columns.join(', ')}) VALUES (${table.columns.map((_, index) => `$${index + 1}`).join(', ')})`, row);
        }
      }
      for (const statement of LANES_COPY.finish) await pg.run(statement);
      file.close();

      expect(await target.getLane(lane.id)).toEqual(await sqlite.getLane(lane.id));
      expect(await target.getAsk(first.id)).toEqual(await sqlite.getAsk(first.id));
      expect(await target.getAsk(second.id)).toEqual(await sqlite.getAsk(second.id));
      expect(await target.listRoles(REPO)).toEqual(await sqlite.listRoles(REPO));
      expect(await target.verifyToken(token.secret)).toBe('bob');
      expect(await target.postAsk({ lane_id: lane.id, kind: 'work', title: 'again', idempotency_key: 'k' }, 'alice')).toMatchObject({ replayed: true, ask: { id: first.id } });
      const third = (await target.postAsk({ lane_id: lane.id, kind: 'work', title: 'third' }, 'alice')).ask;
      expect((await target.listAsks(lane.id)).map((ask) => ask.id)).toEqual([first.id, second.id, third.id]);
      expect((await target.getAsk(third.id)).history.map((event) => event.type)).toEqual(['posted']);
    } finally {
      sqlite.close();
      ws.cleanup();
      await pg.close();
      await database.drop();
    }
  });
});
