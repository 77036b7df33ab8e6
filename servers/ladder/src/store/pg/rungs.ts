import { ToolError } from '@bulkhead/core';
import { JOINED_RUNG_COLUMNS, pastSubtree, refuseRevisionConflicts, RUNG_COLUMNS, toRung, toSearchHit, type RungRow } from '../rung-rows.js';
import { RANK_WINDOW } from '../rung-search.js';
import type { Rung, RungStore, RungWrite, SearchOptions, SearchResult } from '../rungs.js';
import { plannedEachCall, type PgDatabase, type PgTx } from './database.js';
import { matchesIn, pgSearchQuery, snippetOf } from './rung-search.js';
import { migratePgRungs, REBUILD_SEARCH, SEARCH_CONFIG, TS_RANK_WEIGHTS } from './rungs-schema.js';

interface SearchRow extends RungRow {
  readonly score: number;
  readonly broad: boolean;
  /** ladder_search_snippet of each text where a word of the query is (null where none is). */
  readonly summary_snippet: string | null;
  readonly body_snippet: string | null;
  readonly path_snippet: string | null;
}

/** `search` narrowed to one repository, or not; $1 the query, $2 any of its terms, $3 the window, $4 the limit, $5 the repository. */
function searchStatement(inRepository: boolean): string {
  const query = `to_tsquery('${SEARCH_CONFIG}', $1)`;
  const anyTerm = `to_tsquery('${SEARCH_CONFIG}', $2)`;
  const snippet = (column: string, weight: string) =>
    `CASE WHEN ts_filter(r.search, '{${weight}}') @@ ${anyTerm} THEN ladder_search_snippet(r.${column}, ${anyTerm}) END AS ${column}_snippet`;
  // ts_rank_cd (cover density) rather than ts_rank: ts_rank saturates near 1 for a word said twice,
  // so a rung repeating the words barely outranks one saying them once and the length
  // normalization (1: divided by 1 + the log of the entry's length, as bm25 prefers short texts)
  // then reverses them; cover density grows with each occurrence, as bm25's term frequency does.
  // The newest matches, one more than the window, each ranked as it is read (the row is in hand
  // then; ranking after a second lookup by id cost as much again): found from the GIN index for a
  // rare word, or by walking the rungs newest first for a word in most of them (the planner knows
  // which from the words' frequencies, so the statement is planned for each call's words), and
  // either way stopped there. The top of the window is kept, and snippets are made for it only.
  return `WITH matches AS (
      SELECT id, ts_rank_cd('${TS_RANK_WEIGHTS}', search, ${query}, 1) AS score
      FROM rungs WHERE search @@ ${query}${inRepository ? ' AND repo = $5' : ''} ORDER BY id DESC LIMIT $3 + 1
    ), ranked AS (
      SELECT id, score FROM (SELECT id, score FROM matches ORDER BY id DESC LIMIT $3) newest
      ORDER BY score DESC, id DESC LIMIT $4
    )
    SELECT ${JOINED_RUNG_COLUMNS}, ranked.score, (SELECT count(*) FROM matches) > $3 AS broad,
      ${snippet('summary', 'a')}, ${snippet('body', 'c')}, ${snippet('path', 'b')}
    FROM ranked JOIN rungs r ON r.id = ranked.id ORDER BY ranked.score DESC, r.id DESC`;
}

const SEARCH_EVERYWHERE = plannedEachCall(searchStatement(false));
const SEARCH_ONE_REPOSITORY = plannedEachCall(searchStatement(true));

/** The snippet of the text with the most matches, the summary first, then the body, then the path. */
function bestSnippet(row: SearchRow): string {
  const candidates = [
    [row.summary, row.summary_snippet],
    [row.body ?? '', row.body_snippet],
    [row.path, row.path_snippet],
  ] as const;
  let best: { content: string; headline: string } | undefined;
  for (const [content, headline] of candidates) {
    if (headline !== null && (best === undefined || matchesIn(headline) > matchesIn(best.headline))) best = { content, headline };
  }
  return best ? snippetOf(best.content, best.headline) : row.summary;
}

/** PostgreSQL refuses text holding NUL; said here, before the transaction, of the first field holding one. */
function refuseNul(repo: string, rungs: readonly RungWrite[], actor: string): void {
  const fields = (rung: RungWrite): [string, string | undefined][] => [
    ['path', rung.path],
    ['summary', rung.summary],
    ['body', rung.body],
    ['commit', rung.commit],
  ];
  if (repo.includes('\0')) throw new ToolError('the repository name holds a NUL character (U+0000), which PostgreSQL cannot store; remove it', 'bad_argument');
  if (actor.includes('\0')) throw new ToolError('the actor holds a NUL character (U+0000), which PostgreSQL cannot store; remove it', 'bad_argument');
  rungs.forEach((rung, i) => {
    const field = fields(rung).find(([, value]) => value?.includes('\0'));
    if (field) throw new ToolError(`rungs[${i}] (${rung.path.replaceAll('\0', '\\0')}): ${field[0]} holds a NUL character (U+0000), which PostgreSQL cannot store; remove it`, 'bad_argument');
  });
}

function byPath(a: RungWrite, b: RungWrite): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * PostgreSQL backend of the rung store, on a PgDatabase shared with the work queue. A write is one
 * transaction that locks every row it touches before deciding (`SELECT … FOR UPDATE`, in path
 * order so two writers of the same paths queue rather than deadlock), and creates a first rung
 * with `INSERT … ON CONFLICT DO NOTHING`: of two servers writing one path against the same
 * expected revision, the second waits for the first and then finds the new revision.
 */
export class PgRungStore implements RungStore {
  private constructor(private readonly db: PgDatabase) {}

  /** Migrates (migratePgRungs) and returns the store; the PgDatabase stays its caller's to close. */
  static async open(db: PgDatabase): Promise<PgRungStore> {
    await migratePgRungs(db);
    return new PgRungStore(db);
  }

  async write(repo: string, rungs: readonly RungWrite[], actor: string): Promise<Rung[]> {
    refuseNul(repo, rungs, actor);
    return this.db.transaction(async (tx) => {
      const stored = new Map<string, RungRow>();
      const lock = async (paths: readonly string[]) => {
        const rows = await tx.rows<RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = $1 AND path = ANY($2::text[]) ORDER BY path FOR UPDATE`, [repo, paths]);
        for (const row of rows) stored.set(row.path, row);
      };
      await lock(rungs.map((rung) => rung.path));
      // A first write (blind, or expecting no rung) inserts; a path another server created since
      // the lock above is locked in turn and decided as a rewrite.
      const firsts = rungs.filter((rung) => !stored.has(rung.path) && (rung.expectedRevision ?? 0) === 0).sort(byPath);
      const created = await this.insertFirsts(tx, repo, firsts, actor);
      const raced = firsts.filter((rung) => !created.has(rung.path)).map((rung) => rung.path);
      if (raced.length > 0) await lock(raced);
      refuseRevisionConflicts(rungs, (path) => stored.get(path)?.revision ?? 0);
      const rewrites = rungs.filter((rung) => stored.has(rung.path));
      if (rewrites.length > 0) {
        await tx.run(
          `UPDATE rungs r SET kind = w.kind, commit_id = w.commit_id, object_id = w.object_id, summary = w.summary, body = w.body,
             revision = r.revision + 1, author = $1, written_at = $2, search = ladder_rung_search(w.summary, r.path, w.body)
           FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS w(id, kind, commit_id, object_id, summary, body)
           WHERE r.id = w.id`,
          [actor, tx.now, rewrites.map((rung) => stored.get(rung.path)!.id), ...columnsOf(rewrites)],
        );
      }
      const paths = rungs.map((rung) => rung.path);
      await tx.run(
        `INSERT INTO rung_revisions (rung_id, revision, kind, commit_id, object_id, summary, body, author, written_at)
         SELECT id, revision, kind, commit_id, object_id, summary, body, author, written_at FROM rungs WHERE repo = $1 AND path = ANY($2::text[])`,
        [repo, paths],
      );
      const written = new Map((await tx.rows<RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = $1 AND path = ANY($2::text[])`, [repo, paths])).map((row) => [row.path, row]));
      return rungs.map((rung) => toRung(written.get(rung.path)!));
    });
  }

  /** Inserts the rungs no row has yet; returns the paths inserted (not those another server inserted first). */
  private async insertFirsts(tx: PgTx, repo: string, rungs: readonly RungWrite[], actor: string): Promise<Set<string>> {
    if (rungs.length === 0) return new Set();
    const rows = await tx.rows<{ path: string }>(
      `INSERT INTO rungs (repo, path, kind, commit_id, object_id, summary, body, revision, author, written_at, search)
       SELECT $1, w.path, w.kind, w.commit_id, w.object_id, w.summary, w.body, 1, $2, $3, ladder_rung_search(w.summary, w.path, w.body)
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS w(path, kind, commit_id, object_id, summary, body, n)
       ORDER BY w.n
       ON CONFLICT (repo, path) DO NOTHING RETURNING path`,
      [repo, actor, tx.now, rungs.map((rung) => rung.path), ...columnsOf(rungs)],
    );
    return new Set(rows.map((row) => row.path));
  }

  async get(repo: string, path: string): Promise<Rung | undefined> {
    const row = await this.db.one<RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = $1 AND path = $2`, [repo, path]);
    return row && toRung(row);
  }

  async children(repo: string, path: string): Promise<Rung[]> {
    const rows =
      path === '_repo'
        ? await this.db.rows<RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = $1 AND kind IN ('directory','file') AND strpos(path, '/') = 0 ORDER BY path`, [repo])
        : await this.db.rows<RungRow>(
            `SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = $1 AND path > $2 AND path < $3 AND strpos(substr(path, length($2) + 1), '/') = 0 ORDER BY path`,
            [repo, `${path}/`, pastSubtree(path)],
          );
    return rows.map(toRung);
  }

  async list(repo: string): Promise<Rung[]> {
    return (await this.db.rows<RungRow>(`SELECT ${RUNG_COLUMNS} FROM rungs WHERE repo = $1 ORDER BY path`, [repo])).map(toRung);
  }

  async history(repo: string, path: string): Promise<Rung[]> {
    const rows = await this.db.rows<RungRow>(
      `SELECT r.id, r.repo, r.path, v.kind, v.commit_id, v.object_id, v.summary, v.body, v.revision, v.author, v.written_at
       FROM rungs r JOIN rung_revisions v ON v.rung_id = r.id WHERE r.repo = $1 AND r.path = $2 ORDER BY v.revision DESC`,
      [repo, path],
    );
    return rows.map(toRung);
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult> {
    const parsed = pgSearchQuery(query);
    if (parsed === undefined) return { hits: [], broad: false };
    const parameters = [parsed.all, parsed.any, RANK_WINDOW, options.limit];
    const rows =
      options.repo === undefined ? await this.db.rows<SearchRow>(SEARCH_EVERYWHERE, parameters) : await this.db.rows<SearchRow>(SEARCH_ONE_REPOSITORY, [...parameters, options.repo]);
    // ts_rank_cd is higher-is-better already; a real (float4), shown as PostgreSQL gives it.
    return { hits: rows.map((row) => toSearchHit(row, bestSnippet(row), row.score)), broad: rows[0]?.broad ?? false };
  }

  async reindex(repo: string): Promise<number> {
    return this.db.run(`${REBUILD_SEARCH} WHERE repo = $1`, [repo]);
  }
}

/** The columns a write sets, as arrays for unnest, in the order kind, commit, object id, summary, body. */
function columnsOf(rungs: readonly RungWrite[]): (string | null)[][] {
  return [rungs.map((rung) => rung.kind), rungs.map((rung) => rung.commit), rungs.map((rung) => rung.objectId), rungs.map((rung) => rung.summary), rungs.map((rung) => rung.body ?? null)];
}
