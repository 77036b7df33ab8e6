import Database from 'better-sqlite3';

export type Db = Database.Database;

/** Milliseconds since the epoch; tests inject one to expire leases without waiting. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** How long a statement waits for another process's write lock before failing. */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens (creating if needed, unless `mustExist`) the ladder database: WAL so readers never wait
 * for the writer, foreign keys on, and a busy timeout so several server processes on one file take
 * turns instead of failing. `:memory:` gives a private database (tests, and the stand-in of
 * ladder-file.ts).
 */
export function openDatabase(path: string, options: { readonly mustExist?: boolean } = {}): Db {
  const db = new Database(path, { fileMustExist: options.mustExist ?? false });
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('synchronous = NORMAL');
  return db;
}

/**
 * Runs `work` in a short BEGIN IMMEDIATE transaction: the write lock is taken at the start, so two
 * processes never both read a row as free and then both write it.
 */
export function immediate<T>(db: Db, work: () => T): T {
  return db.transaction(work).immediate();
}
