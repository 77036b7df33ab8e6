import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GitRepository, Roots } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { afterAll } from 'vitest';
import { Ladder, type LadderRepository } from '../src/ladder/ladder.js';
import { openDatabase, type Clock } from '../src/store/database.js';
import { PgDatabase } from '../src/store/pg/database.js';
import { migratePgRungs } from '../src/store/pg/rungs-schema.js';
import { PgRungStore } from '../src/store/pg/rungs.js';
import type { RungStore } from '../src/store/rungs.js';
import { migrateRungs } from '../src/store/rungs-schema.js';
import { SqliteRungStore } from '../src/store/rungs-sqlite.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';

/** The tests' own git: no user or system config, fixed identities. */
const TEST_GIT_ENV = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Ada Tester',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada Tester',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
  LC_ALL: 'C',
};

/** Runs the tests' git in `cwd`; `input` goes to its stdin (`update-ref --stdin` takes ref names as bytes). */
export function git(cwd: string, args: readonly string[], input?: string | Buffer): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: TEST_GIT_ENV, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024, ...(input === undefined ? {} : { input }) });
}

/** Writes files (null deletes one), stages everything and commits; returns the new commit id. */
export function commit(dir: string, message: string, files: Record<string, string | null> = {}): string {
  for (const [relative, content] of Object.entries(files)) {
    const file = join(dir, relative);
    if (content === null) {
      rmSync(file, { recursive: true, force: true });
      continue;
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', message]);
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

/** A rung store of a fixture, and what the contract tests do to it behind its back. */
export interface BackendStore {
  readonly store: RungStore;
  /** Empties the search index (as a damaged one would be) without touching the rungs. */
  dropSearchEntries(): Promise<void>;
  /** Runs the rungs migrations again; returns the versions schema_migrations records for rungs. */
  migrateAgain(): Promise<number[]>;
  /** A second store on the same database, as another server would open it (closed with this one). */
  openAnother(): Promise<RungStore>;
  close(): Promise<void>;
}

export type RungBackendName = 'SQLite' | 'PostgreSQL';
export const RUNG_BACKENDS: readonly RungBackendName[] = ['SQLite', 'PostgreSQL'];

/** Where fixtures keep their rungs: a SQLite file in the workspace, or a PostgreSQL database. */
export interface LadderBackend {
  readonly name: RungBackendName;
  open(ws: TempWorkspace, clock: Clock | undefined): Promise<BackendStore>;
}

export const SQLITE_LADDER: LadderBackend = {
  name: 'SQLite',
  async open(ws, clock) {
    const file = ws.path('ladder.db');
    const db = openDatabase(file);
    const others: ReturnType<typeof openDatabase>[] = [];
    return {
      store: new SqliteRungStore(db, clock),
      dropSearchEntries: async () => void db.exec('DELETE FROM rung_search'),
      migrateAgain: async () => {
        migrateRungs(db);
        return db.prepare("SELECT version FROM schema_migrations WHERE component = 'rungs' ORDER BY version").pluck().all() as number[];
      },
      openAnother: async () => {
        const other = openDatabase(file);
        others.push(other);
        return new SqliteRungStore(other);
      },
      close: async () => {
        for (const other of others) other.close();
        db.close();
      },
    };
  },
};

/**
 * PostgreSQL for the fixtures of one describe block (call it there): one database, made on first
 * use and dropped after the block; every fixture starts from empty tables on its own pool, with
 * its own clock.
 */
export function postgresLadder(): LadderBackend {
  let database: Promise<FreshDatabase> | undefined;
  afterAll(async () => {
    if (database) await (await database).drop();
  });
  const shared = () =>
    (database ??= freshDatabase('rungs').then(async (fresh) => {
      const db = new PgDatabase({ url: fresh.url, passwordFile: fresh.passwordFile });
      try {
        await migratePgRungs(db);
      } finally {
        await db.close();
      }
      return fresh;
    }));
  return {
    name: 'PostgreSQL',
    async open(_ws, clock) {
      const fresh = await shared();
      const pools: PgDatabase[] = [];
      const pool = (withClock?: Clock) => {
        const db = new PgDatabase({ url: fresh.url, passwordFile: fresh.passwordFile, poolSize: 2, clock: withClock });
        pools.push(db);
        return db;
      };
      const db = pool(clock);
      await db.run('TRUNCATE rung_revisions, rungs RESTART IDENTITY');
      return {
        store: await PgRungStore.open(db),
        dropSearchEntries: async () => void (await db.run("UPDATE rungs SET search = ''")),
        migrateAgain: async () => {
          await migratePgRungs(db);
          return (await db.rows<{ version: number }>("SELECT version FROM schema_migrations WHERE component = 'rungs' ORDER BY version")).map((row) => row.version);
        },
        openAnother: async () => PgRungStore.open(pool()),
        close: async () => {
          await Promise.all(pools.map((opened) => opened.close()));
        },
      };
    },
  };
}

/** The backend of a describe.each over RUNG_BACKENDS; call it in the describe block. */
export function ladderBackend(name: RungBackendName): LadderBackend {
  return name === 'SQLite' ? SQLITE_LADDER : postgresLadder();
}

export interface LadderFixture extends Omit<BackendStore, 'close'> {
  readonly ws: TempWorkspace;
  /** The repository's folder (`repo/` in the workspace). */
  readonly dir: string;
  readonly backend: RungBackendName;
  readonly ladder: Ladder;
  readonly repo: LadderRepository;
  close(): Promise<void>;
}

/** A git repository with one commit of `files`, a rung store on `backend` (a SQLite file beside it by default), and a Ladder on both. */
export async function ladderFixture(files: Record<string, string>, clock?: Clock, backend: LadderBackend = SQLITE_LADDER): Promise<LadderFixture> {
  const ws = tempWorkspace({}, 'bulkhead-ladder-');
  try {
    const dir = ws.mkdir('repo');
    git(dir, ['init', '-q']);
    commit(dir, 'first', files);
    const roots = new Roots([dir], { controlDir: ws.path('control'), denyRead: [] });
    const gitRepository = await GitRepository.open(roots, dir, { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 });
    const opened = await backend.open(ws, clock);
    return {
      ...opened,
      ws,
      dir,
      backend: backend.name,
      ladder: new Ladder(opened.store),
      repo: { name: 'acme/widgets', git: gitRepository },
      close: async () => {
        try {
          await opened.close();
        } finally {
          ws.cleanup();
        }
      },
    };
  } catch (error) {
    ws.cleanup();
    throw error;
  }
}
