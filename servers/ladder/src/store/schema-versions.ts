import { openDatabase, type Db } from './database.js';
import { migrateLanes } from './lanes-schema.js';
import { migrateRungs } from './rungs-schema.js';

/** The refusal of a database a newer bulkhead-ladder migrated, on either backend: it is not written. */
export function newerSchemaRefusal(database: string, component: string, newest: number, knows: number): string {
  return `${database} holds ${component} schema version ${newest}, newer than this bulkhead-ladder knows (${knows}); upgrade bulkhead-ladder`;
}

/** Each component's applied versions in a SQLite file, or undefined when it has no schema_migrations table. */
export function sqliteSchemaVersions(db: Db): Map<string, number[]> | undefined {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (table === undefined) return undefined;
  const versions = new Map<string, number[]>();
  for (const row of db.prepare('SELECT component, version FROM schema_migrations ORDER BY component, version').all() as { component: string; version: number }[]) {
    versions.set(row.component, [...(versions.get(row.component) ?? []), row.version]);
  }
  return versions;
}

/** Migrates a SQLite file's every component (as opening its stores does). */
export function migrateSqlite(db: Db, now: number = Date.now()): void {
  migrateLanes(db, now);
  migrateRungs(db, now);
}

let known: ReadonlyMap<string, number> | undefined;

/**
 * The schema version of each component this bulkhead-ladder writes on SQLite: read from a private
 * in-memory database migrated by the same steps, so no number is kept beside the steps to drift.
 */
export function knownSqliteVersions(): ReadonlyMap<string, number> {
  if (known) return known;
  const db = openDatabase(':memory:');
  try {
    migrateSqlite(db, 0);
    known = new Map([...(sqliteSchemaVersions(db) ?? new Map<string, number[]>())].map(([component, versions]) => [component, Math.max(...versions)]));
    return known;
  } finally {
    db.close();
  }
}
