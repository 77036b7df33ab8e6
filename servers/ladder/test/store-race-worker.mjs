// One of the race test's processes: opens the shared database (a SQLite file, or a PostgreSQL
// database given as a URL and a password file) through the compiled store, waits for "go", then
// claims and answers asks until none is claimable, and reports its counts.
// Plain JavaScript so it runs under node without vitest; it imports the store from dist/.
import { openDatabase } from '../dist/store/database.js';
import { PgDatabase } from '../dist/store/pg/database.js';
import { PgWorkQueueStore } from '../dist/store/pg/work-queue.js';
import { SqliteWorkQueueStore } from '../dist/store/sqlite-work-queue.js';

const [backend, target, laneId, actor, mode] = process.argv.slice(2);
const pg = backend === 'postgres' ? new PgDatabase({ ...JSON.parse(target), poolSize: 2 }) : undefined;
const store = pg ? await PgWorkQueueStore.open(pg) : new SqliteWorkQueueStore(openDatabase(target));

/** Claims picked from the top of the claimable list at random, so workers collide on purpose. */
async function claimFromQuery() {
  const claimable = await store.queryClaimable(laneId, actor, { limit: 8 });
  if (claimable.length === 0) return null;
  const pick = claimable[Math.floor(Math.random() * claimable.length)];
  try {
    return await store.claim(pick.ask.id, actor);
  } catch (error) {
    if (error?.name === 'ToolError' && (error.code === 'claimed' || error.code === 'conflict')) return 'collision';
    throw error;
  }
}

async function run() {
  let claims = 0;
  let collisions = 0;
  const started = performance.now();
  for (;;) {
    const claim = mode === 'next' ? ((await store.claimNext(laneId, actor)) ?? null) : await claimFromQuery();
    if (claim === null) break;
    if (claim === 'collision') {
      collisions += 1;
      continue;
    }
    claims += 1;
    await store.answer({ ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' }, actor);
  }
  const elapsedMs = performance.now() - started;
  store.close();
  await pg?.close();
  process.send({ claims, collisions, elapsedMs, startedAt: performance.timeOrigin + started, endedAt: performance.timeOrigin + started + elapsedMs });
}

process.on('message', (message) => {
  if (message === 'go') run().then(() => process.disconnect(), (error) => {
    process.send({ error: String(error?.stack ?? error) });
    process.exitCode = 1;
    process.disconnect();
  });
});
process.send('ready');
