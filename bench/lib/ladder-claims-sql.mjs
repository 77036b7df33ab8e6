// The raw SQLite statements `pnpm bench ladder` compares the work-queue store with, on the store's own
// schema (servers/ladder/src/store/lanes-schema.ts) and the same database file. Kept in one place so
// the report can print them exactly as they ran.

/** The kinds a plain contributor may claim (the built-in kinds with contributor scope). */
export const CONTRIBUTOR_KINDS = JSON.stringify(['work', 'resolve_conflict', 'question']);

export const SQL = {
  /** The least a claim can be: take the first open ask of the lane in priority order, one statement. */
  bareClaim: `UPDATE asks SET state = 'claimed', holder = @actor, fence = fence + 1, attempts = attempts + 1, lease_until = @lease_until, updated_at = @now
WHERE id = (SELECT id FROM asks WHERE lane_id = @lane_id AND state = 'open' ORDER BY priority, created_at, rowid LIMIT 1)
RETURNING id, fence`,
  bareAnswer: `UPDATE asks SET state = 'answered', answer = 'complete', answered_by = @actor, lease_until = NULL, updated_at = @now
WHERE id = @id AND state = 'claimed' AND fence = @fence AND holder = @actor`,
  /**
   * The store's claim as one statement: its claimability guard (open or lapsed lease, attempts left,
   * unassigned or assigned to the caller, every dependency answered complete or grant, a kind in the
   * caller's scope), the same order, the same columns set.
   */
  guardedClaim: `UPDATE asks AS a SET state = 'claimed', holder = @actor, fence = a.fence + 1, attempts = a.attempts + 1, lease_until = @lease_until, updated_at = @now
WHERE a.id = (
  SELECT c.id FROM asks c
  WHERE c.lane_id = @lane_id AND c.state IN ('open', 'claimed') AND c.kind IN (SELECT value FROM json_each('${CONTRIBUTOR_KINDS}'))
    AND ((c.state = 'open' OR (c.state = 'claimed' AND c.lease_until < @now)) AND c.attempts < c.max_attempts)
    AND (c.assignee IS NULL OR c.assignee = @actor)
    AND NOT EXISTS (SELECT 1 FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on
                    WHERE d.ask_id = c.id AND NOT (dep.state = 'answered' AND dep.answer IN ('complete', 'grant')))
  ORDER BY c.priority, c.created_at, c.rowid LIMIT 1)
RETURNING id, fence, lease_until`,
  guardedAnswer: `UPDATE asks SET state = 'answered', answer = 'complete', answer_note = NULL, answered_by = @actor, lease_until = NULL, updated_at = @now
WHERE id = @id AND state = 'claimed' AND fence = @fence AND holder = @actor`,
  /** The event row the store writes for a claim (detail {lease_until}) and for an answer (detail {answer, note}). */
  insertEvent: 'INSERT INTO ask_events (ask_id, at, actor, type, fence, detail) VALUES (?, ?, ?, ?, ?, ?)',
};

export function rawStatements(db) {
  return Object.fromEntries(Object.entries(SQL).map(([key, sql]) => [key, db.prepare(sql)]));
}
