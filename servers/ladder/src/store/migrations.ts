import type { Db } from './database.js';

/**
 * Applies a component's schema steps that are not applied yet, one version each, recorded in
 * schema_migrations (shared by every component of the file). Safe to call on every open, from any
 * process: each step is checked again inside the write lock, so when two processes open a new file
 * at once only the first to take the lock applies it.
 */
export function applyMigrations(db: Db, component: string, steps: readonly string[], now: number): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    component TEXT NOT NULL,
    version INTEGER NOT NULL,
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (component, version)
  ) STRICT`);
  const applied = db.prepare('SELECT version FROM schema_migrations WHERE component = ?').pluck();
  const record = db.prepare('INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)');
  steps.forEach((sql, index) => {
    const version = index + 1;
    db.transaction(() => {
      if ((applied.all(component) as number[]).includes(version)) return;
      db.exec(sql);
      record.run(component, version, now);
    }).immediate();
  });
}
