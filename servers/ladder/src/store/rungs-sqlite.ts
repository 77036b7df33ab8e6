import type { RungKind } from '../ladder/rung-paths.js';
import { immediate, systemClock, type Clock, type Db } from './database.js';
import { JOINED_RUNG_COLUMNS, pastSubtree, refuseRevisionConflicts, RUNG_COLUMNS, toRung, toSearchHit, type RungRow } from './rung-rows.js';
import { ftsQuery, inRepository, RANK_WINDOW, repoToken, SNIPPET_TOKENS } from './rung-search.js';
import type { Rung, RungStore, RungWrite, SearchOptions, SearchResult } from './rungs.js';
import { BM25_WEIGHT_ARGUMENTS, migrateRungs } from './rungs-schema.js';

interface SearchRow extends RungRow {
  readonly snippet: string;
  /** bm25: negative, lower is better. */
  readonly rank: number;
}

/** SQLite backend of the rung store: one file shared with the lanes store, opened with openDatabase. */
export class SqliteRungStore implements RungStore {
  private readonly statements;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {
    migrateRungs(db, clock());
    this.statements = {
      byPath: db.prepare<[string, string], RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = ? AND path = ?`),
      byRepo: db.prepare<[string], RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = ? ORDER BY path`),
      under: db.prepare<{ repo: string; prefix: string; past: string }, RungRow>(
        `SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = @repo AND path > @prefix AND path < @past AND instr(substr(path, length(@prefix) + 1), '/') = 0 ORDER BY path`,
      ),
      topLevel: db.prepare<[string], RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = ? AND kind IN ('directory','file') AND instr(path, '/') = 0 ORDER BY path`),
      insert: db.prepare<[string, string, RungKind, string, string, string, string | null, string, number], { id: number }>(
        `INSERT INTO rungs (repo, path, kind, commit_id, object_id, summary, body, revision, author, written_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING id`,
      ),
      update: db.prepare<[RungKind, string, string, string, string | null, number, string, number, number]>(
        'UPDATE rungs SET kind = ?, commit_id = ?, object_id = ?, summary = ?, body = ?, revision = ?, author = ?, written_at = ? WHERE id = ?',
      ),
      keepRevision: db.prepare(
        `INSERT INTO rung_revisions (rung_id, revision, kind, commit_id, object_id, summary, body, author, written_at)
         SELECT id, revision, kind, commit_id, object_id, summary, body, author, written_at FROM rungs WHERE id = ?`,
      ),
      history: db.prepare<[string, string], RungRow>(
        `SELECT r.id, r.repo, r.path, v.kind, v.commit_id, v.object_id, v.summary, v.body, v.revision, v.author, v.written_at
         FROM rungs r JOIN rung_revisions v ON v.rung_id = r.id WHERE r.repo = ? AND r.path = ? ORDER BY v.revision DESC`,
      ),
      unindex: db.prepare<[number]>('DELETE FROM rung_search WHERE rowid = ?'),
      index: db.prepare<[string, number]>("INSERT INTO rung_search (rowid, summary, body, path, repo_token) SELECT id, summary, coalesce(body, ''), path, ? FROM rungs WHERE id = ?"),
      unindexRepo: db.prepare<[string]>('DELETE FROM rung_search WHERE rowid IN (SELECT id FROM rungs WHERE repo = ?)'),
      indexRepo: db.prepare<[string, string]>("INSERT INTO rung_search (rowid, summary, body, path, repo_token) SELECT id, summary, coalesce(body, ''), path, ? FROM rungs WHERE repo = ?"),
      // More than RANK_WINDOW matches? Walking the index newest first, this stops at the window's end.
      isBroad: db.prepare<{ match: string; offset: number }, { rowid: number }>(
        `SELECT rowid FROM rung_search WHERE rung_search MATCH @match ORDER BY rowid DESC LIMIT 1 OFFSET @offset`,
      ),
      // FTS5 sorts by its `rank` (bm25 with the column weights of rungs-schema.ts) inside the
      // index, so snippets are made only for the rows kept, and only those are joined to rungs.
      ranked: db.prepare<{ match: string; limit: number }, SearchRow>(
        `SELECT ${JOINED_RUNG_COLUMNS}, hit.snippet, hit.rank FROM (
           SELECT rowid, snippet(rung_search, -1, '[', ']', '…', ${SNIPPET_TOKENS}) AS snippet, rank
           FROM rung_search WHERE rung_search MATCH @match ORDER BY rank LIMIT @limit
         ) hit JOIN rungs r ON r.id = hit.rowid ORDER BY hit.rank`,
      ),
      // FTS5 ignores a rowid bound when it sorts by rank, so the window's bm25 is asked as a plain
      // function over the newest rows and sorted outside; snippets are made for the kept rows only.
      rankedNewest: db.prepare<{ match: string; limit: number; window: number }, SearchRow>(
        `WITH newest AS (
           SELECT rowid AS id, bm25(rung_search, ${BM25_WEIGHT_ARGUMENTS}) AS rank
           FROM rung_search WHERE rung_search MATCH @match ORDER BY rowid DESC LIMIT @window
         ), kept AS (SELECT id, rank FROM newest ORDER BY rank LIMIT @limit)
         SELECT ${JOINED_RUNG_COLUMNS}, kept.rank,
           (SELECT snippet(rung_search, -1, '[', ']', '…', ${SNIPPET_TOKENS}) FROM rung_search WHERE rung_search MATCH @match AND rowid = kept.id) AS snippet
         FROM kept JOIN rungs r ON r.id = kept.id ORDER BY kept.rank`,
      ),
    };
  }

  async write(repo: string, rungs: readonly RungWrite[], actor: string): Promise<Rung[]> {
    const { statements } = this;
    return immediate(this.db, () => {
      const current = rungs.map((rung) => statements.byPath.get(repo, rung.path));
      const storedRevisions = new Map(current.flatMap((row) => (row ? [[row.path, row.revision] as const] : [])));
      refuseRevisionConflicts(rungs, (path) => storedRevisions.get(path) ?? 0);
      const now = this.clock();
      const token = repoToken(repo);
      return rungs.map((rung, i) => {
        const stored = current[i];
        const body = rung.body ?? null;
        let id: number;
        if (stored) {
          id = stored.id;
          statements.update.run(rung.kind, rung.commit, rung.objectId, rung.summary, body, stored.revision + 1, actor, now, id);
          statements.unindex.run(id);
        } else {
          id = statements.insert.get(repo, rung.path, rung.kind, rung.commit, rung.objectId, rung.summary, body, actor, now)!.id;
        }
        statements.keepRevision.run(id);
        statements.index.run(token, id);
        return toRung(statements.byPath.get(repo, rung.path)!);
      });
    });
  }

  async get(repo: string, path: string): Promise<Rung | undefined> {
    const row = this.statements.byPath.get(repo, path);
    return row && toRung(row);
  }

  async children(repo: string, path: string): Promise<Rung[]> {
    const rows = path === '_repo' ? this.statements.topLevel.all(repo) : this.statements.under.all({ repo, prefix: `${path}/`, past: pastSubtree(path) });
    return rows.map(toRung);
  }

  async list(repo: string): Promise<Rung[]> {
    return this.statements.byRepo.all(repo).map(toRung);
  }

  async history(repo: string, path: string): Promise<Rung[]> {
    return this.statements.history.all(repo, path).map(toRung);
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult> {
    const terms = ftsQuery(query);
    if (terms === undefined) return { hits: [], broad: false };
    const match = inRepository(terms, options.repo);
    const parameters = { match, limit: options.limit };
    const broad = this.statements.isBroad.get({ match, offset: RANK_WINDOW }) !== undefined;
    const rows = broad ? this.statements.rankedNewest.all({ ...parameters, window: RANK_WINDOW }) : this.statements.ranked.all(parameters);
    // FTS5's bm25 is negative, lower being better; shown the other way round. Not rounded: when a
    // term is in most rungs its weight is tiny, and only the unrounded values keep their order.
    const hits = rows.map((row) => toSearchHit(row, row.snippet, -row.rank));
    return { hits, broad };
  }

  async reindex(repo: string): Promise<number> {
    return immediate(this.db, () => {
      this.statements.unindexRepo.run(repo);
      return this.statements.indexRepo.run(repoToken(repo), repo).changes;
    });
  }
}
