import type { Db } from './database.js';
import { applyMigrations } from './migrations.js';
import { SEARCH_WEIGHTS } from './rung-search.js';

const COMPONENT = 'rungs';

/** The search weights (a term in the summary counts most, then the path, then the body) as bm25's arguments after the table, in rung_search's column order. */
export const BM25_WEIGHT_ARGUMENTS = `${SEARCH_WEIGHTS.summary}, ${SEARCH_WEIGHTS.body}, ${SEARCH_WEIGHTS.path}, ${SEARCH_WEIGHTS.repoToken}`;

/** Each step runs once, in order, in its own BEGIN IMMEDIATE transaction together with its record. */
const RUNGS_MIGRATIONS: readonly string[] = [
  `CREATE TABLE rungs (
    id INTEGER PRIMARY KEY,
    repo TEXT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('repo','directory','file','release','changeset')),
    commit_id TEXT NOT NULL,
    object_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT,
    revision INTEGER NOT NULL CHECK (revision >= 1),
    author TEXT NOT NULL,
    written_at INTEGER NOT NULL,
    UNIQUE (repo, path)
  ) STRICT;

  -- Every write, the current one included, so history needs no second source.
  CREATE TABLE rung_revisions (
    rung_id INTEGER NOT NULL REFERENCES rungs (id),
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    object_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT,
    author TEXT NOT NULL,
    written_at INTEGER NOT NULL,
    PRIMARY KEY (rung_id, revision)
  ) STRICT, WITHOUT ROWID;

  -- rowid = rungs.id. A table with its own copy of the text (not external content), so one
  -- repository's rows can be rebuilt without touching the others. repo_token is one indexed
  -- word standing for the repository (see repoToken), so a search in one repository is a join of
  -- two index entries rather than a check of every match's stored row.
  CREATE VIRTUAL TABLE rung_search USING fts5 (
    summary, body, path, repo_token,
    tokenize = 'porter unicode61 remove_diacritics 2'
  );
  INSERT INTO rung_search (rung_search, rank) VALUES ('rank', 'bm25(${BM25_WEIGHT_ARGUMENTS})');`,
];

/** Creates rungs, rung_revisions and rung_search; safe to call on every open, from any process. */
export function migrateRungs(db: Db, now: number = Date.now()): void {
  applyMigrations(db, COMPONENT, RUNGS_MIGRATIONS, now);
}
