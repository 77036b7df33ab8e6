import { afterEach, describe, expect, it } from 'vitest';
import { ToolError } from '@bulkhead/core';
import { PgDatabase } from '../src/store/pg/database.js';
import { migratePgLanes } from '../src/store/pg/lanes-schema.js';
import { PgWorkQueueStore } from '../src/store/pg/work-queue.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';
import { REPO, refused, START } from './store-fixture.js';

/**
 * What only PostgreSQL needs: READ COMMITTED lets two servers' writes run at once where SQLite
 * takes turns, so each read-then-decide write is raced here by two stores on separate pools.
 */
describe('work queue on PostgreSQL: concurrent servers, the database clock, migrations', () => {
  let database: FreshDatabase | undefined;
  const pools: PgDatabase[] = [];
  let now = START;
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((db) => db.close()));
    await database?.drop();
    database = undefined;
    now = START;
  });

  /** A store on its own pool; `clock: false` reads the database's clock. */
  async function server(options: { clock?: boolean } = {}): Promise<PgWorkQueueStore> {
    database ??= await freshDatabase('ladder_pg');
    const db = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, clock: options.clock === false ? undefined : () => now });
    pools.push(db);
    return PgWorkQueueStore.open(db);
  }

  const outcome = <T>(work: Promise<T>): Promise<T | ToolError> => work.catch((error: unknown) => (error instanceof ToolError ? error : Promise.reject(error)));

  it('migrating twice is a no-op: the second run applies nothing and every table is there', async () => {
    await server();
    const db = pools[0]!;
    expect(await migratePgLanes(db)).toEqual({ component: 'lanes', version: 1, applied: [] });
    const tables = await db.rows<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`);
    expect(tables.map((row) => row.table_name)).toEqual(['ask_dependencies', 'ask_events', 'asks', 'lane_events', 'lanes', 'roles', 'schema_migrations', 'tokens']);
    expect(await db.rows(`SELECT component, version FROM schema_migrations`)).toEqual([{ component: 'lanes', version: 1 }]);
  });

  it('two servers posting with one idempotency key at once make one ask; the other gets it back as a replay', async () => {
    const [first, second] = [await server(), await server()];
    const lane = await first.proposeLane({ repo: REPO, title: 'race' }, 'alice');
    for (let round = 0; round < 5; round += 1) {
      const post = (store: PgWorkQueueStore) => store.postAsk({ lane_id: lane.id, kind: 'work', title: `once ${round}`, idempotency_key: `k-${round}` }, 'alice');
      const posted = await Promise.all([post(first), post(second)]);
      expect(posted.map((p) => p.replayed).sort()).toEqual([false, true]);
      expect(posted[0]!.ask.id).toBe(posted[1]!.ask.id);
    }
    const asks = await first.listAsks(lane.id);
    expect(asks).toHaveLength(5);
    for (const ask of asks) expect((await first.getAsk(ask.id)).history.map((event) => event.type)).toEqual(['posted']);
  });

  it('two dependency adds that would together close a cycle: one is refused, naming the cycle', async () => {
    const [first, second] = [await server(), await server()];
    const lane = await first.proposeLane({ repo: REPO, title: 'cycle' }, 'alice');
    for (let round = 0; round < 5; round += 1) {
      const a = (await first.postAsk({ lane_id: lane.id, kind: 'work', title: `a${round}` }, 'alice')).ask;
      const b = (await first.postAsk({ lane_id: lane.id, kind: 'work', title: `b${round}` }, 'alice')).ask;
      const results = await Promise.all([outcome(first.addDependencies(a.id, [b.id], 'alice')), outcome(second.addDependencies(b.id, [a.id], 'alice'))]);
      const refusals = results.filter((result): result is ToolError => result instanceof ToolError);
      expect(refusals).toHaveLength(1);
      expect(refusals[0]!.code).toBe('cycle');
      expect(refusals[0]!.message).toMatch(/cannot depend on ask-[0-9a-f]{10}: that would close a cycle \((ask-[0-9a-f]{10}) → ask-[0-9a-f]{10} → \1\)/);
      const edges = [...(await first.getAsk(a.id)).depends_on, ...(await first.getAsk(b.id)).depends_on];
      expect(edges).toHaveLength(1);
    }
  });

  it("two servers making a repository's _repo lane at once make one, with one event and one coordinator", async () => {
    const [first, second] = [await server(), await server()];
    await first.seedOwner(REPO, 'olga');
    const ids = await Promise.all([first.standingLaneId(REPO, 'alice'), second.standingLaneId(REPO, 'bob')]);
    expect(ids[0]).toBe(ids[1]);
    const lane = await first.getLane(ids[0]!);
    expect(lane).toMatchObject({ coordinator: 'olga', state: 'active' });
    expect(lane.history.map((event) => event.type)).toEqual(['proposed']);
    expect((await first.listRoles(REPO, { laneId: lane.id })).filter((role) => role.role === 'coordinator')).toHaveLength(1);
  });

  it('two owners revoking each other at once: one is refused, so the repository keeps an owner', async () => {
    const [first, second] = [await server(), await server()];
    await first.seedOwner(REPO, 'olga');
    await first.grantRole({ repo: REPO, principal: 'oscar', role: 'owner' }, 'olga');
    const results = await Promise.all([
      outcome(first.revokeRole({ repo: REPO, principal: 'oscar', role: 'owner' }, 'olga')),
      outcome(second.revokeRole({ repo: REPO, principal: 'olga', role: 'owner' }, 'oscar')),
    ]);
    const refusals = results.filter((result): result is ToolError => result instanceof ToolError);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.message).toMatch(/(revoking owner needs owner scope on acme\/widgets; (olga|oscar) is not an owner|is the last owner of acme\/widgets)/);
    expect((await first.listRoles(REPO)).filter((role) => role.role === 'owner')).toHaveLength(1);
  });

  it('two claims of a lapsed ask with no attempts left: it expires once, and both are refused', async () => {
    const [first, second] = [await server(), await server()];
    const lane = await first.proposeLane({ repo: REPO, title: 'expiry' }, 'alice');
    const ask = (await first.postAsk({ lane_id: lane.id, kind: 'work', title: 'flaky', max_attempts: 1 }, 'alice')).ask;
    await first.claim(ask.id, 'bob', { lease_seconds: 60 });
    now += 120_000;
    const results = await Promise.all([outcome(first.claim(ask.id, 'carol')), outcome(second.claim(ask.id, 'dave'))]);
    expect(results.map((result) => (result instanceof ToolError ? result.code : 'claimed')).sort()).toEqual(['conflict', 'expired']);
    const history = (await first.getAsk(ask.id)).history;
    expect(history.map((event) => event.type)).toEqual(['posted', 'claimed', 'expired']);
    expect((await first.getAsk(ask.id)).state).toBe('expired');
  });

  it("a lease lapses by the database's clock: another server reclaims with fence 2 and the old fence is refused", async () => {
    const [first, second] = [await server({ clock: false }), await server({ clock: false })];
    const lane = await first.proposeLane({ repo: REPO, title: 'clock' }, 'alice');
    const ask = (await first.postAsk({ lane_id: lane.id, kind: 'work', title: 'short lease' }, 'alice')).ask;
    const claim = await first.claim(ask.id, 'bob', { lease_seconds: 1 });
    expect(claim.fence).toBe(1);
    // Polled, not slept: the database decides when the lease has lapsed.
    let taken = await outcome(second.claim(ask.id, 'carol'));
    while (taken instanceof ToolError) {
      expect(taken.code).toBe('claimed');
      await new Promise((resolve) => setTimeout(resolve, 50));
      taken = await outcome(second.claim(ask.id, 'carol'));
    }
    expect(taken).toMatchObject({ fence: 2, renewed: false });
    expect(Date.parse(taken.lease_until)).toBeGreaterThan(Date.parse(claim.lease_until));
    await refused(first.answer({ ask_id: ask.id, fence: 1, answer: 'complete' }, 'bob'), /your claim \(fence 1\) was superseded by fence 2/, 'stale_fence');
    expect((await second.getAsk(ask.id)).history.at(-1)).toMatchObject({ type: 'claimed', actor: 'carol', fence: 2, detail: { superseded_fence: 1, previous_holder: 'bob' } });
  });
});
