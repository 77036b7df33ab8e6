import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { ConfigError, errorMessage } from '@bulkhead/core';
import type { Clock } from '../database.js';

/**
 * The database's clock in milliseconds since the epoch, as SQL. Every server on the database reads
 * time here, so servers on different machines agree on when a lease lapses.
 */
export const DB_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** `database:` values naming a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

export interface PgOptions {
  /** postgres://user@host:port/db; a password in it is refused (see checkedUrl). */
  readonly url: string;
  /** A file holding the password (its first line); else PGPASSWORD, else ~/.pgpass (PGPASSFILE). */
  readonly passwordFile?: string | undefined;
  /** Connections kept open; 10 by default. */
  readonly poolSize?: number | undefined;
  /** Tests move time by hand; absent, time is the database's clock (DB_NOW_MS). */
  readonly clock?: Clock | undefined;
  /** Where the URL came from, for errors: `ladder_policy.yaml`, `--to`, … */
  readonly source?: string | undefined;
}

/** One statement's parameters: pg sends them typed by the SQL's casts. */
export type SqlParams = readonly unknown[];

/** What a transaction (or a lone statement) runs statements with. */
export interface PgQueries {
  rows<R>(sql: string, params?: SqlParams): Promise<R[]>;
  one<R>(sql: string, params?: SqlParams): Promise<R | undefined>;
  /** The number of rows the statement changed. */
  run(sql: string, params?: SqlParams): Promise<number>;
}

export interface PgTx extends PgQueries {
  /** The transaction's time: read from the database (or the test clock) once, when it began. */
  readonly now: number;
}

/** SQLSTATEs after which the whole transaction is tried again: the work it did was rolled back. */
const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 5;
const DEFAULT_POOL_SIZE = 10;

/**
 * BIGINT (ms timestamps, counts) as numbers, not the strings pg returns by default: every value the
 * ladder stores in one is below 2^53.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * The URL with its password refused: a password belongs in PGPASSWORD, a password file or ~/.pgpass.
 * `passwordFileWay` names how this caller is given a password file (a policy key, a flag).
 */
export function checkedUrl(url: string, source = 'the database URL', passwordFileWay = 'password_file'): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${source}: ${url} is not a URL; write postgres://user@host:port/database`, source);
  }
  if (parsed.password !== '') {
    throw new ConfigError(
      `${source}: the URL holds a password; remove it and give it in PGPASSWORD, in a file named by ${passwordFileWay}, or in ~/.pgpass (never in the policy file)`,
      source,
    );
  }
  // Not parsed.origin: for a postgres: URL (not a special scheme) it is the string "null".
  if (parsed.pathname.length <= 1) throw new ConfigError(`${source}: ${parsed.protocol}//${parsed.host} names no database; write postgres://user@host:port/database`, source);
  return parsed;
}

function readPassword(file: string, source: string): string {
  try {
    const password = readFileSync(file, 'utf8').split(/\r?\n/u)[0] ?? '';
    if (password === '') throw new Error('it is empty');
    return password;
  } catch (error) {
    throw new ConfigError(`${source}: password_file ${file} cannot be read: ${errorMessage(error)}`, source);
  }
}

/** The URL shown in messages and logs: user, host, port and database, never a password. */
export function describeUrl(url: URL): string {
  return `postgres://${url.username ? `${url.username}@` : ''}${url.host}${url.pathname}`;
}

const statementNames = new Map<string, string>();
const planEachCall = new Set<string>();

/**
 * `sql`, marked to be sent unnamed, so PostgreSQL plans it for each call's values. For a statement
 * whose best plan depends on them (a search: the GIN index for a rare word, a walk newest first
 * for a common one), since a named statement falls back to one generic plan after five calls.
 */
export function plannedEachCall(sql: string): string {
  planEachCall.add(sql);
  return sql;
}

/**
 * A named statement for `sql`, so each connection parses it once (pg prepares a name on first use
 * per connection) instead of on every call; the name is the text's hash: one text, one name. A
 * statement without parameters goes as plain text, which may hold several statements (a migration step);
 * one marked by plannedEachCall goes unnamed.
 */
function prepared(sql: string, params: SqlParams): pg.QueryConfig | string {
  if (params.length === 0) return sql;
  if (planEachCall.has(sql)) return { text: sql, values: [...params] };
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `bulkhead_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return { name, text: sql, values: [...params] };
}

/**
 * A pool of connections to one PostgreSQL database. Statements outside a transaction autocommit;
 * transaction() runs work in READ COMMITTED with its start time read in the same round trip as
 * BEGIN, and tries the whole work again after a deadlock or serialization failure.
 */
export class PgDatabase implements PgQueries {
  readonly pool: pg.Pool;
  readonly described: string;
  private readonly clock: Clock | undefined;

  constructor(options: PgOptions) {
    const source = options.source ?? 'the database URL';
    const url = checkedUrl(options.url, source);
    this.described = describeUrl(url);
    this.clock = options.clock;
    const password = options.passwordFile === undefined ? undefined : readPassword(options.passwordFile, source);
    // pg lets the connection string's fields override the config's, so a password read from a file goes into the URL, in memory only.
    if (password !== undefined) url.password = password;
    this.pool = new pg.Pool({
      connectionString: url.toString(),
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      types,
      application_name: 'bulkhead-ladder',
    });
    // An idle connection the server dropped is removed from the pool; the next query opens another.
    this.pool.on('error', (error) => process.stderr.write(`bulkhead-ladder: a PostgreSQL connection to ${this.described} failed: ${errorMessage(error)}\n`));
  }

  /** Time for a statement outside a transaction: the test clock's, or null for the database's (write `coalesce($n::bigint, DB_NOW_MS)`). */
  clockParam(): number | null {
    return this.clock ? this.clock() : null;
  }

  async rows<R>(sql: string, params: SqlParams = []): Promise<R[]> {
    return (await this.pool.query(prepared(sql, params))).rows as R[];
  }

  async one<R>(sql: string, params: SqlParams = []): Promise<R | undefined> {
    return (await this.rows<R>(sql, params))[0];
  }

  async run(sql: string, params: SqlParams = []): Promise<number> {
    return (await this.pool.query(prepared(sql, params))).rowCount ?? 0;
  }

  async transaction<T>(work: (tx: PgTx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken = false;
      try {
        const now = await this.begin(client);
        const tx: PgTx = {
          now,
          rows: async <R>(sql: string, params: SqlParams = []) => (await client.query(prepared(sql, params))).rows as R[],
          one: async <R>(sql: string, params: SqlParams = []) => ((await client.query(prepared(sql, params))).rows as R[])[0],
          run: async (sql: string, params: SqlParams = []) => (await client.query(prepared(sql, params))).rowCount ?? 0,
        };
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        const code = (error as { code?: unknown }).code;
        if (attempt < ATTEMPTS && typeof code === 'string' && RETRYABLE.has(code)) continue;
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  private async begin(client: pg.PoolClient): Promise<number> {
    if (this.clock) {
      await client.query('BEGIN');
      return this.clock();
    }
    // One round trip: a simple query of two statements answers with two results.
    const results = (await client.query(`BEGIN; SELECT ${DB_NOW_MS} AS now`)) as unknown as pg.QueryResult<{ now: number }>[];
    return results[1]!.rows[0]!.now;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
