import type { RungKind } from '../ladder/rung-paths.js';

/** One rung as stored: the current revision of a path's summary, anchored to a commit. */
export interface Rung {
  readonly repo: string;
  readonly path: string;
  readonly kind: RungKind;
  /** The commit the author anchored the summary to. */
  readonly commit: string;
  /** The git object id of the path at that commit (tree, blob, or the tag's commit for a release). */
  readonly objectId: string;
  readonly summary: string;
  readonly body: string | null;
  /** 1 for the first write, then one more per write. */
  readonly revision: number;
  readonly author: string;
  /** Milliseconds since the epoch. */
  readonly writtenAt: number;
}

/** A rung to write, already checked against git: its commit resolved and its object id found. */
export interface RungWrite {
  readonly path: string;
  readonly kind: RungKind;
  readonly commit: string;
  readonly objectId: string;
  readonly summary: string;
  readonly body?: string | undefined;
  /** The revision the writer read (0: the writer expects no rung yet); absent writes blindly. */
  readonly expectedRevision?: number | undefined;
}

export interface SearchHit {
  readonly repo: string;
  readonly path: string;
  readonly kind: RungKind;
  readonly summary: string;
  /** The best-matching part of the summary, body or path, matches in [brackets]. */
  readonly snippet: string;
  readonly revision: number;
  readonly commit: string;
  /** bm25 relevance, higher is better. */
  readonly score: number;
}

export interface SearchResult {
  readonly hits: SearchHit[];
  /**
   * The words are in so many rungs (more than the backend ranks in one search) that only the
   * most recently created of them were ranked; an older rung may match as well. A rarer word widens the ranking.
   */
  readonly broad: boolean;
}

export interface SearchOptions {
  readonly repo?: string | undefined;
  readonly limit: number;
}

/**
 * The ladder's storage, kept this small so a PostgreSQL backend can be added beside SQLite.
 *
 * Async on purpose: a networked database can only answer with promises, and callers written
 * against promises work with both. The SQLite backend does each call synchronously inside (one
 * short transaction, no await in it), so a write's checks and its rows can never interleave with
 * another writer. Git is never called from here: callers resolve commits and object ids first.
 */
export interface RungStore {
  /**
   * Writes every rung or none, in one transaction. A rung whose `expectedRevision` differs from
   * the stored revision fails the whole write with a `revision_conflict` ToolError naming each one.
   */
  write(repo: string, rungs: readonly RungWrite[], actor: string): Promise<Rung[]>;
  get(repo: string, path: string): Promise<Rung | undefined>;
  /** Rungs directly under `path` (`_repo`: the top-level directories and files). */
  children(repo: string, path: string): Promise<Rung[]>;
  /** Every rung of a repository, by path. */
  list(repo: string): Promise<Rung[]>;
  /** Every revision of a rung, newest first; empty when the path has no rung. */
  history(repo: string, path: string): Promise<Rung[]>;
  /** Full-text search over summaries, bodies and paths, best first; any text is a valid query. */
  search(query: string, options: SearchOptions): Promise<SearchResult>;
  /** Rebuilds the repository's search entries from its rungs; returns how many were indexed. */
  reindex(repo: string): Promise<number>;
}
