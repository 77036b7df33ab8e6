import pg from 'pg';
import { errorMessage } from '@bulkhead/core';
import { PgDatabase, type PgOptions } from './database.js';

/** What a message says to correct: the URL's origin, and how this command takes a password file. */
export interface PgSource {
  /** Where the URL was written: `database in /home/ada/.bulkhead/ladder_policy.yaml`, `--to`. */
  readonly urlFrom: string;
  /** The way to name a password file here: `password_file`, `--password-file FILE`. */
  readonly passwordFileWay: string;
}

/** Thrown when the database cannot be used at all; its message is one line, fit to print alone. */
export class DatabaseUnreachable extends Error {}

/**
 * Why a first connection failed, in words a user acts on: connection refused, authentication
 * failed, no such database, … (node-postgres reports these as socket errnos, SQLSTATEs, or a SASL
 * error when no password was found anywhere). Never the password: pg puts none in its messages.
 */
export function unreachableCause(error: unknown, url: URL, source: PgSource): string {
  const code = (error as { code?: unknown }).code;
  const message = errorMessage(error).split('\n')[0]!;
  const where = `${url.hostname}:${url.port || '5432'}`;
  const user = decodeURIComponent(url.username) || 'the OS user';
  const database = decodeURIComponent(url.pathname.slice(1));
  const passwordWays = `PGPASSWORD, ${source.passwordFileWay}, or ~/.pgpass (mode 0600; PGPASSFILE names another file)`;
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused: no PostgreSQL server listens at ${where}; start it, or correct ${source.urlFrom}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host ${url.hostname} is not known; correct ${source.urlFrom}`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} cannot be reached from here (${message}); check the address in ${source.urlFrom} and the network`;
    case '28P01':
      return `authentication failed for user ${user}; give the right password in ${passwordWays}`;
    case '28000':
      return `the server refuses ${user} (${message}); allow it in pg_hba.conf, or correct ${source.urlFrom}`;
    case '3D000':
      return `the database ${database} does not exist; create it (createdb -h ${url.hostname} -p ${url.port || '5432'}${url.username ? ` -U ${user}` : ''} ${database}), or correct ${source.urlFrom}`;
    default:
      break;
  }
  // pg's words when the server asks for a SCRAM password and it found none (no PGPASSWORD, no file, no .pgpass line).
  if (/client password must be a string/u.test(message)) return `the server asks for a password and none was given; give it in ${passwordWays}`;
  return message;
}

/**
 * A pool on the database, with one connection made now: a database that cannot be used fails here,
 * with one line naming it (never its password), the cause and what to do, instead of at the first call.
 */
export async function connectPg(options: PgOptions, source: PgSource): Promise<PgDatabase> {
  const db = new PgDatabase(options);
  // A client of its own, with the pool's settings, ended whatever happens: a pool does not close the
  // socket of a connection that failed during authentication (no password for SCRAM), and the server
  // then holds that backend, and any DROP DATABASE waiting on it, until authentication_timeout.
  const probe = new pg.Client(db.pool.options);
  try {
    await probe.connect();
  } catch (error) {
    await db.close().catch(() => undefined);
    throw new DatabaseUnreachable(`cannot use the ladder database ${db.described}: ${unreachableCause(error, new URL(options.url), source)}`);
  } finally {
    await probe.end().catch(() => undefined);
  }
  return db;
}
