import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { ToolError } from '@bulkhead/core';
import { expect } from 'vitest';
import { openDatabase, type Db } from '../src/store/database.js';
import { PgDatabase } from '../src/store/pg/database.js';
import { PgWorkQueueStore } from '../src/store/pg/work-queue.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import type { WorkQueueOptions, WorkQueueStore } from '../src/store/work-queue.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';

export const REPO = 'acme/widgets';
export const START = Date.UTC(2026, 0, 5, 12, 0, 0);

/** The work queue's backends: every contract test runs on each. */
export const STORE_BACKENDS = ['sqlite', 'postgres'] as const;
export type StoreBackend = (typeof STORE_BACKENDS)[number];

/** A store on a real SQLite file in a temp dir or a fresh PostgreSQL database, with a clock the test moves by hand. */
export interface StoreFixture {
  backend: StoreBackend;
  store: WorkQueueStore;
  /** Present on SQLite only: the file and its connection. */
  sqlite?: { ws: TempWorkspace; db: Db; file: string };
  /** Present on PostgreSQL only: the database and the store's pool. */
  postgres?: { database: FreshDatabase; db: PgDatabase };
  /** Rows of a query both dialects read alike (`SELECT * FROM tokens`). */
  rows<R>(sql: string): Promise<R[]>;
  now(): number;
  advance(ms: number): void;
  /** Closes the store; on PostgreSQL, drops the database. */
  cleanup(): Promise<void>;
}

export async function storeFixture(backend: StoreBackend, options: WorkQueueOptions = {}): Promise<StoreFixture> {
  let now = START;
  const clock = () => now;
  const moves = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  if (backend === 'sqlite') {
    const ws = tempWorkspace({}, 'bulkhead-ladder-');
    const file = ws.path('ladder.db');
    const db = openDatabase(file);
    const store = new SqliteWorkQueueStore(db, options, clock);
    return {
      backend,
      store,
      sqlite: { ws, db, file },
      rows: async <R>(sql: string) => db.prepare(sql).all() as R[],
      ...moves,
      cleanup: async () => {
        db.close();
        ws.cleanup();
      },
    };
  }
  const database = await freshDatabase('ladder_store');
  const db = new PgDatabase({ url: database.url, passwordFile: database.passwordFile, clock });
  const store = await PgWorkQueueStore.open(db, options);
  return {
    backend,
    store,
    postgres: { database, db },
    rows: <R>(sql: string) => db.rows<R>(sql),
    ...moves,
    cleanup: async () => {
      store.close();
      await db.close();
      await database.drop();
    },
  };
}

/** Awaits `work` and checks it was refused with a ToolError whose message matches. */
export async function refused(work: Promise<unknown>, message: RegExp, code?: string): Promise<ToolError> {
  const error: unknown = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, `expected a refusal matching ${message}`).toBeInstanceOf(ToolError);
  const toolError = error as ToolError;
  expect(toolError.message).toMatch(message);
  if (code !== undefined) expect(toolError.code).toBe(code);
  return toolError;
}
