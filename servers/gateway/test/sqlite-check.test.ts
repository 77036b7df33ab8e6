// doctor's SQLite check against this workspace's better-sqlite3, built for the Node that runs the
// tests. Its failure details are checked on real installs: a binding built for another Node in
// test/e2e/node22.test.ts, a missing binding in test/e2e/packaging.test.ts.
import { describe, expect, it } from 'vitest';
import { sqliteCheck } from '../src/commands/sqlite-check.js';

describe('sqliteCheck', () => {
  it('opens an in-memory database with the ladder’s better-sqlite3', () => {
    const check = sqliteCheck();
    expect(check).toMatchObject({ level: 'ok', what: 'better-sqlite3' });
    expect(check.detail).toMatch(/^\d+\.\d+\.\d+, SQLite 3\.\d+\.\d+$/);
  });
});
