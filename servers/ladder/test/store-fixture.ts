import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { ToolError } from '@bulkhead/core';
import { expect } from 'vitest';
import { openDatabase, type Db } from '../src/store/database.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import type { WorkQueueOptions } from '../src/store/work-queue.js';

export const REPO = 'acme/widgets';
export const START = Date.UTC(2026, 0, 5, 12, 0, 0);

/** A store on a real SQLite file in a temp dir, with a clock the test moves by hand. */
export interface StoreFixture {
  ws: TempWorkspace;
  db: Db;
  store: SqliteWorkQueueStore;
  file: string;
  now(): number;
  advance(ms: number): void;
  cleanup(): void;
}

export function storeFixture(options: WorkQueueOptions = {}): StoreFixture {
  const ws = tempWorkspace({}, 'bulkhead-ladder-');
  const file = ws.path('ladder.db');
  const db = openDatabase(file);
  let now = START;
  const store = new SqliteWorkQueueStore(db, options, () => now);
  return {
    ws,
    db,
    store,
    file,
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    cleanup: () => {
      db.close();
      ws.cleanup();
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
