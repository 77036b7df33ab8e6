import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { errorMessage } from '@bulkhead/core';
import { CommandUsageError, parseCommandLine, runCommand, type CommandOutput } from './commands.js';
import { describeOutcome } from './migrate-cli.js';
import type { Db } from './store/database.js';
import { migratePg } from './store/open-stores.js';
import type { ComponentCopy, TableCopy } from './store/pg/copy-spec.js';
import { checkedUrl, isPostgresUrl, type PgDatabase, type PgTx } from './store/pg/database.js';
import { LANES_COPY } from './store/pg/lanes-schema.js';
import { RUNGS_COPY } from './store/pg/rungs-schema.js';
import { connectPg } from './store/pg/unreachable.js';
import { knownSqliteVersions, newerSchemaRefusal, sqliteSchemaVersions } from './store/schema-versions.js';

export const COPY_USAGE = `usage: bulkhead-ladder copy --from sqlite:PATH --to postgres://user@host:port/database [--password-file FILE]

  --from sqlite:PATH     the ladder's SQLite file (read only, never written)
  --to URL               a PostgreSQL database with no ladder rows yet, never with a password in the URL
  --password-file FILE   a file whose first line is the password (else PGPASSWORD, else ~/.pgpass or PGPASSFILE)

Moves a whole ladder (rungs and their history, lanes, asks and their events, roles, token hashes)
into PostgreSQL in one transaction, with its ids, revisions and fences, and checks the counts.`;

/** Every component the file holds; no table of one refers to another's, each lists its own in foreign-key order. */
const COMPONENTS: readonly ComponentCopy[] = [LANES_COPY, RUNGS_COPY];

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters in one statement. */
const MAX_PARAMETERS = 60_000;
const MAX_ROWS_PER_INSERT = 1000;

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * The SQLite file opened read-only: no write, no checkpoint, so its bytes stay as they were (SQLite
 * may make the empty -wal and -shm files a WAL database keeps beside it, if they were missing).
 * Only a ladder file this bulkhead-ladder's copy understands passes: its every component at the
 * version the copy's SELECTs are written for.
 */
function openLadderFile(path: string): Db {
  if (!existsSync(path)) throw new Error(`${path} does not exist; --from takes sqlite:PATH of the ladder's database file`);
  let db: Db;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new Error(`${path} cannot be opened: ${errorMessage(error)}`);
  }
  try {
    let versions: Map<string, number[]> | undefined;
    try {
      versions = sqliteSchemaVersions(db);
    } catch (error) {
      throw new Error(`${path} is not a ladder database (${errorMessage(error)})`);
    }
    if (versions === undefined) throw new Error(`${path} is not a ladder database: it has no schema_migrations table`);
    for (const { component } of COMPONENTS) {
      const applied = versions.get(component);
      if (applied === undefined) throw new Error(`${path} is not a ladder database: it has no ${component} schema`);
      const newest = Math.max(...applied);
      const knows = knownSqliteVersions().get(component) ?? 0;
      if (newest > knows) throw new Error(newerSchemaRefusal(path, component, newest, knows));
      if (newest < knows) throw new Error(`${path} holds ${component} schema version ${newest}, older than this bulkhead-ladder copies (${knows}); open it once with this bulkhead-ladder (bulkhead-ladder migrate with database: naming it) and copy again`);
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The refusal of a target that holds ladder rows already: the copy writes nothing into it. */
export function notEmptyRefusal(database: string): string {
  return `${database} is not empty: copy into a new database, or drop its tables first`;
}

async function copyTable(source: Db, tx: PgTx, table: TableCopy): Promise<number> {
  const rowsPerInsert = Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / table.columns.length)));
  const columns = table.columns.map(quoted).join(', ');
  const insert = (rows: number) =>
    `INSERT INTO ${quoted(table.table)} (${columns}) VALUES ${Array.from({ length: rows }, (_, row) => `(${table.columns.map((_column, column) => `$${row * table.columns.length + column + 1}`).join(', ')})`).join(', ')}`;
  let batch: unknown[][] = [];
  let copied = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await tx.run(insert(batch.length), batch.flat());
    copied += batch.length;
    batch = [];
  };
  for (const row of source.prepare(table.sqliteSelect).raw().iterate() as IterableIterator<unknown[]>) {
    batch.push(row);
    if (batch.length === rowsPerInsert) await flush();
  }
  await flush();
  return copied;
}

/**
 * Every table of every component, in one transaction: the target's tables are locked against
 * writers and found empty, the rows go in with their own ids, the components' finishing statements
 * move sequences past them and rebuild search, and each table's count is checked against the file's
 * and the tables analyzed before the commit. Any failure rolls everything back.
 */
async function copyAll(source: Db, target: PgDatabase): Promise<{ table: string; rows: number }[]> {
  const tables = COMPONENTS.flatMap((component) => component.tables);
  // One read transaction on the file: every table is read from the same moment, even with a server writing to it.
  source.exec('BEGIN');
  try {
    const expected = new Map(tables.map((table) => [table.table, (source.prepare(`SELECT count(*) FROM (${table.sqliteSelect})`).pluck().get() as number)]));
    return await target.transaction(async (tx) => {
      await tx.run(`LOCK TABLE ${tables.map((table) => quoted(table.table)).join(', ')} IN EXCLUSIVE MODE`);
      for (const table of tables) {
        if (await tx.one(`SELECT 1 FROM ${quoted(table.table)} LIMIT 1`)) throw new Error(notEmptyRefusal(target.described));
      }
      const copied: { table: string; rows: number }[] = [];
      for (const component of COMPONENTS) {
        for (const table of component.tables) copied.push({ table: table.table, rows: await copyTable(source, tx, table) });
        for (const statement of component.finish) await tx.run(statement);
      }
      for (const table of tables) {
        const held = (await tx.one<{ rows: number }>(`SELECT count(*)::bigint AS rows FROM ${quoted(table.table)}`))!.rows;
        if (held !== expected.get(table.table)) {
          throw new Error(`${table.table}: the file holds ${expected.get(table.table)} rows but ${held} arrived; nothing was copied`);
        }
      }
      // The planner's statistics now rather than when autovacuum gets to it (until then a search
      // would take the GIN index even for a word in most rungs); inside the transaction, so a
      // failure here leaves nothing copied rather than a full target a second copy would refuse.
      await tx.run(`ANALYZE ${tables.map((table) => quoted(table.table)).join(', ')}`);
      return copied;
    });
  } finally {
    source.exec('COMMIT');
  }
}

/**
 * `bulkhead-ladder copy --from sqlite:PATH --to postgres://…`: moves an existing ladder to
 * PostgreSQL. The file is checked first (a ladder database of a schema this copy knows), the target
 * is migrated, then everything is copied in one transaction or nothing is.
 */
export async function runCopyCommand(argv: readonly string[], cwd: string, output: CommandOutput): Promise<number> {
  return runCommand('copy', COPY_USAGE, output, async () => {
    const { positionals, values } = parseCommandLine(argv, { from: { type: 'string' }, to: { type: 'string' }, 'password-file': { type: 'string' } });
    if (values.help) {
      output.out(`${COPY_USAGE}\n`);
      return 0;
    }
    if (positionals.length > 0) throw new CommandUsageError(`copy takes only its flags (not ${positionals[0]})`);
    if (values.from === undefined || values.to === undefined) throw new CommandUsageError('copy takes --from sqlite:PATH and --to postgres://user@host:port/database');
    if (!values.from.startsWith('sqlite:') || values.from.length === 'sqlite:'.length) throw new CommandUsageError(`--from takes sqlite:PATH, the ladder's SQLite file (not ${values.from})`);
    if (!isPostgresUrl(values.to)) throw new CommandUsageError('--to takes postgres://user@host:port/database (or postgresql://)');
    checkedUrl(values.to, '--to', '--password-file');
    const path = resolve(cwd, values.from.slice('sqlite:'.length));
    const passwordFile = values['password-file'] === undefined ? undefined : resolve(cwd, values['password-file']);

    const source = openLadderFile(path);
    try {
      const target = await connectPg(
        { url: values.to, passwordFile, source: '--password-file' },
        { urlFrom: '--to', passwordFileWay: '--password-file FILE' },
      );
      try {
        const outcomes = await migratePg(target);
        const copied = await copyAll(source, target);
        output.out(
          `copied ${path} into ${target.described} (one transaction, counts checked)\n` +
            outcomes.map((outcome) => `  schema ${describeOutcome(outcome)}\n`).join('') +
            copied.map(({ table, rows }) => `  table ${table}: ${rows} ${rows === 1 ? 'row' : 'rows'}\n`).join(''),
        );
        return 0;
      } finally {
        await target.close();
      }
    } finally {
      source.close();
    }
  });
}
