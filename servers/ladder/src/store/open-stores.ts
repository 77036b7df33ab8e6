import { join, resolve } from 'node:path';
import { LADDER_POLICY_FILE, type LadderPolicy } from '../policy.js';
import type { Clock } from './database.js';
import { LadderFile, LazyRungStore, LazyWorkQueueStore } from './ladder-file.js';
import { checkedUrl, describeUrl, isPostgresUrl, type PgDatabase } from './pg/database.js';
import { migratePgLanes } from './pg/lanes-schema.js';
import type { MigrationOutcome } from './pg/migrations.js';
import { migratePgRungs } from './pg/rungs-schema.js';
import { PgRungStore } from './pg/rungs.js';
import { connectPg, type PgSource } from './pg/unreachable.js';
import { PgWorkQueueStore } from './pg/work-queue.js';
import type { RungStore } from './rungs.js';
import type { WorkQueueOptions, WorkQueueStore } from './work-queue.js';

/** Where a policy keeps the ladder: a SQLite file, or a PostgreSQL database and how to log in to it. */
export type LadderDatabase =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly passwordFile: string | undefined; readonly poolSize: number | undefined; readonly source: PgSource; readonly policyFile: string };

/** The policy's `database:` resolved against the control-plane folder (the policy schema has refused a URL with a password). */
export function ladderDatabase(controlDir: string, policy: LadderPolicy): LadderDatabase {
  if (!isPostgresUrl(policy.database)) return { kind: 'sqlite', path: resolve(controlDir, policy.database) };
  const policyFile = join(controlDir, LADDER_POLICY_FILE);
  return {
    kind: 'postgres',
    url: policy.database,
    passwordFile: policy.password_file === undefined ? undefined : resolve(controlDir, policy.password_file),
    poolSize: policy.pool_size,
    source: { urlFrom: `database in ${policyFile}`, passwordFileWay: `password_file in ${LADDER_POLICY_FILE}` },
    policyFile,
  };
}

/** The database named for people: the file, or the URL without a password. */
export function describeLadderDatabase(database: LadderDatabase): string {
  return database.kind === 'sqlite' ? database.path : describeUrl(checkedUrl(database.url));
}

/** The two stores of the ladder on either backend, and close(), which ends them (and a pool). */
export interface LadderStoreSet {
  readonly work: WorkQueueStore;
  readonly rungs: RungStore;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  readonly workQueue?: WorkQueueOptions;
  /** Tests move time by hand; absent, SQLite reads the system clock and PostgreSQL the database's. */
  readonly clock?: Clock | undefined;
  /** Runs once before any call uses the stores (the server seeds its default repository's owner). */
  readonly prepare?: (stores: { readonly work: WorkQueueStore; readonly rungs: RungStore }) => Promise<void>;
}

/** Connects (one connection made now: a database that cannot be used fails here, in one line). */
export function connectLadderPg(database: Extract<LadderDatabase, { kind: 'postgres' }>, clock?: Clock): Promise<PgDatabase> {
  return connectPg({ url: database.url, passwordFile: database.passwordFile, poolSize: database.poolSize, clock, source: database.policyFile }, database.source);
}

/** Every component's migrations, in the order their tables may refer to each other. */
export async function migratePg(db: PgDatabase): Promise<MigrationOutcome[]> {
  return [await migratePgLanes(db), await migratePgRungs(db)];
}

/**
 * The ladder's stores, selected by the policy's `database:`, for the server and the token CLI alike.
 *
 * SQLite: the file opened lazily (see LadderFile): nothing is made until a write, and a fresh
 * install's reads are answered as a fresh file would answer them. PostgreSQL: connected and
 * migrated now (under the migrations' advisory lock, so servers starting together take turns), then
 * prepared once; a database that cannot be reached stops the start with one line saying why.
 */
export async function openLadderStores(database: LadderDatabase, options: OpenStoresOptions = {}): Promise<LadderStoreSet> {
  if (database.kind === 'sqlite') {
    const file = new LadderFile(database.path, {
      ...(options.workQueue ? { workQueue: options.workQueue } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.prepare ? { prepare: options.prepare } : {}),
    });
    const work = new LazyWorkQueueStore(file);
    return { work, rungs: new LazyRungStore(file), close: async () => work.close() };
  }
  const db = await connectLadderPg(database, options.clock);
  try {
    // Each store's open() applies its component's migrations (under the advisory lock).
    const work = await PgWorkQueueStore.open(db, options.workQueue);
    const rungs = await PgRungStore.open(db);
    await options.prepare?.({ work, rungs });
    return {
      work,
      rungs,
      close: async () => {
        work.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
