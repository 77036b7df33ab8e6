import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** The test PostgreSQL server (see test/postgres-setup.ts): its URL, without a password, and the password. */
export interface TestPostgres {
  readonly url: string;
  readonly passwordFile: string;
  readonly password: string;
}

/** The server the tests use; throws (the test fails, it does not skip) when there is none. */
export function testPostgres(): TestPostgres {
  const url = process.env.BULKHEAD_TEST_PG_URL;
  const passwordFile = process.env.BULKHEAD_TEST_PG_PASSWORD_FILE;
  if (!url || !passwordFile) {
    throw new Error(
      'these tests need PostgreSQL: install it (apt-get install postgresql; npm test then starts a throwaway cluster) or set BULKHEAD_TEST_PG_URL and BULKHEAD_TEST_PG_PASSWORD_FILE to a server of your own',
    );
  }
  return { url, passwordFile, password: readFileSync(passwordFile, 'utf8').trim() };
}

/** A new empty database on the test server, and drop() to remove it (closing its connections). */
export interface FreshDatabase {
  /** postgres://bulkhead@127.0.0.1:PORT/NAME: no password in it, as a user would write it. */
  readonly url: string;
  readonly name: string;
  readonly passwordFile: string;
  readonly password: string;
  drop(): Promise<void>;
}

async function admin<T>(server: TestPostgres, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(server.url);
  url.password = server.password;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function freshDatabase(prefix = 'ladder'): Promise<FreshDatabase> {
  const server = testPostgres();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin(server, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    passwordFile: server.passwordFile,
    password: server.password,
    drop: () => admin(server, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
