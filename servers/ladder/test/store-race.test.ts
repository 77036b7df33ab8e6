import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { openDatabase } from '../src/store/database.js';
import { PgDatabase } from '../src/store/pg/database.js';
import { PgWorkQueueStore } from '../src/store/pg/work-queue.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import type { WorkQueueStore } from '../src/store/work-queue.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';
import { REPO } from './store-fixture.js';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const WORKER = fileURLToPath(new URL('./store-race-worker.mjs', import.meta.url));

interface WorkerReport {
  claims: number;
  collisions: number;
  elapsedMs: number;
  startedAt: number;
  endedAt: number;
  error?: string;
}

type Mode = 'query' | 'next';

/** Forks the workers, starts them together once all have opened the database, and collects their reports. */
async function race(processes: number, backend: 'sqlite' | 'postgres', target: string, laneId: string, mode: Mode): Promise<WorkerReport[]> {
  const reports = Array.from({ length: processes }, (_, index) => {
    const child = fork(WORKER, [backend, target, laneId, `worker-${index}`, mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise<{ child: ChildProcess; report: Promise<WorkerReport> }>((ready, fail) => {
      const report = new Promise<WorkerReport>((done, failReport) => {
        child.on('message', (message) => {
          if (message === 'ready') ready({ child, report });
          else done(message as WorkerReport);
        });
        child.on('exit', (code) => failReport(new Error(`worker-${index} exited with ${code} before reporting`)));
      });
      child.on('error', fail);
    });
  });
  const readied = await Promise.all(reports);
  for (const { child } of readied) child.send('go');
  return Promise.all(readied.map(({ report }) => report));
}

/** The database the race ran on, as the checks read it. */
interface RaceDatabase {
  rows<R>(sql: string, laneId: string): Promise<R[]>;
}

/** Posts the asks, runs the race, and checks every ask was claimed and answered exactly once, each under fence 1. */
async function raceAndCheck(options: {
  store: WorkQueueStore;
  database: RaceDatabase;
  backend: 'sqlite' | 'postgres';
  target: string;
  processes: number;
  asks: number;
  mode: Mode;
}): Promise<void> {
  const { store, database, asks, mode } = options;
  const lane = await store.proposeLane({ repo: REPO, title: 'race' }, 'coordinator');
  for (let index = 0; index < asks; index += 1) {
    await store.postAsk({ lane_id: lane.id, kind: 'work', title: `ask ${index}`, priority: index % 10 }, 'coordinator');
  }

  const reports = await race(options.processes, options.backend, options.target, lane.id, mode);
  for (const report of reports) expect(report.error).toBeUndefined();

  expect(await database.rows('SELECT state, count(*) AS n FROM asks WHERE lane_id = $lane GROUP BY state', lane.id)).toEqual([{ state: 'answered', n: asks }]);
  const perAsk = await database.rows<{ id: string; fence: number; attempts: number; claimed: number; answered: number }>(
    `SELECT a.id, a.fence, a.attempts,
       (SELECT count(*) FROM ask_events e WHERE e.ask_id = a.id AND e.type = 'claimed') AS claimed,
       (SELECT count(*) FROM ask_events e WHERE e.ask_id = a.id AND e.type = 'answered') AS answered
     FROM asks a WHERE a.lane_id = $lane`,
    lane.id,
  );
  expect(perAsk).toHaveLength(asks);
  expect(perAsk.filter((ask) => ask.claimed !== 1 || ask.answered !== 1 || ask.fence !== 1 || ask.attempts !== 1)).toEqual([]);
  const claims = reports.reduce((sum, report) => sum + report.claims, 0);
  expect(claims).toBe(asks);
  expect(reports.filter((report) => report.claims > 0).length).toBeGreaterThan(1);

  const wallMs = Math.max(...reports.map((r) => r.endedAt)) - Math.min(...reports.map((r) => r.startedAt));
  const collisions = reports.reduce((sum, report) => sum + report.collisions, 0);
  console.log(
    `race on ${options.backend} (${mode}): ${asks} asks, ${options.processes} processes, ${wallMs.toFixed(0)} ms, ${((asks / wallMs) * 1000).toFixed(0)} claim+answer/s, ${collisions} collisions, per process ${reports.map((r) => r.claims).join('/')}`,
  );
}

const MODE_NAMES: Record<Mode, string> = { query: 'ask_query_claimable + ask_claim by id', next: 'claimNext' };

beforeAll(() => {
  // The workers import the compiled store; the incremental build is quick when nothing changed.
  execFileSync(process.execPath, [fileURLToPath(import.meta.resolve('typescript/bin/tsc')), '-b', PACKAGE], { stdio: 'inherit' });
}, 120_000);

describe('race on sqlite: 8 processes on one queue file of 2000 asks', () => {
  let ws: TempWorkspace;
  afterEach(() => ws.cleanup());

  for (const mode of ['query', 'next'] as const) {
    it(`every ask is claimed exactly once and answered exactly once (${MODE_NAMES[mode]})`, async () => {
      ws = tempWorkspace({}, 'bulkhead-ladder-race-');
      const file = ws.path('ladder.db');
      const db = openDatabase(file);
      const store = new SqliteWorkQueueStore(db);
      const database: RaceDatabase = { rows: async <R>(sql: string, laneId: string) => db.prepare(sql.replaceAll('$lane', '?')).all(laneId) as R[] };
      await raceAndCheck({ store, database, backend: 'sqlite', target: file, processes: 8, asks: 2_000, mode });
      store.close();
    });
  }
});

describe('race on postgres: 4 processes on one database of 400 asks', () => {
  let fresh: FreshDatabase | undefined;
  let db: PgDatabase | undefined;
  afterEach(async () => {
    await db?.close();
    await fresh?.drop();
  });

  for (const mode of ['query', 'next'] as const) {
    it(`every ask is claimed exactly once and answered exactly once (${MODE_NAMES[mode]})`, async () => {
      fresh = await freshDatabase('ladder_race');
      db = new PgDatabase({ url: fresh.url, passwordFile: fresh.passwordFile });
      const pool = db;
      const store = await PgWorkQueueStore.open(pool);
      const database: RaceDatabase = { rows: <R>(sql: string, laneId: string) => pool.rows<R>(sql.replaceAll('$lane', '$1'), [laneId]) };
      const target = JSON.stringify({ url: fresh.url, passwordFile: fresh.passwordFile });
      await raceAndCheck({ store, database, backend: 'postgres', target, processes: 4, asks: 400, mode });
    });
  }
});
