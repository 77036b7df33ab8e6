import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GitRepository, Roots } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { Ladder, type LadderRepository } from '../src/ladder/ladder.js';
import { openDatabase, type Clock, type Db } from '../src/store/database.js';
import { SqliteRungStore } from '../src/store/rungs-sqlite.js';

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

export interface LadderFixture {
  readonly ws: TempWorkspace;
  /** The repository's folder (`repo/` in the workspace). */
  readonly dir: string;
  readonly db: Db;
  readonly store: SqliteRungStore;
  readonly ladder: Ladder;
  readonly repo: LadderRepository;
  close(): void;
}

/** A git repository with one commit of `files`, a ladder database file beside it, and a Ladder on both. */
export async function ladderFixture(files: Record<string, string>, clock?: Clock): Promise<LadderFixture> {
  const ws = tempWorkspace({}, 'bulkhead-ladder-');
  const dir = ws.mkdir('repo');
  git(dir, ['init', '-q']);
  commit(dir, 'first', files);
  const roots = new Roots([dir], { controlDir: ws.path('control'), denyRead: [] });
  const gitRepository = await GitRepository.open(roots, dir, { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 });
  const db = openDatabase(ws.path('ladder.db'));
  const store = new SqliteRungStore(db, clock);
  return {
    ws,
    dir,
    db,
    store,
    ladder: new Ladder(store),
    repo: { name: 'acme/widgets', git: gitRepository },
    close: () => {
      db.close();
      ws.cleanup();
    },
  };
}
