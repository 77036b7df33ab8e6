import { ToolError } from '@bulkhead/core';
import type { RungKind } from '../ladder/rung-paths.js';
import { immediate, systemClock, type Clock, type Db } from './database.js';
import { ftsQuery } from './rung-search.js';
import type { Rung, RungStore, RungWrite, SearchHit, SearchOptions } from './rungs.js';
import { migrateRungs } from './rungs-schema.js';

interface RungRow {
  readonly id: number;
  readonly repo: string;
  readonly path: string;
  readonly kind: RungKind;
  readonly commit_id: string;
  readonly object_id: string;
  readonly summary: string;
  readonly body: string | null;
  readonly revision: number;
  readonly author: string;
  readonly written_at: number;
}

interface SearchRow extends RungRow {
  readonly snippet: string;
  readonly rank: number;
}

const RUNG_COLUMNS = 'id, repo, path, kind, commit_id, object_id, summary, body, revision, author, written_at';
/** Characters around each match in a snippet: enough to read the match in its sentence. */
const SNIPPET_TOKENS = 16;

function toRung(row: RungRow): Rung {
  return {
    repo: row.repo,
    path: row.path,
    kind: row.kind,
    commit: row.commit_id,
    objectId: row.object_id,
    summary: row.summary,
    body: row.body,
    revision: row.revision,
    author: row.author,
    writtenAt: row.written_at,
  };
}

/** The first path after every path under `prefix/` in byte order (`/` + 1 is `0`). */
function pastSubtree(directory: string): string {
  return `${directory}0`;
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
      index: db.prepare<[number]>('INSERT INTO rung_search (rowid, summary, body, path, repo) SELECT id, summary, coalesce(body, \'\'), path, repo FROM rungs WHERE id = ?'),
      unindexRepo: db.prepare<[string]>('DELETE FROM rung_search WHERE rowid IN (SELECT id FROM rungs WHERE repo = ?)'),
      indexRepo: db.prepare<[string]>('INSERT INTO rung_search (rowid, summary, body, path, repo) SELECT id, summary, coalesce(body, \'\'), path, repo FROM rungs WHERE repo = ?'),
      // The ranked, limited search runs on the FTS table alone (its `rank` is bm25 with the
      // column weights of rungs-schema.ts); only the few rows kept are joined to rungs.
      search: db.prepare<[string, number], SearchRow>(
        `SELECT ${RUNG_COLUMNS.split(', ').map((column) => `r.${column}`).join(', ')}, hit.snippet, hit.rank FROM (
           SELECT rowid, snippet(rung_search, -1, '[', ']', '…', ${SNIPPET_TOKENS}) AS snippet, rank
           FROM rung_search WHERE rung_search MATCH ? ORDER BY rank LIMIT ?
         ) hit JOIN rungs r ON r.id = hit.rowid ORDER BY hit.rank`,
      ),
      searchRepo: db.prepare<[string, string, number], SearchRow>(
        `SELECT ${RUNG_COLUMNS.split(', ').map((column) => `r.${column}`).join(', ')}, hit.snippet, hit.rank FROM (
           SELECT rowid, snippet(rung_search, -1, '[', ']', '…', ${SNIPPET_TOKENS}) AS snippet, rank
           FROM rung_search WHERE rung_search MATCH ? AND repo = ? ORDER BY rank LIMIT ?
         ) hit JOIN rungs r ON r.id = hit.rowid ORDER BY hit.rank`,
      ),
    };
  }

  async write(repo: string, rungs: readonly RungWrite[], actor: string): Promise<Rung[]> {
    const { statements } = this;
    return immediate(this.db, () => {
      const current = rungs.map((rung) => statements.byPath.get(repo, rung.path));
      const conflicts = rungs.flatMap((rung, i) => {
        const stored = current[i];
        if (rung.expectedRevision === undefined || rung.expectedRevision === (stored?.revision ?? 0)) return [];
        return [stored ? `${rung.path} is at revision ${stored.revision}; you expected ${rung.expectedRevision}` : `${rung.path} has no rung yet; you expected revision ${rung.expectedRevision}`];
      });
      if (conflicts.length > 0) {
        throw new ToolError(`${conflicts.join('; ')} — someone wrote first; read it again and merge. Nothing in this write was saved.`, 'revision_conflict');
      }
      const now = this.clock();
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
        statements.index.run(id);
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

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const match = ftsQuery(query);
    if (match === undefined) return [];
    const rows = options.repo === undefined ? this.statements.search.all(match, options.limit) : this.statements.searchRepo.all(match, options.repo, options.limit);
    return rows.map((row) => ({
      repo: row.repo,
      path: row.path,
      kind: row.kind,
      summary: row.summary,
      snippet: row.snippet,
      revision: row.revision,
      commit: row.commit_id,
      // FTS5's bm25 is negative, lower being better; shown the other way round. Not rounded: when a
      // term is in most rungs its weight is tiny, and only the unrounded values keep their order.
      score: -row.rank,
    }));
  }

  async reindex(repo: string): Promise<number> {
    return immediate(this.db, () => {
      this.statements.unindexRepo.run(repo);
      return this.statements.indexRepo.run(repo).changes;
    });
  }
}
