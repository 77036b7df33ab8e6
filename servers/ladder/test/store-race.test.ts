import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { openDatabase } from '../src/store/database.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import { REPO } from './store-fixture.js';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const WORKER = fileURLToPath(new URL('./store-race-worker.mjs', import.meta.url));
const PROCESSES = 8;
const ASKS = 2_000;

interface WorkerReport {
  claims: number;
  collisions: number;
  elapsedMs: number;
  startedAt: number;
  endedAt: number;
  error?: string;
}

/** Forks the workers, starts them together once all have opened the database, and collects their reports. */
async function race(file: string, laneId: string, mode: 'query' | 'next'): Promise<WorkerReport[]> {
  const children: ChildProcess[] = [];
  const reports = Array.from({ length: PROCESSES }, (_, index) => {
    const child = fork(WORKER, [file, laneId, `worker-${index}`, mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
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

describe(`race: ${PROCESSES} processes on one queue of ${ASKS} asks`, () => {
  let ws: TempWorkspace;
  beforeAll(() => {
    // The workers import the compiled store; the incremental build is quick when nothing changed.
    execFileSync(process.execPath, [fileURLToPath(import.meta.resolve('typescript/bin/tsc')), '-b', PACKAGE], { stdio: 'inherit' });
  }, 120_000);
  afterEach(() => ws.cleanup());

  for (const mode of ['query', 'next'] as const) {
    it(`every ask is claimed exactly once and answered exactly once (${mode === 'query' ? 'ask_query_claimable + ask_claim by id' : 'claimNext'})`, async () => {
      ws = tempWorkspace({}, 'bulkhead-ladder-race-');
      const file = ws.path('ladder.db');
      const db = openDatabase(file);
      const store = new SqliteWorkQueueStore(db);
      const lane = await store.proposeLane({ repo: REPO, title: 'race' }, 'coordinator');
      for (let index = 0; index < ASKS; index += 1) {
        await store.postAsk({ lane_id: lane.id, kind: 'work', title: `ask ${index}`, priority: index % 10 }, 'coordinator');
      }

      const reports = await race(file, lane.id, mode);
      for (const report of reports) expect(report.error).toBeUndefined();

      const states = db.prepare('SELECT state, count(*) AS n FROM asks WHERE lane_id = ? GROUP BY state').all(lane.id);
      expect(states).toEqual([{ state: 'answered', n: ASKS }]);
      const perAsk = db
        .prepare(
          `SELECT a.id, a.fence, a.attempts,
             (SELECT count(*) FROM ask_events e WHERE e.ask_id = a.id AND e.type = 'claimed') AS claimed,
             (SELECT count(*) FROM ask_events e WHERE e.ask_id = a.id AND e.type = 'answered') AS answered
           FROM asks a WHERE a.lane_id = ?`,
        )
        .all(lane.id) as { id: string; fence: number; attempts: number; claimed: number; answered: number }[];
      expect(perAsk).toHaveLength(ASKS);
      expect(perAsk.filter((ask) => ask.claimed !== 1 || ask.answered !== 1 || ask.fence !== 1 || ask.attempts !== 1)).toEqual([]);
      const claims = reports.reduce((sum, report) => sum + report.claims, 0);
      expect(claims).toBe(ASKS);
      expect(reports.filter((report) => report.claims > 0).length).toBeGreaterThan(1);

      const wallMs = Math.max(...reports.map((r) => r.endedAt)) - Math.min(...reports.map((r) => r.startedAt));
      const collisions = reports.reduce((sum, report) => sum + report.collisions, 0);
      console.log(
        `race (${mode}): ${ASKS} asks, ${PROCESSES} processes, ${wallMs.toFixed(0)} ms, ${((ASKS / wallMs) * 1000).toFixed(0)} claim+answer/s, ${collisions} collisions, per process ${reports.map((r) => r.claims).join('/')}`,
      );
      store.close();
    });
  }
});
