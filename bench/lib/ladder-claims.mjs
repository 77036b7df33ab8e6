// Claim-and-answer throughput of the ladder's work queue (servers/ladder/dist) against raw SQLite
// statements on the same schema, with 1..N processes on one database file; then a check that every
// ask was answered exactly once, and an in-process count of the statements each claim+answer runs.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../servers/ladder/dist/store/database.js';
import { SqliteWorkQueueStore } from '../../servers/ladder/dist/store/sqlite-work-queue.js';
import { rawStatements } from './ladder-claims-sql.mjs';
import { forkWorker } from './workers.mjs';

const WORKER = fileURLToPath(new URL('./ladder-claim-worker.mjs', import.meta.url));
export const VARIANTS = ['store', 'raw-bare', 'raw-events'];
const LEASE_MS = 15 * 60_000;

/** A database with one lane of `asks` open asks (priorities 0..9), posted through the store, checkpointed and closed. */
export async function makeTemplate(file, asks) {
  const db = openDatabase(file);
  const store = new SqliteWorkQueueStore(db);
  const lane = await store.proposeLane({ repo: 'bench/claims', title: 'claim bench' }, 'coordinator');
  const posted = [];
  // postAsk does its work synchronously (the promise is only the interface's shape), so one outer
  // transaction (its own BEGIN IMMEDIATE becomes a savepoint) makes the 10,000 posts one commit.
  db.transaction(() => {
    for (let i = 0; i < asks; i++) posted.push(store.postAsk({ lane_id: lane.id, kind: 'work', title: `ask ${i}`, priority: i % 10 }, 'coordinator'));
  })();
  await Promise.all(posted);
  db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  return lane.id;
}

/** Checks the finished database: every ask answered once, fence 1, attempts 1, and (when events are written) one claimed and one answered event each. */
function verify(file, laneId, asks, ids, withEvents) {
  const db = openDatabase(file);
  try {
    const problems = [];
    const distinct = new Set(ids);
    if (ids.length !== asks) problems.push(`workers reported ${ids.length} claims for ${asks} asks`);
    if (distinct.size !== ids.length) problems.push(`${ids.length - distinct.size} asks reported by more than one claim`);
    const states = db.prepare('SELECT state, count(*) AS n FROM asks WHERE lane_id = ? GROUP BY state').all(laneId);
    if (states.length !== 1 || states[0].state !== 'answered' || states[0].n !== asks) problems.push(`states ${JSON.stringify(states)}`);
    const wrong = db
      .prepare(
        `SELECT count(*) FROM asks a WHERE a.lane_id = ? AND (a.fence != 1 OR a.attempts != 1 OR a.answer != 'complete' OR a.answered_by != a.holder
           OR (SELECT count(*) FROM ask_events e WHERE e.ask_id = a.id AND e.type = 'claimed') != ?
           OR (SELECT count(*) FROM ask_events e WHERE e.ask_id = a.id AND e.type = 'answered') != ?)`,
      )
      .pluck()
      .get(laneId, withEvents ? 1 : 0, withEvents ? 1 : 0);
    if (wrong !== 0) problems.push(`${wrong} asks without exactly one claim and one answer`);
    const holders = new Map(db.prepare('SELECT id, holder FROM asks WHERE lane_id = ?').all(laneId).map((row) => [row.id, row.holder]));
    return { ok: problems.length === 0, problems, answered: states.find((s) => s.state === 'answered')?.n ?? 0, distinctClaims: distinct.size, holders };
  } finally {
    db.close();
  }
}

/** One run: copy the template, fork `processes` workers of `variant`, start them together, time to the last answer, verify. */
export async function runOnce({ template, laneId, asks, processes, variant, dir }) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'ladder.db');
  copyFileSync(template, file);
  const workers = [];
  try {
    for (let i = 0; i < processes; i++) workers.push(forkWorker(WORKER, [file, laneId, `worker-${i}`, variant], `worker-${i}`));
    await Promise.all(workers.map((w) => w.ready));
    const goAt = performance.timeOrigin + performance.now();
    for (const w of workers) w.child.send('go');
    const reports = await Promise.all(workers.map((w) => w.report));
    await Promise.all(workers.map((w) => w.exited));
    const wallMs = Math.max(...reports.map((r) => r.endedAt)) - goAt;
    const ids = reports.flatMap((r) => r.ids);
    const check = verify(file, laneId, asks, ids, variant !== 'raw-bare');
    // The worker that reported an id must be the holder recorded on the row.
    let misattributed = 0;
    reports.forEach((r, index) => {
      for (const id of r.ids) if (check.holders.get(id) !== `worker-${index}`) misattributed++;
    });
    if (misattributed) {
      check.ok = false;
      check.problems.push(`${misattributed} asks answered by another worker than the one that reported them`);
    }
    delete check.holders;
    return { variant, processes, asks, wallMs, perSecond: (asks / wallMs) * 1000, perProcess: reports.map((r) => r.ids.length), check };
  } finally {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * In one process (no contention): the statements each variant runs per claim+answer, counted by
 * wrapping better-sqlite3's Statement methods, and the mean time per claim and per answer.
 */
export async function profileClaims({ template, laneId, asks, dir }) {
  const out = {};
  for (const variant of VARIANTS) {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'profile.db');
    copyFileSync(template, file);
    const db = openDatabase(file);
    const proto = Object.getPrototypeOf(db.prepare('SELECT 1'));
    const originals = {};
    const counts = new Map();
    // Time the write lock is held: BEGIN IMMEDIATE to the end of COMMIT, or (autocommit) the statement itself.
    let holdMs = 0;
    let commitMs = 0;
    let begunAt;
    for (const method of ['run', 'get', 'all', 'iterate']) {
      originals[method] = proto[method];
      proto[method] = function counted(...args) {
        counts.set(this.source, (counts.get(this.source) ?? 0) + 1);
        const t = performance.now();
        try {
          return originals[method].apply(this, args);
        } finally {
          const end = performance.now();
          if (this.source.startsWith('BEGIN')) begunAt = t;
          else if (this.source === 'COMMIT') {
            commitMs += end - t;
            holdMs += end - begunAt;
            begunAt = undefined;
          } else if (begunAt === undefined && this.source.startsWith('UPDATE')) holdMs += end - t;
        }
      };
    }
    let claimMs = 0;
    let answerMs = 0;
    let done = 0;
    try {
      const actor = 'worker-0';
      if (variant === 'store') {
        const store = new SqliteWorkQueueStore(db);
        counts.clear();
        holdMs = 0;
        commitMs = 0;
        for (;;) {
          const t0 = performance.now();
          const claim = await store.claimNext(laneId, actor);
          const t1 = performance.now();
          if (!claim) break;
          await store.answer({ ask_id: claim.ask.id, fence: claim.fence, answer: 'complete' }, actor);
          claimMs += t1 - t0;
          answerMs += performance.now() - t1;
          done++;
        }
      } else {
        const sql = rawStatements(db);
        counts.clear();
        holdMs = 0;
        commitMs = 0;
        const claimTx = db.transaction(() => {
          const now = Date.now();
          const claimed = sql.guardedClaim.get({ lane_id: laneId, actor, now, lease_until: now + LEASE_MS });
          if (claimed) sql.insertEvent.run(claimed.id, now, actor, 'claimed', claimed.fence, JSON.stringify({ lease_until: new Date(claimed.lease_until).toISOString() }));
          return claimed;
        });
        const answerTx = db.transaction((claimed) => {
          const now = Date.now();
          sql.guardedAnswer.run({ id: claimed.id, fence: claimed.fence, actor, now });
          sql.insertEvent.run(claimed.id, now, actor, 'answered', claimed.fence, JSON.stringify({ answer: 'complete', note: null }));
        });
        for (;;) {
          const t0 = performance.now();
          const now = Date.now();
          const claimed = variant === 'raw-bare' ? sql.bareClaim.get({ lane_id: laneId, actor, now, lease_until: now + LEASE_MS }) : claimTx.immediate();
          const t1 = performance.now();
          if (!claimed) break;
          if (variant === 'raw-bare') sql.bareAnswer.run({ id: claimed.id, fence: claimed.fence, actor, now: Date.now() });
          else answerTx.immediate(claimed);
          claimMs += t1 - t0;
          answerMs += performance.now() - t1;
          done++;
        }
      }
    } finally {
      for (const [method, fn] of Object.entries(originals)) proto[method] = fn;
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const statements = [...counts.entries()]
      .map(([source, n]) => ({ source: source.replace(/\s+/g, ' ').trim(), perClaimAndAnswer: n / done }))
      .sort((a, b) => b.perClaimAndAnswer - a.perClaimAndAnswer);
    out[variant] = {
      asks: done,
      claimUs: (claimMs / done) * 1000,
      answerUs: (answerMs / done) * 1000,
      statementsPerClaimAndAnswer: statements.reduce((sum, s) => sum + s.perClaimAndAnswer, 0),
      transactionsPerClaimAndAnswer: 2,
      lockHeldUs: (holdMs / done) * 1000,
      commitUs: (commitMs / done) * 1000,
      statements,
    };
  }
  return out;
}
