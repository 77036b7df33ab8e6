// The raw SQL `pnpm bench ladder --backend postgres` compares the PostgreSQL work-queue store with,
// on the store's own schema (servers/ladder/src/store/pg/) and the same database, plus the SQL that
// resets the queue between runs and checks every run. Kept in one place so the report prints the
// statements exactly as they ran. Time is the database's clock (DB_NOW_MS), as in the store.
import { DB_NOW_MS } from '../../servers/ladder/dist/store/pg/database.js';
import { CONTRIBUTOR_KINDS } from './ladder-claims-sql.mjs';

/** The kinds a plain contributor may claim, as a PostgreSQL array literal. */
const KINDS = `ARRAY[${JSON.parse(CONTRIBUTOR_KINDS).map((kind) => `'${kind}'`).join(', ')}]::text[]`;

/** An epoch-ms BIGINT as the ISO text the store writes into an event's detail (`2026-12-02T08:00:00.000Z`). */
const iso = (ms) => `to_char(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The statements, given how the store's schema orders asks of equal priority and age (`tiebreak`,
 * the column after created_at in the store's queue order) and how ask_events.detail is typed
 * (`detailType`: jsonb or text).
 *   $1 lane id, $2 actor, $3 lease in ms (claims); $1 ask id, $2 actor, $3 fence (answers).
 */
export function rawSql({ tiebreak, detailType }) {
  const detail = (object) => `${object}::${detailType === 'jsonb' ? 'jsonb' : 'text'}`;
  return {
    /** The least a claim can be: the first open ask of the lane in queue order, one autocommit statement. */
    bareClaim: `UPDATE asks AS a SET state = 'claimed', holder = $2, fence = a.fence + 1, attempts = a.attempts + 1, lease_until = clock.now + $3, updated_at = clock.now
FROM (SELECT ${DB_NOW_MS} AS now) AS clock
WHERE a.id = (SELECT c.id FROM asks c WHERE c.lane_id = $1 AND c.state = 'open' ORDER BY c.priority, c.created_at, c.${tiebreak} LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING a.id, a.fence`,
    bareAnswer: `UPDATE asks SET state = 'answered', answer = 'complete', answered_by = $2, lease_until = NULL, updated_at = ${DB_NOW_MS}
WHERE id = $1 AND state = 'claimed' AND fence = $3 AND holder = $2`,
    /**
     * The store's claim as one statement: its claimability guard (open or lapsed lease, attempts
     * left, unassigned or assigned to the caller, every dependency answered complete or grant, a
     * kind in the caller's scope), the same order, the same columns, and the `claimed` event the
     * store writes ({lease_until}) in the same statement: one round trip, one transaction.
     */
    guardedClaim: `WITH clock AS (SELECT ${DB_NOW_MS} AS now),
claimed AS (
  UPDATE asks AS a SET state = 'claimed', holder = $2, fence = a.fence + 1, attempts = a.attempts + 1, lease_until = clock.now + $3, updated_at = clock.now
  FROM clock
  WHERE a.id = (
    SELECT c.id FROM asks c, clock
    WHERE c.lane_id = $1 AND c.state IN ('open', 'claimed') AND c.kind = ANY (${KINDS})
      AND ((c.state = 'open' OR (c.state = 'claimed' AND c.lease_until < clock.now)) AND c.attempts < c.max_attempts)
      AND (c.assignee IS NULL OR c.assignee = $2)
      AND NOT EXISTS (SELECT 1 FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on
                      WHERE d.ask_id = c.id AND NOT (dep.state = 'answered' AND dep.answer IN ('complete', 'grant')))
    ORDER BY c.priority, c.created_at, c.${tiebreak} LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
  RETURNING a.id, a.fence, a.lease_until, clock.now)
INSERT INTO ask_events (ask_id, at, actor, type, fence, detail)
SELECT id, now, $2, 'claimed', fence, ${detail(`json_build_object('lease_until', ${iso('lease_until')})`)} FROM claimed
RETURNING ask_id AS id, fence`,
    /** The guarded answer and its `answered` event ({answer, note}), one statement. */
    guardedAnswer: `WITH answered AS (
  UPDATE asks SET state = 'answered', answer = 'complete', answer_note = NULL, answered_by = $2, lease_until = NULL, updated_at = ${DB_NOW_MS}
  WHERE id = $1 AND state = 'claimed' AND fence = $3 AND holder = $2
  RETURNING id, fence, updated_at)
INSERT INTO ask_events (ask_id, at, actor, type, fence, detail)
SELECT id, updated_at, $2, 'answered', fence, ${detail(`json_build_object('answer', 'complete', 'note', NULL)`)} FROM answered
RETURNING ask_id`,
  };
}

/** How the schema the store made orders the queue and types event details, read from the catalog. */
export async function schemaShape(client) {
  const columns = await client.query(`SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name IN ('asks', 'ask_events')`);
  const has = (table, column) => columns.rows.find((row) => row.table_name === table && row.column_name === column);
  if (!has('asks', 'id') || !has('ask_events', 'detail')) throw new Error('the database has no asks/ask_events tables: the work-queue store did not create its schema');
  return { tiebreak: has('asks', 'seq') ? 'seq' : 'id', detailType: has('ask_events', 'detail').data_type === 'jsonb' ? 'jsonb' : 'text' };
}

/** The queue every run starts from, kept beside the store's tables after it was posted once. */
export const TEMPLATE = {
  save: [
    'DROP TABLE IF EXISTS bench_template_asks, bench_template_events',
    'CREATE TABLE bench_template_asks AS SELECT * FROM asks WHERE lane_id = $1',
    'CREATE TABLE bench_template_events AS SELECT e.* FROM ask_events e JOIN asks a ON a.id = e.ask_id WHERE a.lane_id = $1',
  ],
  /** In one transaction; ask_events' seq keeps counting past the template's. */
  restore: [
    'TRUNCATE asks, ask_events, ask_dependencies CASCADE',
    'INSERT INTO asks SELECT * FROM bench_template_asks',
    'INSERT INTO ask_events OVERRIDING SYSTEM VALUE SELECT * FROM bench_template_events',
  ],
  /** Outside a transaction, before the timed part: fresh statistics and no checkpoint due. */
  settle: ['ANALYZE asks, ask_events', 'CHECKPOINT'],
};

/** The checks after a run, on the lane: every ask answered once, by whom, with which fence. */
export const VERIFY = {
  states: 'SELECT state, count(*)::int AS n FROM asks WHERE lane_id = $1 GROUP BY state ORDER BY state',
  /** Asks not answered `complete` exactly once, with fence 1 and attempts 1 (or, with $2 false, any fence), and their event counts. */
  wrong: `SELECT count(*)::int AS n FROM asks a
LEFT JOIN (SELECT ask_id, count(*) FILTER (WHERE type = 'claimed') AS claimed, count(*) FILTER (WHERE type = 'answered') AS answered
           FROM ask_events GROUP BY ask_id) e ON e.ask_id = a.id
WHERE a.lane_id = $1 AND (a.fence <> 1 OR a.attempts <> 1 OR a.answer IS DISTINCT FROM 'complete' OR a.answered_by IS DISTINCT FROM a.holder
  OR coalesce(e.claimed, 0) <> $2 OR coalesce(e.answered, 0) <> $2)`,
  holders: 'SELECT id, holder FROM asks WHERE lane_id = $1',
  answeredCount: "SELECT count(*)::int AS n FROM asks WHERE lane_id = $1 AND state = 'answered'",
  /** After the kill: per ask, its fence, attempts, answer and event counts. */
  kill: `SELECT a.id, a.state, a.fence, a.attempts, a.answer, a.answered_by, a.holder,
  coalesce(e.claimed, 0)::int AS claimed, coalesce(e.answered, 0)::int AS answered, e.answered_fence, e.answered_by_events
FROM asks a
LEFT JOIN (SELECT ask_id, count(*) FILTER (WHERE type = 'claimed') AS claimed, count(*) FILTER (WHERE type = 'answered') AS answered,
                  max(fence) FILTER (WHERE type = 'answered') AS answered_fence, count(DISTINCT actor) FILTER (WHERE type = 'answered') AS answered_by_events
           FROM ask_events GROUP BY ask_id) e ON e.ask_id = a.id
WHERE a.lane_id = $1`,
  fences: 'SELECT id, fence FROM asks WHERE id = ANY ($1::text[])',
};
