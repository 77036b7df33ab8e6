import { afterEach, describe, expect, it } from 'vitest';
import { PgDatabase } from '../src/store/pg/database.js';
import { PgRungStore } from '../src/store/pg/rungs.js';
import { PgWorkQueueStore } from '../src/store/pg/work-queue.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';

/** The statements prepared on the pool's one connection (a query without parameters is not prepared itself). */
const preparedOn = (db: PgDatabase) => db.rows<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name');

describe('PostgreSQL statements', () => {
  let database: FreshDatabase | undefined;
  let db: PgDatabase | undefined;
  afterEach(async () => {
    await db?.close();
    await database?.drop();
    db = database = undefined;
  });

  it('prepares each statement with parameters once per connection, under its text hash, and sends the search unnamed to be planned for its words', async () => {
    database = await freshDatabase('statements');
    db = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, poolSize: 1 });
    const queue = await PgWorkQueueStore.open(db, {});
    const rungs = await PgRungStore.open(db);
    const lane = await queue.proposeLane({ repo: 'acme/widgets', title: 'Statements' }, 'ada');
    for (const title of ['first', 'second']) await queue.postAsk({ lane_id: lane.id, kind: 'work', title }, 'ada');
    for (let i = 0; i < 2; i++) {
      const claim = (await queue.claimNext(lane.id, 'ada'))!;
      await queue.answer({ ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' }, 'ada');
    }
    await rungs.write('acme/widgets', [{ path: 'src/index.js', kind: 'file', commit: '0'.repeat(40), objectId: '1'.repeat(40), summary: 'The widget entry point' }], 'ada');
    for (const word of ['widget', 'entry', 'widget']) expect((await rungs.search(word, { limit: 5 })).hits.map((hit) => hit.path)).toEqual(['src/index.js']);

    const prepared = await preparedOn(db);
    expect(prepared.every((statement) => /^bulkhead_[0-9a-f]{24}$/.test(statement.name))).toBe(true);
    const claims = prepared.filter((statement) => statement.statement.includes('SKIP LOCKED'));
    expect(claims).toHaveLength(1);
    expect(prepared.filter((statement) => statement.statement.includes('ts_rank_cd'))).toEqual([]);
    expect(new Set(prepared.map((statement) => statement.statement)).size).toBe(prepared.length);
  });

  it('sends a statement without parameters as plain text, so a step of several statements runs', async () => {
    database = await freshDatabase('statements');
    db = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, poolSize: 1 });
    await db.run('CREATE TABLE a (n INTEGER); CREATE TABLE b (n INTEGER)');
    expect(await db.rows('SELECT tablename FROM pg_tables WHERE tablename IN ($1, $2) ORDER BY tablename', ['a', 'b'])).toEqual([{ tablename: 'a' }, { tablename: 'b' }]);
    expect((await preparedOn(db)).map((statement) => statement.statement)).toEqual(['SELECT tablename FROM pg_tables WHERE tablename IN ($1, $2) ORDER BY tablename']);
  });
});
