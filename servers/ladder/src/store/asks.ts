import { ToolError } from '@bulkhead/core';
import type { Answer, AskKinds } from './ask-kinds.js';
import {
  answerKindRefusal,
  askNotFound,
  beforeClaimNext,
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
  type AskInLaneRow,
  type AskRow,
  type AskSettings,
  type BeforeClaim,
  type ClaimedRow,
  type DependencyRow,
} from './ask-rules.js';
import type { Clock, Db } from './database.js';
import { newId, toHistoryEvent, type EventRow } from './records.js';
import type { SqliteLanes } from './lanes.js';
import type { SqliteRoles } from './roles.js';
import type { AnswerInput, Ask, AskState, AskWithHistory, Claim, ClaimableAsk, ClaimOptions, PostAskInput, PostedAsk } from './work-queue.js';
import { answerInput, claimOptions, idSchemas, postAskInput } from './work-queue.js';

export type { AskSettings } from './ask-rules.js';

const SQLITE_PARAMS = { now: '@now', actor: '@actor' };
const NEWLY_CLAIMABLE = newlyClaimableSql(SQLITE_PARAMS);
const RENEWAL = renewalSql(SQLITE_PARAMS);

/**
 * The Ask queue. Every write is one short BEGIN IMMEDIATE transaction whose decisive step is one
 * guarded UPDATE … RETURNING: two processes can never both take an ask, because the second one's
 * guard no longer matches when it gets the write lock.
 */
export class SqliteAsks {
  private readonly statements;
  /** Each transaction wrapper is created once; `.immediate(...)` runs it under BEGIN IMMEDIATE. */
  private readonly tx;
  /** Kinds of contributor scope (everyone holds it) allowing each answer, as JSON: answered without a roles query. */
  private readonly openKindsByAnswer: Map<Answer, string>;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly lanes: SqliteLanes,
    private readonly roles: SqliteRoles,
    private readonly kinds: AskKinds,
    private readonly settings: AskSettings,
  ) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO asks (id, lane_id, kind, title, body, payload, priority, posted_by, assignee, idempotency_key, state, max_attempts, created_at, updated_at)
         VALUES (@id, @lane_id, @kind, @title, @body, @payload, @priority, @posted_by, @assignee, @idempotency_key, 'open', @max_attempts, @now, @now)`,
      ),
      insertDependency: db.prepare('INSERT OR IGNORE INTO ask_dependencies (ask_id, depends_on) VALUES (?, ?)'),
      insertEvent: db.prepare('INSERT INTO ask_events (ask_id, at, actor, type, fence, detail) VALUES (?, ?, ?, ?, ?, ?)'),
      select: db.prepare<[string], AskRow>('SELECT * FROM asks WHERE id = ?'),
      selectInLane: db.prepare<[string], AskInLaneRow>(
        'SELECT a.*, l.repo, l.state AS lane_state, l.coordinator FROM asks a JOIN lanes l ON l.id = a.lane_id WHERE a.id = ?',
      ),
      selectByKey: db.prepare<[string, string, string], AskRow>('SELECT * FROM asks WHERE lane_id = ? AND posted_by = ? AND idempotency_key = ?'),
      selectByLane: db.prepare<{ lane_id: string; state: string | null; limit: number }, AskRow>(
        'SELECT * FROM asks WHERE lane_id = @lane_id AND (@state IS NULL OR state = @state) ORDER BY priority, created_at, rowid LIMIT @limit',
      ),
      dependencies: db.prepare<[string], DependencyRow>(
        'SELECT dep.id, dep.state, dep.answer FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on WHERE d.ask_id = ? ORDER BY dep.rowid',
      ),
      dependsOn: db.prepare<[string], string>('SELECT depends_on FROM ask_dependencies WHERE ask_id = ?').pluck(),
      laneRepoOfAsk: db.prepare<[string], { repo: string }>('SELECT l.repo FROM asks a JOIN lanes l ON l.id = a.lane_id WHERE a.id = ?'),
      events: db.prepare<[string], EventRow & { fence: number | null }>('SELECT seq, at, actor, type, fence, detail FROM ask_events WHERE ask_id = ? ORDER BY seq'),
      claim: db.prepare<{ id: string; actor: string; now: number; lease_until: number }, AskRow>(
        `UPDATE asks AS a SET
           fence = CASE WHEN ${RENEWAL} THEN a.fence ELSE a.fence + 1 END,
           attempts = CASE WHEN ${RENEWAL} THEN a.attempts ELSE a.attempts + 1 END,
           state = 'claimed', holder = @actor, lease_until = @lease_until, updated_at = @now
         WHERE a.id = @id AND (${RENEWAL} OR (${NEWLY_CLAIMABLE}))
         RETURNING *`,
      ),
      claimNext: db.prepare<{ lane_id: string; kinds: string; actor: string; now: number; lease_until: number }, ClaimedRow>(
        `UPDATE asks AS a SET fence = a.fence + 1, attempts = a.attempts + 1, state = 'claimed', holder = @actor, lease_until = @lease_until, updated_at = @now
         WHERE a.id = (
           SELECT a.id FROM asks a
           WHERE a.lane_id = @lane_id AND a.state IN ('open', 'claimed') AND a.kind IN (SELECT value FROM json_each(@kinds)) AND ${NEWLY_CLAIMABLE}
           ORDER BY a.priority, a.created_at, a.rowid LIMIT 1)
         AND EXISTS (SELECT 1 FROM lanes l WHERE l.id = @lane_id AND l.state IN ('proposed', 'active'))
         RETURNING *, EXISTS (SELECT 1 FROM ask_dependencies d WHERE d.ask_id = id) AS has_dependencies`,
      ),
      lastFencedEvent: db.prepare<[string], { type: string; actor: string; fence: number }>(
        'SELECT type, actor, fence FROM ask_events WHERE ask_id = ? AND fence IS NOT NULL ORDER BY seq DESC LIMIT 1',
      ),
      claimable: db.prepare<{ lane_id: string; kinds: string; actor: string; now: number; limit: number }, AskRow>(
        `SELECT a.* FROM asks a
         WHERE a.lane_id = @lane_id AND a.state IN ('open', 'claimed') AND a.kind IN (SELECT value FROM json_each(@kinds)) AND ${NEWLY_CLAIMABLE}
         ORDER BY a.priority, a.created_at, a.rowid LIMIT @limit`,
      ),
      release: db.prepare<[number, string, number], Pick<AskRow, 'state'>>(
        `UPDATE asks SET state = CASE WHEN attempts >= max_attempts THEN 'expired' ELSE 'open' END, holder = NULL, lease_until = NULL, updated_at = ?
         WHERE id = ? AND state = 'claimed' AND fence = ? RETURNING state`,
      ),
      answer: db.prepare<{ id: string; fence: number; actor: string; answer: Answer; note: string | null; now: number; kinds: string }, ClaimedRow>(
        `UPDATE asks AS a SET state = 'answered', answer = @answer, answer_note = @note, answered_by = @actor, lease_until = NULL, updated_at = @now
         WHERE a.id = @id AND a.state = 'claimed' AND a.fence = @fence AND a.holder = @actor AND a.kind IN (SELECT value FROM json_each(@kinds))
         RETURNING *, EXISTS (SELECT 1 FROM ask_dependencies d WHERE d.ask_id = id) AS has_dependencies`,
      ),
      expire: db.prepare<[number, string]>(`UPDATE asks SET state = 'expired', holder = NULL, lease_until = NULL, updated_at = ? WHERE id = ?`),
      cancel: db.prepare<[number, string]>(`UPDATE asks SET state = 'cancelled', lease_until = NULL, updated_at = ? WHERE id = ? AND state IN ('open', 'claimed')`),
    };
    this.openKindsByAnswer = new Map([...openKindsByAnswer(kinds)].map(([answer, names]) => [answer, JSON.stringify(names)]));
    this.tx = {
      post: db.transaction((ask: ReturnType<typeof postAskInput.parse>, kindName: string, actor: string) => this.postLocked(ask, kindName, actor)),
      addDependencies: db.transaction((askId: string, added: string[], actor: string) => this.addDependenciesLocked(askId, added, actor)),
      claim: db.transaction((askId: string, actor: string, leaseSeconds: number | undefined) => this.claimLocked(askId, actor, leaseSeconds)),
      claimNext: db.transaction((laneId: string, kinds: string, actor: string, leaseSeconds: number | undefined) => this.claimNextLocked(laneId, kinds, actor, leaseSeconds)),
      release: db.transaction((askId: string, fence: number, actor: string) => this.releaseLocked(askId, fence, actor)),
      answer: db.transaction((answer: ReturnType<typeof answerInput.parse>, actor: string) => this.answerLocked(answer, actor)),
      cancel: db.transaction((askId: string, actor: string, reason: string) => this.cancelLocked(askId, actor, reason)),
    };
  }

  post(input: PostAskInput, actor: string): PostedAsk {
    const ask = postAskInput.parse(input);
    const kind = this.kinds.require(ask.kind);
    return this.tx.post.immediate(ask, kind.name, actor);
  }

  private postLocked(ask: ReturnType<typeof postAskInput.parse>, kindName: string, actor: string): PostedAsk {
    const lane = this.lanes.row(ask.lane_id);
    if (ask.idempotency_key !== undefined) {
      const earlier = this.statements.selectByKey.get(lane.id, actor, ask.idempotency_key);
      if (earlier) return { ask: this.toAsk(earlier), replayed: true };
    }
    requirePostableLane(lane.id, lane.state);
    const dependsOn = [...new Set(ask.depends_on)];
    for (const dependency of dependsOn) requireDependency(dependency, this.statements.laneRepoOfAsk.get(dependency), lane.repo);
    // A fresh id has no dependents yet, so these edges cannot close a cycle; addDependencies is
    // the one path that links existing asks and checks for cycles.
    const id = newId('ask');
    const now = this.clock();
    this.statements.insert.run({ id, lane_id: lane.id, ...newAskValues(ask, kindName, actor, this.settings), now });
    for (const dependency of dependsOn) this.statements.insertDependency.run(id, dependency);
    this.event(id, now, actor, 'posted', null, { kind: kindName, priority: ask.priority, depends_on: dependsOn });
    return { ask: this.toAsk(this.row(id)), replayed: false };
  }

  addDependencies(askId: string, dependsOn: string[], actor: string): Ask {
    const added = [...new Set(dependsOn.map((id) => idSchemas.askId.parse(id)))];
    return this.tx.addDependencies.immediate(askId, added, actor);
  }

  private addDependenciesLocked(askId: string, added: string[], actor: string): Ask {
    const row = this.rowInLane(askId);
    if (row.posted_by !== actor) this.roles.requireScope(row.repo, row.lane_id, actor, 'coordinator', `adding dependencies to ${row.id} (posted by ${row.posted_by})`);
    requireOpenForDependencies(row);
    for (const dependency of added) {
      requireDependency(dependency, this.statements.laneRepoOfAsk.get(dependency), row.repo);
      const cycle = pathBetween(dependency, row.id, (next) => this.statements.dependsOn.all(next));
      if (cycle) throw cycleRefusal(row.id, dependency, cycle);
      this.statements.insertDependency.run(row.id, dependency);
    }
    this.event(row.id, this.clock(), actor, 'dependencies_added', null, { depends_on: added });
    return this.toAsk(this.row(row.id));
  }

  get(askId: string): AskWithHistory {
    const row = this.row(askId);
    const history = this.statements.events.all(row.id).map((event) => ({ ...toHistoryEvent(event), fence: event.fence }));
    return { ...this.toAsk(row), history };
  }

  list(laneId: string, options: { state?: AskState; limit?: number } = {}): Ask[] {
    const lane = this.lanes.row(laneId);
    return this.statements.selectByLane.all({ lane_id: lane.id, state: options.state ?? null, limit: options.limit ?? 100 }).map((row) => this.toAsk(row));
  }

  queryClaimable(laneId: string, actor: string, options: { kind?: string; limit?: number } = {}): ClaimableAsk[] {
    const lane = this.lanes.row(laneId);
    requireWorkingLane(lane.id, lane.state, lane.coordinator);
    const scopes = this.roles.scopes(lane.repo, lane.id, actor);
    const kinds = kindsFor(this.kinds, scopes, options.kind);
    const now = this.clock();
    const rows = this.statements.claimable.all({ lane_id: lane.id, kinds: JSON.stringify(kinds), actor, now, limit: options.limit ?? 20 });
    return rows.map((row) => {
      const ask = this.toAsk(row);
      return { ask, why: claimableWhy(row, ask, this.kinds.require(row.kind).scope) };
    });
  }

  claim(askId: string, actor: string, options: ClaimOptions = {}): Claim {
    const { lease_seconds } = claimOptions.parse(options);
    const outcome = this.tx.claim.immediate(askId, actor, lease_seconds);
    if (outcome instanceof ToolError) throw outcome;
    return toClaim(outcome.claimed, outcome.renewed, this.dependencies(outcome.claimed));
  }

  private claimLocked(askId: string, actor: string, leaseSeconds: number | undefined): { claimed: ClaimedRow; renewed: boolean } | ToolError {
    const before = this.rowInLane(askId);
    requireWorkingLane(before.lane_id, before.lane_state, before.coordinator);
    const scope = this.kinds.require(before.kind).scope;
    if (scope !== 'contributor') this.roles.requireScope(before.repo, before.lane_id, actor, scope, `claiming ${before.id} (${before.kind})`);
    const now = this.clock();
    const leaseUntil = now + leaseMs(this.settings, leaseSeconds);
    const claimed = this.statements.claim.get({ id: before.id, actor, now, lease_until: leaseUntil });
    if (!claimed) return this.refuseClaim(before, actor, now);
    return { claimed: { ...claimed, has_dependencies: 1 }, renewed: this.recordClaim(before, claimed, actor, now) };
  }

  claimNext(laneId: string, actor: string, options: ClaimOptions & { kind?: string } = {}): Claim | undefined {
    const { kind, ...lease } = options;
    const { lease_seconds } = claimOptions.parse(lease);
    // Read before the write lock (WAL readers never wait): the lane, and the caller's scopes unless
    // the wanted kind is of contributor scope, which everyone holds. The claim statement checks the
    // lane's working state again, atomically.
    const lane = this.lanes.row(laneId);
    requireWorkingLane(lane.id, lane.state, lane.coordinator);
    const wanted = kind === undefined ? undefined : this.kinds.require(kind);
    const kinds = wanted?.scope === 'contributor' ? [wanted.name] : kindsFor(this.kinds, this.roles.scopes(lane.repo, lane.id, actor), kind);
    const claimed = this.tx.claimNext.immediate(lane.id, JSON.stringify(kinds), actor, lease_seconds);
    if (!claimed) return undefined;
    return toClaim(claimed, false, this.dependencies(claimed));
  }

  /** Picks and claims in one guarded UPDATE: two processes can never both take the same ask. */
  private claimNextLocked(laneId: string, kinds: string, actor: string, leaseSeconds: number | undefined): ClaimedRow | undefined {
    const now = this.clock();
    const leaseUntil = now + leaseMs(this.settings, leaseSeconds);
    const claimed = this.statements.claimNext.get({ lane_id: laneId, kinds, actor, now, lease_until: leaseUntil });
    if (!claimed) {
      // Nothing claimable, or the lane stopped working since it was read: say which.
      const lane = this.lanes.row(laneId);
      requireWorkingLane(lane.id, lane.state, lane.coordinator);
      return undefined;
    }
    const previous = claimed.fence > 1 ? this.statements.lastFencedEvent.get(claimed.id) : undefined;
    this.recordClaim(beforeClaimNext(claimed, previous), claimed, actor, now);
    return claimed;
  }

  release(askId: string, fence: number, actor: string): Ask {
    return this.tx.release.immediate(askId, fence, actor);
  }

  private releaseLocked(askId: string, fence: number, actor: string): Ask {
    const row = this.row(askId);
    requireHold(row, fence, actor, 'release');
    const now = this.clock();
    const released = this.statements.release.get(now, row.id, fence);
    if (!released) throw changedWhile(row.id, 'releasing');
    this.event(row.id, now, actor, 'released', fence, {});
    if (released.state === 'expired') this.event(row.id, now, actor, 'expired', fence, releaseExpiry(row));
    return this.toAsk(this.row(row.id));
  }

  answer(input: AnswerInput, actor: string): Ask {
    const answer = answerInput.parse(input);
    const answered = this.tx.answer.immediate(answer, actor);
    return toAsk(answered, this.dependencies(answered));
  }

  /**
   * The guarded UPDATE first: held by the caller with this fence, and a kind of contributor scope
   * that allows this answer. Only when it matches nothing is the ask read, to refuse in words or to
   * check the scope of a maintainer or coordinator kind.
   */
  private answerLocked(answer: ReturnType<typeof answerInput.parse>, actor: string): ClaimedRow {
    const now = this.clock();
    const note = answer.note ?? null;
    let answered = this.statements.answer.get({
      id: answer.ask_id,
      fence: answer.fence,
      actor,
      answer: answer.answer,
      note,
      now,
      kinds: this.openKindsByAnswer.get(answer.answer) ?? '[]',
    });
    if (!answered) {
      const row = this.rowInLane(answer.ask_id);
      requireHold(row, answer.fence, actor, 'answer');
      const kind = this.kinds.require(row.kind);
      if (!kind.answers.includes(answer.answer)) throw answerKindRefusal(kind.name, kind.answers, answer.answer);
      // Checked again at answer time: a role revoked while the ask was held no longer answers it.
      this.roles.requireScope(row.repo, row.lane_id, actor, kind.scope, `answering ${row.id} (${kind.name})`);
      answered = this.statements.answer.get({ id: row.id, fence: answer.fence, actor, answer: answer.answer, note, now, kinds: JSON.stringify([kind.name]) });
      if (!answered) throw changedWhile(row.id, 'answering');
    }
    this.event(answered.id, now, actor, 'answered', answer.fence, { answer: answer.answer, note });
    return answered;
  }

  cancel(askId: string, actor: string, reason = ''): Ask {
    return this.tx.cancel.immediate(askId, actor, reason);
  }

  private cancelLocked(askId: string, actor: string, reason: string): Ask {
    const row = this.rowInLane(askId);
    if (row.posted_by !== actor) this.roles.requireScope(row.repo, row.lane_id, actor, 'coordinator', `cancelling ${row.id} (posted by ${row.posted_by})`);
    const now = this.clock();
    if (this.statements.cancel.run(now, row.id).changes !== 1) throw cancelRefusal(row);
    this.event(row.id, now, actor, 'cancelled', null, { reason, holder: row.state === 'claimed' ? row.holder : null });
    return this.toAsk(this.row(row.id));
  }

  /** Writes the claim's event; true when it renewed the caller's live lease. */
  private recordClaim(before: BeforeClaim, claimed: AskRow, actor: string, now: number): boolean {
    const event = claimEvent(before, claimed, now);
    this.event(claimed.id, now, actor, event.type, claimed.fence, event.detail);
    return event.renewed;
  }

  /**
   * Why the claim statement matched nothing. An ask whose lease lapsed with no attempts left is
   * expired here, inside the claim's transaction, and the refusal is returned rather than thrown
   * so that the expiry commits.
   */
  private refuseClaim(row: AskRow, actor: string, now: number): ToolError {
    const early = claimRefusal(row, actor, now);
    if (early) return early;
    const { refusal, expire } = claimRefusalAfterDependencies(row, this.statements.dependencies.all(row.id));
    if (expire) {
      this.statements.expire.run(now, row.id);
      this.event(row.id, now, actor, 'expired', row.fence, expire);
    }
    return refusal;
  }

  private event(askId: string, at: number, actor: string, type: string, fence: number | null, detail: Record<string, unknown>): void {
    this.statements.insertEvent.run(askId, at, actor, type, fence, JSON.stringify(detail));
  }

  private row(askId: string): AskRow {
    const row = isAskId(askId) ? this.statements.select.get(askId) : undefined;
    if (!row) throw askNotFound(askId);
    return row;
  }

  private rowInLane(askId: string): AskInLaneRow {
    const row = isAskId(askId) ? this.statements.selectInLane.get(askId) : undefined;
    if (!row) throw askNotFound(askId);
    return row;
  }

  /** The ask's dependencies, unread when a RETURNING row says it has none. */
  private dependencies(row: AskRow & { has_dependencies?: number | boolean }): DependencyRow[] {
    return row.has_dependencies === undefined || row.has_dependencies ? this.statements.dependencies.all(row.id) : [];
  }

  private toAsk(row: AskRow): Ask {
    return toAsk(row, this.statements.dependencies.all(row.id));
  }
}
