import { newerSchemaRefusal } from '../schema-versions.js';
import type { PgDatabase } from './database.js';

/** The advisory lock every ladder server takes to migrate: one number, the same in every process. */
const MIGRATION_LOCK = 0x6c61_6464; // "ladd"

export interface MigrationOutcome {
  readonly component: string;
  /** The schema version after the run. */
  readonly version: number;
  /** The versions this run applied (empty: the database was up to date). */
  readonly applied: number[];
}

/**
 * Applies a component's schema steps that are not applied yet, one version each, recorded in
 * schema_migrations, all in one transaction under a transaction-scoped advisory lock: two servers
 * starting together on a new database take turns, and the second finds every step applied. A
 * database migrated by a newer bulkhead-ladder than this one is refused rather than written.
 */
export async function applyPgMigrations(db: PgDatabase, component: string, steps: readonly string[]): Promise<MigrationOutcome> {
  return db.transaction(async (tx) => {
    await tx.run('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
      component TEXT NOT NULL,
      version INTEGER NOT NULL,
      applied_at BIGINT NOT NULL,
      PRIMARY KEY (component, version)
    )`);
    const rows = await tx.rows<{ version: number }>('SELECT version FROM schema_migrations WHERE component = $1', [component]);
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...done);
    if (newest > steps.length) throw new Error(newerSchemaRefusal(db.described, component, newest, steps.length));
    const applied: number[] = [];
    for (const [index, sql] of steps.entries()) {
      const version = index + 1;
      if (done.has(version)) continue;
      await tx.run(sql);
      await tx.run('INSERT INTO schema_migrations (component, version, applied_at) VALUES ($1, $2, $3)', [component, version, tx.now]);
      applied.push(version);
    }
    return { component, version: steps.length, applied };
  });
}
