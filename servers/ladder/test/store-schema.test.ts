import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { openDatabase } from '../src/store/database.js';
import { migrateLanes } from '../src/store/lanes-schema.js';
import { migrateRungs } from '../src/store/rungs-schema.js';

describe('lanes schema', () => {
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
