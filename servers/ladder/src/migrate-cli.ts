import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { commandControlDir, CommandUsageError, parseCommandLine, runCommand, type CommandOutput } from './commands.js';
import { loadLadderPolicy } from './server.js';
import { openDatabase } from './store/database.js';
import { connectLadderPg, describeLadderDatabase, ladderDatabase, migratePg, type LadderDatabase } from './store/open-stores.js';
import type { MigrationOutcome } from './store/pg/migrations.js';
import { knownSqliteVersions, migrateSqlite, newerSchemaRefusal, sqliteSchemaVersions } from './store/schema-versions.js';

export const MIGRATE_USAGE = `usage: bulkhead-ladder migrate [--config DIR]

  --config DIR   the control-plane folder holding ladder_policy.yaml (default: ./.bulkhead)

Applies the schema migrations the ladder database of ladder_policy.yaml lacks (a SQLite file,
made when missing, or a PostgreSQL database), and prints each component's version.`;

/** `lanes: version 1, applied 1` or `rungs: version 1, up to date`. */
export function describeOutcome(outcome: MigrationOutcome): string {
  return `${outcome.component}: version ${outcome.version}, ${outcome.applied.length === 0 ? 'up to date' : `applied ${outcome.applied.join(', ')}`}`;
}

/**
 * A SQLite file's migrations, with what they applied read from schema_migrations before and after;
 * a file a newer bulkhead-ladder migrated is refused, as on PostgreSQL, before anything is written.
 */
function migrateSqliteFile(path: string): { created: boolean; outcomes: MigrationOutcome[] } {
  const created = !existsSync(path);
  if (created) mkdirSync(dirname(path), { recursive: true });
  const db = openDatabase(path);
  try {
    const before = sqliteSchemaVersions(db) ?? new Map<string, number[]>();
    for (const [component, versions] of before) {
      const newest = Math.max(...versions);
      const knows = knownSqliteVersions().get(component) ?? 0;
      if (newest > knows) throw new Error(newerSchemaRefusal(path, component, newest, knows));
    }
    migrateSqlite(db);
    const after = sqliteSchemaVersions(db) ?? new Map<string, number[]>();
    const outcomes = [...knownSqliteVersions().keys()].map((component) => {
      const had = new Set(before.get(component) ?? []);
      const has = after.get(component) ?? [];
      return { component, version: Math.max(0, ...has), applied: has.filter((version) => !had.has(version)) };
    });
    return { created, outcomes };
  } finally {
    db.close();
  }
}

async function migrate(database: LadderDatabase): Promise<{ heading: string; outcomes: MigrationOutcome[] }> {
  if (database.kind === 'sqlite') {
    const { created, outcomes } = migrateSqliteFile(database.path);
    return { heading: `${created ? 'created the SQLite file' : 'the SQLite file'} ${database.path}`, outcomes };
  }
  const db = await connectLadderPg(database);
  try {
    return { heading: `the PostgreSQL database ${describeLadderDatabase(database)}`, outcomes: await migratePg(db) };
  } finally {
    await db.close();
  }
}

/**
 * `bulkhead-ladder migrate`: what every server does when it opens its database, done now and
 * reported, so an operator can upgrade a shared database once, before the servers on it.
 */
export async function runMigrateCommand(argv: readonly string[], cwd: string, output: CommandOutput): Promise<number> {
  return runCommand('migrate', MIGRATE_USAGE, output, async () => {
    const { positionals, values } = parseCommandLine(argv, { config: { type: 'string' } });
    if (values.help) {
      output.out(`${MIGRATE_USAGE}\n`);
      return 0;
    }
    if (positionals.length > 0) throw new CommandUsageError(`migrate takes only --config DIR (not ${positionals[0]})`);
    const controlDir = commandControlDir(cwd, values.config);
    const { heading, outcomes } = await migrate(ladderDatabase(controlDir, loadLadderPolicy(controlDir)));
    output.out(`${heading}\n${outcomes.map((outcome) => `  ${describeOutcome(outcome)}\n`).join('')}`);
    return 0;
  });
}
