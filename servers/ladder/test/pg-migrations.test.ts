import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace } from '@bulkhead/core/testing';
import { PgDatabase } from '../src/store/pg/database.js';
import { applyPgMigrations } from '../src/store/pg/migrations.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';

const STEPS = ['CREATE TABLE widgets (id INTEGER PRIMARY KEY)', 'ALTER TABLE widgets ADD COLUMN name TEXT'];

describe('PostgreSQL migrations', () => {
  let database: FreshDatabase | undefined;
  const opened: PgDatabase[] = [];
  const open = (options: Partial<ConstructorParameters<typeof PgDatabase>[0]> = {}) => {
    const db = new PgDatabase({ url: database!.url, passwordFile: database!.passwordFile, ...options });
    opened.push(db);
    return db;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((db) => db.close()));
    await database?.drop();
    database = undefined;
  });

  it('two servers migrating a new database at once apply each step once, under the advisory lock', async () => {
    database = await freshDatabase();
    const [first, second] = await Promise.all([applyPgMigrations(open(), 'widgets', STEPS), applyPgMigrations(open(), 'widgets', STEPS)]);
    expect([first.applied, second.applied].sort((a, b) => b.length - a.length)).toEqual([[1, 2], []]);
    expect(first.version).toBe(2);
    const rows = await open().rows<{ version: number }>("SELECT version FROM schema_migrations WHERE component = 'widgets' ORDER BY version");
    expect(rows.map((row) => row.version)).toEqual([1, 2]);
    expect(await applyPgMigrations(open(), 'widgets', [...STEPS, 'CREATE INDEX widgets_by_name ON widgets (name)'])).toEqual({ component: 'widgets', version: 3, applied: [3] });
  });

  it('refuses a database migrated by a newer version, and writes nothing', async () => {
    database = await freshDatabase();
    await applyPgMigrations(open(), 'widgets', STEPS);
    await expect(applyPgMigrations(open(), 'widgets', STEPS.slice(0, 1))).rejects.toThrow(/holds widgets schema version 2, newer than this bulkhead-ladder knows \(1\); upgrade bulkhead-ladder/);
  });

  it('a failing step rolls the whole run back', async () => {
    database = await freshDatabase();
    await expect(applyPgMigrations(open(), 'widgets', [STEPS[0]!, 'ALTER TABLE nothing_here ADD COLUMN x TEXT'])).rejects.toThrow(/nothing_here/);
    expect(await open().one("SELECT to_regclass('widgets') AS found")).toEqual({ found: null });
  });

  it('refuses a password in the URL, a missing password_file and a bad password, naming what to do', async () => {
    database = await freshDatabase();
    const withPassword = database.url.replace('bulkhead@', `bulkhead:${database.password}@`);
    expect(() => new PgDatabase({ url: withPassword, source: 'ladder_policy.yaml' })).toThrow(
      'ladder_policy.yaml: the URL holds a password; remove it and give it in PGPASSWORD, in a file named by password_file, or in ~/.pgpass (never in the policy file)',
    );
    expect(() => new PgDatabase({ url: database!.url, passwordFile: '/nonexistent/pw', source: 'ladder_policy.yaml' })).toThrow(/^ladder_policy.yaml: password_file \/nonexistent\/pw cannot be read: ENOENT/);
    const ws = tempWorkspace({}, 'bulkhead-pg-');
    try {
      writeFileSync(ws.path('wrong'), 'not-the-password\n');
      await expect(open({ passwordFile: ws.path('wrong') }).rows('SELECT 1')).rejects.toThrow(/password authentication failed for user "bulkhead"/);
    } finally {
      ws.cleanup();
    }
  });

  it('reads time from the database clock unless a test clock is given', async () => {
    database = await freshDatabase();
    const before = Date.now();
    const now = await open().transaction(async (tx) => tx.now);
    expect(now).toBeGreaterThanOrEqual(before - 5_000);
    expect(now).toBeLessThanOrEqual(Date.now() + 5_000);
    expect(await open({ clock: () => 42 }).transaction(async (tx) => tx.now)).toBe(42);
  });
});
