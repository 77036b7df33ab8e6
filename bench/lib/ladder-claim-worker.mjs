// One claiming process of `pnpm bench ladder`: opens the shared database file through the compiled
// ladder (servers/ladder/dist), says "ready", waits for "go", then claims and answers asks until the
// queue is empty, and reports the ask ids it took and its start/end times (epoch ms).
//   node ladder-claim-worker.mjs FILE LANE_ID ACTOR VARIANT
// VARIANT: store (SqliteWorkQueueStore.claimNext + answer complete), raw-bare (the two UPDATEs below,
// autocommit), raw-events (the claim and the answer each in BEGIN IMMEDIATE with the store's guard and
// the event row the store writes).
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../../servers/ladder/dist/store/database.js';
import { SqliteWorkQueueStore } from '../../servers/ladder/dist/store/sqlite-work-queue.js';
import { rawStatements } from './ladder-claims-sql.mjs';

const [file, laneId, actor, variant] = process.argv.slice(2);
const LEASE_MS = 15 * 60_000;

function setup() {
  const db = openDatabase(file);
  if (variant === 'store') {
    const store = new SqliteWorkQueueStore(db);
    return {
      async step() {
        const claim = await store.claimNext(laneId, actor);
        if (!claim) return undefined;
        await store.answer({ ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' }, actor);
        return claim.ask.id;
      },
      close: () => store.close(),
    };
  }
  const sql = rawStatements(db);
  if (variant === 'raw-bare') {
    return {
      async step() {
        const now = Date.now();
        const claimed = sql.bareClaim.get({ lane_id: laneId, actor, now, lease_until: now + LEASE_MS });
        if (!claimed) return undefined;
        if (sql.bareAnswer.run({ id: claimed.id, fence: claimed.fence, actor, now: Date.now() }).changes !== 1) throw new Error(`answer of ${claimed.id} matched no row`);
        return claimed.id;
      },
      close: () => db.close(),
    };
  }
  if (variant === 'raw-events') {
    const claim = db.transaction(() => {
      const now = Date.now();
      const claimed = sql.guardedClaim.get({ lane_id: laneId, actor, now, lease_until: now + LEASE_MS });
      if (claimed) sql.insertEvent.run(claimed.id, now, actor, 'claimed', claimed.fence, JSON.stringify({ lease_until: new Date(claimed.lease_until).toISOString() }));
      return claimed;
    });
    const answer = db.transaction((claimed) => {
      const now = Date.now();
      if (sql.guardedAnswer.run({ id: claimed.id, fence: claimed.fence, actor, now }).changes !== 1) throw new Error(`answer of ${claimed.id} matched no row`);
      sql.insertEvent.run(claimed.id, now, actor, 'answered', claimed.fence, JSON.stringify({ answer: 'complete', note: null }));
    });
    return {
      async step() {
        const claimed = claim.immediate();
        if (!claimed) return undefined;
        answer.immediate(claimed);
        return claimed.id;
      },
      close: () => db.close(),
    };
  }
  throw new Error(`unknown variant ${variant}`);
}

async function run(worker) {
  const ids = [];
  const started = performance.now();
  for (;;) {
    const id = await worker.step();
    if (id === undefined) break;
    ids.push(id);
  }
  const ended = performance.now();
  worker.close();
  process.send({ ids, startedAt: performance.timeOrigin + started, endedAt: performance.timeOrigin + ended });
}

const worker = setup();
process.on('message', (message) => {
  if (message !== 'go') return;
  run(worker).then(
    () => process.disconnect(),
    (error) => {
      process.send({ error: String(error?.stack ?? error) });
      process.exitCode = 1;
      process.disconnect();
    },
  );
});
process.send('ready');
