import { ToolError } from '@bulkhead/core';
import type { Answer, AskKinds } from '../ask-kinds.js';
import {
  answerKindRefusal,
  askNotFound,
  cancelRefusal,
  changedWhile,
  claimableWhy,
  claimEvent,
  claimRefusal,
  claimRefusalAfterDependencies,
  cycleRefusal,
  isAskId,
  kindsFor,
  leaseMs,
  newAskValues,
  newlyClaimableSql,
  openKindsByAnswer,
  pathBetween,
  releaseExpiry,
  renewalSql,
  requireDependency,
  requireHold,
  requireOpenForDependencies,
  requirePostableLane,
  requireWorkingLane,
  toAsk,
  toClaim,
  WORKING_LANE_STATES,
  type AskInLaneRow,
  type AskRow,
  type AskSettings,
  type ClaimedRow,
  type DependencyRow,
} from '../ask-rules.js';
import { newId, toHistoryEvent, type EventRow } from '../records.js';
import type { AnswerInput, Ask, AskState, AskWithHistory, Claim, ClaimableAsk, ClaimOptions, PostAskInput, PostedAsk } from '../work-queue.js';
import { answerInput, claimOptions, idSchemas, postAskInput } from '../work-queue.js';
import { DB_NOW_MS, type PgDatabase, type PgQueries } from './database.js';
import type { PgLanes } from './lanes.js';
import { LOCK_SPACE, lockRepo, type PgRoles } from './roles.js';

const ASK_COLUMNS =
  'a.id, a.lane_id, a.kind, a.title, a.body, a.payload, a.priority, a.posted_by, a.assignee, a.idempotency_key, a.state, a.holder, a.lease_until, a.fence, a.attempts, a.max_attempts, a.answer, a.answer_note, a.answered_by, a.created_at, a.updated_at';

/** The statements' time: once per statement (clock_timestamp() moves within one), the test clock's when there is one. */
const NOW_CTE = (param: string) => `now AS (SELECT coalesce(${param}::bigint, ${DB_NOW_MS}) AS ms)`;

/** A ms timestamp as JavaScript's toISOString() spells it, for event details written by SQL. */
const isoSql = (ms: string) => `to_char(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const WORKING_LANE_SQL = WORKING_LANE_STATES.map((state) => `'${state}'`).join(', ');

/** The claim's event type and detail from its RETURNING row, as claimEvent (ask-rules.ts) decides them; the contract tests hold both backends to the same events. */
const CLAIM_EVENT_SQL = `
  CASE WHEN c.fence = c.before_fence AND c.before_state = 'claimed' THEN 'renewed' ELSE 'claimed' END,
  c.fence,
  (CASE WHEN c.fence <> c.before_fence AND c.before_state = 'claimed'
     THEN json_build_object('lease_until', ${isoSql('c.lease_until')}, 'superseded_fence', c.before_fence, 'previous_holder', c.before_holder)
     ELSE json_build_object('lease_until', ${isoSql('c.lease_until')}) END)::text`;

/**
 * The end of both claim statements: the claimed row with the state before the claim (from the
 * locked `prior` row, so no extra read finds the previous holder), whether it has dependencies,
 * and the claim's event. $3 is the actor.
 */
const CLAIMED = `RETURNING ${ASK_COLUMNS}, prior.state AS before_state, prior.holder AS before_holder, prior.fence AS before_fence,
      EXISTS (SELECT 1 FROM ask_dependencies d WHERE d.ask_id = a.id) AS has_dependencies),
  e AS (INSERT INTO ask_events (ask_id, at, actor, type, fence, detail) SELECT c.id, c.updated_at, $3, ${CLAIM_EVENT_SQL} FROM c)
  SELECT * FROM c`;

/**
 * claim by id, one statement: lock the ask (so `before` is the version the UPDATE changes), take
 * it when the caller renews or it is newly claimable, and write the event. Parameters: $1 now or
 * null, $2 ask id, $3 actor, $4 lease ms, $5 kinds the caller may claim without a roles check.
 */
const CLAIM_SQL = `
  WITH ${NOW_CTE('$1')},
  prior AS (
    SELECT a.id, a.state, a.holder, a.fence FROM asks a JOIN lanes l ON l.id = a.lane_id
    WHERE a.id = $2 AND l.state IN (${WORKING_LANE_SQL}) AND a.kind = ANY($5::text[])
    FOR NO KEY UPDATE OF a),
  c AS (
    UPDATE asks AS a SET
      fence = CASE WHEN ${renewalSql({ now: 'now.ms', actor: '$3' })} THEN a.fence ELSE a.fence + 1 END,
      attempts = CASE WHEN ${renewalSql({ now: 'now.ms', actor: '$3' })} THEN a.attempts ELSE a.attempts + 1 END,
      state = 'claimed', holder = $3, lease_until = now.ms + $4::bigint, updated_at = now.ms
    FROM prior, now
    WHERE a.id = prior.id AND (${renewalSql({ now: 'now.ms', actor: '$3' })} OR (${newlyClaimableSql({ now: 'now.ms', actor: '$3' })}))
    ${CLAIMED}`;

/**
 * claimNext, one statement: the most urgent claimable ask, skipping rows another claim has locked
 * (so concurrent claimers take different asks instead of queueing on one), claimed, with its
 * event. Parameters: $1 now or null, $2 lane id, $3 actor, $4 lease ms, $5 kinds.
 */
const CLAIM_NEXT_SQL = `
  WITH ${NOW_CTE('$1')},
  prior AS (
    SELECT a.id, a.state, a.holder, a.fence FROM asks a, now
    WHERE a.lane_id = $2 AND a.state IN ('open', 'claimed') AND a.kind = ANY($5::text[]) AND ${newlyClaimableSql({ now: 'now.ms', actor: '$3' })}
    ORDER BY a.priority, a.created_at, a.seq LIMIT 1
    FOR NO KEY UPDATE OF a SKIP LOCKED),
  c AS (
    UPDATE asks AS a SET fence = a.fence + 1, attempts = a.attempts + 1, state = 'claimed', holder = $3, lease_until = now.ms + $4::bigint, updated_at = now.ms
    FROM prior, now
    WHERE a.id = prior.id AND EXISTS (SELECT 1 FROM lanes l WHERE l.id = $2 AND l.state IN (${WORKING_LANE_SQL}))
    ${CLAIMED}`;

/**
 * answer, one statement: held by the caller with this fence and of a kind in $7, with its event.
 * Parameters: $1 now or null, $2 ask id, $3 fence, $4 actor, $5 answer, $6 note, $7 kinds, $8 event detail.
 */
const ANSWER_SQL = `
  WITH ${NOW_CTE('$1')},
  c AS (
    UPDATE asks AS a SET state = 'answered', answer = $5, answer_note = $6, answered_by = $4, lease_until = NULL, updated_at = now.ms
    FROM now
    WHERE a.id = $2 AND a.state = 'claimed' AND a.fence = $3 AND a.holder = $4 AND a.kind = ANY($7::text[])
    RETURNING ${ASK_COLUMNS}, EXISTS (SELECT 1 FROM ask_dependencies d WHERE d.ask_id = a.id) AS has_dependencies),
  e AS (INSERT INTO ask_events (ask_id, at, actor, type, fence, detail) SELECT c.id, c.updated_at, $4, 'answered', $3, $8 FROM c)
  SELECT * FROM c`;

/**
 * post, one statement: the ask (nothing when an earlier post holds its idempotency key), its
 * dependencies and its event. Parameters: $1 now or null, $2 id, $3 lane, $4 kind, $5 title,
 * $6 body, $7 payload, $8 priority, $9 poster, $10 assignee, $11 key, $12 max attempts,
 * $13 dependencies, $14 event detail.
 */
const POST_SQL = `
  WITH ${NOW_CTE('$1')},
  c AS (
    INSERT INTO asks (id, lane_id, kind, title, body, payload, priority, posted_by, assignee, idempotency_key, state, max_attempts, created_at, updated_at)
    SELECT $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', $12, now.ms, now.ms FROM now
    ON CONFLICT (lane_id, posted_by, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING *),
  d AS (INSERT INTO ask_dependencies (ask_id, depends_on) SELECT c.id, dependency FROM c, unnest($13::text[]) AS dependency),
  e AS (INSERT INTO ask_events (ask_id, at, actor, type, fence, detail) SELECT c.id, c.created_at, $9, 'posted', NULL, $14 FROM c)
  SELECT ${ASK_COLUMNS.replaceAll('a.', 'c.')} FROM c`;

const DEPENDENCIES_SQL = 'SELECT dep.id, dep.state, dep.answer FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on WHERE d.ask_id = $1 ORDER BY dep.seq';

interface ClaimReturning extends ClaimedRow {
  before_state: AskState;
  before_holder: string | null;
  before_fence: number;
}

/**
 * The Ask queue on PostgreSQL. The hot path (claimNext, claim, answer, post) is one autocommit
 * statement each; a refusal is explained in a transaction holding the ask's row lock, so what it
 * reads is what it decides on. Writes that read and then decide (adding dependencies, the expiry
 * inside a refused claim) hold row locks or the repository's advisory lock. Row locks are FOR NO
 * KEY UPDATE, the lock an UPDATE takes: it keeps other writers of the ask out but lets rows that
 * refer to it (events, dependencies) be inserted meanwhile.
 */
export class PgAsks {
  /** Kinds of contributor scope (everyone holds it) allowing each answer: answered without a roles query. */
  private readonly openKindsByAnswer: Map<Answer, string[]>;
  /** Kinds of contributor scope: claimed by id without a roles query. */
  private readonly openKinds: string[];

  constructor(
    private readonly db: PgDatabase,
    private readonly lanes: PgLanes,
    private readonly roles: PgRoles,
    private readonly kinds: AskKinds,
    private readonly settings: AskSettings,
  ) {
    this.openKindsByAnswer = openKindsByAnswer(kinds);
    this.openKinds = kinds.names().filter((name) => kinds.require(name).scope === 'contributor');
  }

  async post(input: PostAskInput, actor: string): Promise<PostedAsk> {
    const ask = postAskInput.parse(input);
    const kind = this.kinds.require(ask.kind);
    const lane = await this.lanes.row(this.db, ask.lane_id);
    if (ask.idempotency_key !== undefined) {
      const earlier = await this.byKey(lane.id, actor, ask.idempotency_key);
      if (earlier) return earlier;
    }
    requirePostableLane(lane.id, lane.state);
    const dependsOn = [...new Set(ask.depends_on)];
    const dependencies = dependsOn.length === 0 ? [] : await this.db.rows<DependencyRow & { repo: string; seq: number }>(
      'SELECT a.id, a.state, a.answer, a.seq, l.repo FROM asks a JOIN lanes l ON l.id = a.lane_id WHERE a.id = ANY($1::text[]) ORDER BY a.seq',
      [dependsOn],
    );
    for (const dependency of dependsOn) requireDependency(dependency, dependencies.find((found) => found.id === dependency), lane.repo);
    // A fresh id has no dependents yet, so these edges cannot close a cycle; addDependencies is
    // the one path that links existing asks and checks for cycles.
    const values = newAskValues(ask, kind.name, actor, this.settings);
    const detail = JSON.stringify({ kind: kind.name, priority: ask.priority, depends_on: dependsOn });
    const inserted = await this.db.one<AskRow>(POST_SQL, [
      this.db.clockParam(),
      newId('ask'),
      lane.id,
      values.kind,
      values.title,
      values.body,
      values.payload,
      values.priority,
      values.posted_by,
      values.assignee,
      values.idempotency_key,
      values.max_attempts,
      dependsOn,
      detail,
    ]);
    if (inserted) return { ask: toAsk(inserted, dependencies), replayed: false };
    // A concurrent post with the same key got in first (ON CONFLICT waited for it to commit): it is the replay.
    const earlier = ask.idempotency_key === undefined ? undefined : await this.byKey(lane.id, actor, ask.idempotency_key);
    if (!earlier) throw new ToolError(`${lane.id}: the ask with idempotency key ${ask.idempotency_key ?? ''} could not be read back; post it again`, 'conflict');
    return earlier;
  }

  private async byKey(laneId: string, actor: string, key: string): Promise<PostedAsk | undefined> {
    const earlier = await this.db.one<AskRow>(`SELECT ${ASK_COLUMNS} FROM asks a WHERE a.lane_id = $1 AND a.posted_by = $2 AND a.idempotency_key = $3`, [laneId, actor, key]);
    return earlier ? { ask: await this.toAsk(this.db, earlier), replayed: true } : undefined;
  }

  /**
   * Under the repository's dependencies lock: two calls that would each close half of a cycle
   * take turns, and the second sees the first's edge. The lock comes before the ask's row lock,
   * so two of these never wait on each other in opposite orders.
   */
  async addDependencies(askId: string, dependsOn: string[], actor: string): Promise<Ask> {
    const added = [...new Set(dependsOn.map((id) => idSchemas.askId.parse(id)))];
    const unlocked = await this.rowInLane(this.db, askId);
    return this.db.transaction(async (tx) => {
      await lockRepo(tx, LOCK_SPACE.dependencies, unlocked.repo);
      const row = await this.rowInLane(tx, askId, 'FOR NO KEY UPDATE OF a');
      if (row.posted_by !== actor) await this.roles.requireScope(tx, row.repo, row.lane_id, actor, 'coordinator', `adding dependencies to ${row.id} (posted by ${row.posted_by})`);
      requireOpenForDependencies(row);
      const found = await tx.rows<{ id: string; repo: string }>('SELECT a.id, l.repo FROM asks a JOIN lanes l ON l.id = a.lane_id WHERE a.id = ANY($1::text[])', [added]);
      // The repo's edges, read once: the breadth-first search runs in memory.
      const edges = await tx.rows<{ ask_id: string; depends_on: string }>(
        'SELECT d.ask_id, d.depends_on FROM ask_dependencies d JOIN asks a ON a.id = d.ask_id JOIN lanes l ON l.id = a.lane_id WHERE l.repo = $1',
        [row.repo],
      );
      const graph = new Map<string, string[]>();
      const link = (from: string, to: string) => graph.set(from, [...(graph.get(from) ?? []), to]);
      for (const edge of edges) link(edge.ask_id, edge.depends_on);
      for (const dependency of added) {
        requireDependency(dependency, found.find((ask) => ask.id === dependency), row.repo);
        const cycle = pathBetween(dependency, row.id, (next) => graph.get(next) ?? []);
        if (cycle) throw cycleRefusal(row.id, dependency, cycle);
        link(row.id, dependency);
      }
      await tx.run('INSERT INTO ask_dependencies (ask_id, depends_on) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [row.id, added]);
      await this.event(tx, row.id, tx.now, actor, 'dependencies_added', null, { depends_on: added });
      return this.toAsk(tx, await this.row(tx, row.id));
    });
  }

  async get(askId: string): Promise<AskWithHistory> {
    const row = await this.row(this.db, askId);
    const events = await this.db.rows<EventRow & { fence: number | null }>('SELECT seq, at, actor, type, fence, detail FROM ask_events WHERE ask_id = $1 ORDER BY seq', [row.id]);
    return { ...(await this.toAsk(this.db, row)), history: events.map((event) => ({ ...toHistoryEvent(event), fence: event.fence })) };
  }

  async list(laneId: string, options: { state?: AskState; limit?: number } = {}): Promise<Ask[]> {
    const lane = await this.lanes.row(this.db, laneId);
    const rows = await this.db.rows<AskRow>(
      `SELECT ${ASK_COLUMNS} FROM asks a WHERE a.lane_id = $1 AND ($2::text IS NULL OR a.state = $2) ORDER BY a.priority, a.created_at, a.seq LIMIT $3`,
      [lane.id, options.state ?? null, options.limit ?? 100],
    );
    return this.toAsks(rows);
  }

  async queryClaimable(laneId: string, actor: string, options: { kind?: string; limit?: number } = {}): Promise<ClaimableAsk[]> {
    const { lane, scopes } = await this.lanes.rowWithScopes(this.db, laneId, actor);
    requireWorkingLane(lane.id, lane.state, lane.coordinator);
    const kinds = kindsFor(this.kinds, scopes, options.kind);
    const rows = await this.db.rows<AskRow>(
      `WITH ${NOW_CTE('$1')}
       SELECT ${ASK_COLUMNS} FROM asks a, now
       WHERE a.lane_id = $2 AND a.state IN ('open', 'claimed') AND a.kind = ANY($3::text[]) AND ${newlyClaimableSql({ now: 'now.ms', actor: '$4' })}
       ORDER BY a.priority, a.created_at, a.seq LIMIT $5`,
      [this.db.clockParam(), lane.id, kinds, actor, options.limit ?? 20],
    );
    const asks = await this.toAsks(rows);
    return rows.map((row, index) => ({ ask: asks[index]!, why: claimableWhy(row, asks[index]!, this.kinds.require(row.kind).scope) }));
  }

  async claim(askId: string, actor: string, options: ClaimOptions = {}): Promise<Claim> {
    const { lease_seconds } = claimOptions.parse(options);
    const lease = leaseMs(this.settings, lease_seconds);
    // The common case in one statement: an ask of a kind everyone may claim, in a working lane.
    const claimed = isAskId(askId) ? await this.db.one<ClaimReturning>(CLAIM_SQL, [this.db.clockParam(), askId, actor, lease, this.openKinds]) : undefined;
    if (claimed) return this.toClaim(claimed);
    const outcome = await this.db.transaction(async (tx) => {
      const before = await this.rowInLane(tx, askId, 'FOR NO KEY UPDATE OF a');
      requireWorkingLane(before.lane_id, before.lane_state, before.coordinator);
      const scope = this.kinds.require(before.kind).scope;
      if (scope !== 'contributor') await this.roles.requireScope(tx, before.repo, before.lane_id, actor, scope, `claiming ${before.id} (${before.kind})`);
      const taken = await tx.one<ClaimReturning>(CLAIM_SQL, [tx.now, before.id, actor, lease, [before.kind]]);
      return taken ?? (await this.refuseClaim(tx, before, actor));
    });
    if (outcome instanceof ToolError) throw outcome;
    return this.toClaim(outcome);
  }

  async claimNext(laneId: string, actor: string, options: ClaimOptions & { kind?: string } = {}): Promise<Claim | undefined> {
    const { kind, ...lease } = options;
    const { lease_seconds } = claimOptions.parse(lease);
    // The lane and the caller's scopes in one read; the claim statement checks the lane's working state again, atomically.
    const { lane, scopes } = await this.lanes.rowWithScopes(this.db, laneId, actor);
    requireWorkingLane(lane.id, lane.state, lane.coordinator);
    const kinds = kindsFor(this.kinds, scopes, kind);
    const claimed = await this.db.one<ClaimReturning>(CLAIM_NEXT_SQL, [this.db.clockParam(), lane.id, actor, leaseMs(this.settings, lease_seconds), kinds]);
    if (!claimed) {
      // Nothing claimable, or the lane stopped working since it was read: say which.
      const now = await this.lanes.row(this.db, laneId);
      requireWorkingLane(now.id, now.state, now.coordinator);
      return undefined;
    }
    return this.toClaim(claimed);
  }

  async release(askId: string, fence: number, actor: string): Promise<Ask> {
    return this.db.transaction(async (tx) => {
      const row = await this.row(tx, askId, 'FOR NO KEY UPDATE');
      requireHold(row, fence, actor, 'release');
      const released = await tx.one<{ state: AskState }>(
        `UPDATE asks SET state = CASE WHEN attempts >= max_attempts THEN 'expired' ELSE 'open' END, holder = NULL, lease_until = NULL, updated_at = $1
         WHERE id = $2 AND state = 'claimed' AND fence = $3 RETURNING state`,
        [tx.now, row.id, fence],
      );
      if (!released) throw changedWhile(row.id, 'releasing');
      await this.event(tx, row.id, tx.now, actor, 'released', fence, {});
      if (released.state === 'expired') await this.event(tx, row.id, tx.now, actor, 'expired', fence, releaseExpiry(row));
      return this.toAsk(tx, await this.row(tx, row.id));
    });
  }

  /**
   * The guarded UPDATE first, as one statement: held by the caller with this fence, and a kind of
   * contributor scope that allows this answer. Only when it matches nothing is the ask read, under
   * its row lock, to refuse in words or to check the scope of a maintainer or coordinator kind.
   */
  async answer(input: AnswerInput, actor: string): Promise<Ask> {
    const answer = answerInput.parse(input);
    const note = answer.note ?? null;
    const detail = JSON.stringify({ answer: answer.answer, note });
    const params = (now: number | null, kinds: string[]) => [now, answer.ask_id, answer.fence, actor, answer.answer, note, kinds, detail];
    const answered =
      (await this.db.one<ClaimedRow>(ANSWER_SQL, params(this.db.clockParam(), this.openKindsByAnswer.get(answer.answer) ?? []))) ??
      (await this.db.transaction(async (tx) => {
        const row = await this.rowInLane(tx, answer.ask_id, 'FOR NO KEY UPDATE OF a');
        requireHold(row, answer.fence, actor, 'answer');
        const kind = this.kinds.require(row.kind);
        if (!kind.answers.includes(answer.answer)) throw answerKindRefusal(kind.name, kind.answers, answer.answer);
        // Checked again at answer time: a role revoked while the ask was held no longer answers it.
        await this.roles.requireScope(tx, row.repo, row.lane_id, actor, kind.scope, `answering ${row.id} (${kind.name})`);
        const taken = await tx.one<ClaimedRow>(ANSWER_SQL, params(tx.now, [kind.name]));
        if (!taken) throw changedWhile(row.id, 'answering');
        return taken;
      }));
    return toAsk(answered, await this.dependencies(this.db, answered));
  }

  async cancel(askId: string, actor: string, reason = ''): Promise<Ask> {
    return this.db.transaction(async (tx) => {
      const row = await this.rowInLane(tx, askId, 'FOR NO KEY UPDATE OF a');
      if (row.posted_by !== actor) await this.roles.requireScope(tx, row.repo, row.lane_id, actor, 'coordinator', `cancelling ${row.id} (posted by ${row.posted_by})`);
      const changed = await tx.run(`UPDATE asks SET state = 'cancelled', lease_until = NULL, updated_at = $1 WHERE id = $2 AND state IN ('open', 'claimed')`, [tx.now, row.id]);
      if (changed !== 1) throw cancelRefusal(row);
      await this.event(tx, row.id, tx.now, actor, 'cancelled', null, { reason, holder: row.state === 'claimed' ? row.holder : null });
      return this.toAsk(tx, await this.row(tx, row.id));
    });
  }

  /**
   * Why the claim matched nothing, with the ask locked. An ask whose lease lapsed with no attempts
   * left is expired here and the refusal returned rather than thrown, so that the expiry commits.
   */
  private async refuseClaim(tx: PgQueries & { now: number }, row: AskRow, actor: string): Promise<ToolError> {
    const early = claimRefusal(row, actor, tx.now);
    if (early) return early;
    const { refusal, expire } = claimRefusalAfterDependencies(row, await tx.rows<DependencyRow>(DEPENDENCIES_SQL, [row.id]));
    if (expire) {
      await tx.run(`UPDATE asks SET state = 'expired', holder = NULL, lease_until = NULL, updated_at = $1 WHERE id = $2`, [tx.now, row.id]);
      await this.event(tx, row.id, tx.now, actor, 'expired', row.fence, expire);
    }
    return refusal;
  }

  private async toClaim(claimed: ClaimReturning): Promise<Claim> {
    const before = { state: claimed.before_state, holder: claimed.before_holder, fence: claimed.before_fence };
    return toClaim(claimed, claimEvent(before, claimed, claimed.updated_at).renewed, await this.dependencies(this.db, claimed));
  }

  private async event(q: PgQueries, askId: string, at: number, actor: string, type: string, fence: number | null, detail: Record<string, unknown>): Promise<void> {
    await q.run('INSERT INTO ask_events (ask_id, at, actor, type, fence, detail) VALUES ($1, $2, $3, $4, $5, $6)', [askId, at, actor, type, fence, JSON.stringify(detail)]);
  }

  private async row(q: PgQueries, askId: string, lock = ''): Promise<AskRow> {
    const row = isAskId(askId) ? await q.one<AskRow>(`SELECT ${ASK_COLUMNS} FROM asks a WHERE a.id = $1 ${lock}`, [askId]) : undefined;
    if (!row) throw askNotFound(askId);
    return row;
  }

  private async rowInLane(q: PgQueries, askId: string, lock = ''): Promise<AskInLaneRow> {
    const row = isAskId(askId)
      ? await q.one<AskInLaneRow>(`SELECT ${ASK_COLUMNS}, l.repo, l.state AS lane_state, l.coordinator FROM asks a JOIN lanes l ON l.id = a.lane_id WHERE a.id = $1 ${lock}`, [askId])
      : undefined;
    if (!row) throw askNotFound(askId);
    return row;
  }

  /** The ask's dependencies, unread when a RETURNING row says it has none. */
  private async dependencies(q: PgQueries, row: AskRow & { has_dependencies?: number | boolean }): Promise<DependencyRow[]> {
    return row.has_dependencies === undefined || row.has_dependencies ? q.rows<DependencyRow>(DEPENDENCIES_SQL, [row.id]) : [];
  }

  private async toAsk(q: PgQueries, row: AskRow): Promise<Ask> {
    return toAsk(row, await this.dependencies(q, row));
  }

  /** Many asks with their dependencies in one query. */
  private async toAsks(rows: AskRow[]): Promise<Ask[]> {
    if (rows.length === 0) return [];
    const dependencies = await this.db.rows<DependencyRow & { ask_id: string }>(
      'SELECT d.ask_id, dep.id, dep.state, dep.answer FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on WHERE d.ask_id = ANY($1::text[]) ORDER BY dep.seq',
      [rows.map((row) => row.id)],
    );
    return rows.map((row) => toAsk(row, dependencies.filter((dependency) => dependency.ask_id === row.id)));
  }
}
