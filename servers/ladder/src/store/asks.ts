import { ToolError } from '@bulkhead/core';
import type { Answer, AskKinds, Scope } from './ask-kinds.js';
import { RESOLVING_ANSWERS } from './ask-kinds.js';
import type { Clock, Db } from './database.js';
import { isoTime, isoTimeOrNull, newId, toHistoryEvent, type EventRow } from './records.js';
import type { SqliteLanes } from './lanes.js';
import type { SqliteRoles } from './roles.js';
import type { AnswerInput, Ask, AskState, AskWithHistory, Claim, ClaimableAsk, ClaimOptions, PostAskInput, PostedAsk } from './work-queue.js';
import { answerInput, claimOptions, idSchemas, postAskInput } from './work-queue.js';

interface AskRow {
  id: string;
  lane_id: string;
  kind: string;
  title: string;
  body: string;
  payload: string;
  priority: number;
  posted_by: string;
  assignee: string | null;
  idempotency_key: string | null;
  state: AskState;
  holder: string | null;
  lease_until: number | null;
  fence: number;
  attempts: number;
  max_attempts: number;
  answer: Answer | null;
  answer_note: string | null;
  answered_by: string | null;
  created_at: number;
  updated_at: number;
}

/** An ask with the lane fields every check needs, read in one statement. */
interface AskInLaneRow extends AskRow {
  repo: string;
  lane_state: string;
  coordinator: string;
}

interface DependencyRow {
  id: string;
  state: AskState;
  answer: Answer | null;
}

/** A claim's RETURNING row: the ask after the claim, and whether it has dependencies to read. */
interface ClaimedRow extends AskRow {
  has_dependencies: number;
}

export interface AskSettings {
  leaseMs: number;
  maxAttempts: number;
}

/** Lanes whose asks can be claimed; a paused lane keeps its queue but hands nothing out. */
const WORKING_LANE_STATES = new Set(['proposed', 'active']);

/**
 * The conditions under which ask `a` can be taken by a new claim, shared by the claim statements
 * and the query so they can never disagree: open (or claimed with a lapsed lease) with attempts
 * left, assigned to nobody or to the caller, and every dependency answered complete or grant.
 */
const NEWLY_CLAIMABLE = `
  ((a.state = 'open' OR (a.state = 'claimed' AND a.lease_until < @now)) AND a.attempts < a.max_attempts)
  AND (a.assignee IS NULL OR a.assignee = @actor)
  AND NOT EXISTS (
    SELECT 1 FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on
    WHERE d.ask_id = a.id AND NOT (dep.state = 'answered' AND dep.answer IN ('complete', 'grant')))`;

/** The caller already holds a live lease: claiming again extends it. */
const RENEWAL = `(a.state = 'claimed' AND a.holder = @actor AND a.lease_until >= @now)`;

/**
 * The Ask queue. Every write is one short BEGIN IMMEDIATE transaction whose decisive step is one
 * guarded UPDATE … RETURNING: two processes can never both take an ask, because the second one's
 * guard no longer matches when it gets the write lock.
 */
export class SqliteAsks {
  private readonly statements;
  /** Each transaction wrapper is created once; `.immediate(...)` runs it under BEGIN IMMEDIATE. */
  private readonly tx;
  /** Kinds of contributor scope (everyone holds it) allowing each answer: answered without a roles query. */
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
    this.openKindsByAnswer = new Map();
    for (const answer of ['complete', 'deny', 'grant'] as const) {
      const names = kinds.names().filter((name) => {
        const kind = kinds.require(name);
        return kind.scope === 'contributor' && kind.answers.includes(answer);
      });
      this.openKindsByAnswer.set(answer, JSON.stringify(names));
    }
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
    {
      const kind = { name: kindName };
      const lane = this.lanes.row(ask.lane_id);
      if (ask.idempotency_key !== undefined) {
        const earlier = this.statements.selectByKey.get(lane.id, actor, ask.idempotency_key);
        if (earlier) return { ask: this.toAsk(earlier), replayed: true };
      }
      if (lane.state === 'done' || lane.state === 'abandoned') throw new ToolError(`${lane.id} is ${lane.state}; post the ask in a working lane or propose a new one`, 'conflict');
      const dependsOn = [...new Set(ask.depends_on)];
      for (const dependency of dependsOn) this.requireDependency(dependency, lane.repo);
      // A fresh id has no dependents yet, so these edges cannot close a cycle; addDependencies is
      // the one path that links existing asks and checks for cycles.
      const id = newId('ask');
      const now = this.clock();
      this.statements.insert.run({
        id,
        lane_id: lane.id,
        kind: kind.name,
        title: ask.title,
        body: ask.body,
        payload: JSON.stringify(ask.payload),
        priority: ask.priority,
        posted_by: actor,
        assignee: ask.assignee ?? null,
        idempotency_key: ask.idempotency_key ?? null,
        max_attempts: ask.max_attempts ?? this.settings.maxAttempts,
        now,
      });
      for (const dependency of dependsOn) this.statements.insertDependency.run(id, dependency);
      this.event(id, now, actor, 'posted', null, { kind: kind.name, priority: ask.priority, depends_on: dependsOn });
      return { ask: this.toAsk(this.row(id)), replayed: false };
    }
  }

  addDependencies(askId: string, dependsOn: string[], actor: string): Ask {
    const added = [...new Set(dependsOn.map((id) => idSchemas.askId.parse(id)))];
    return this.tx.addDependencies.immediate(askId, added, actor);
  }

  private addDependenciesLocked(askId: string, added: string[], actor: string): Ask {
    {
      const row = this.rowInLane(askId);
      if (row.posted_by !== actor) this.roles.requireScope(row.repo, row.lane_id, actor, 'coordinator', `adding dependencies to ${row.id} (posted by ${row.posted_by})`);
      if (row.state !== 'open') throw new ToolError(`${row.id} is ${row.state}; dependencies can only be added to an open ask`, 'conflict');
      for (const dependency of added) {
        this.requireDependency(dependency, row.repo);
        const cycle = this.pathBetween(dependency, row.id);
        if (cycle) throw new ToolError(`${row.id} cannot depend on ${dependency}: that would close a cycle (${[row.id, ...cycle].join(' → ')})`, 'cycle');
        this.statements.insertDependency.run(row.id, dependency);
      }
      this.event(row.id, this.clock(), actor, 'dependencies_added', null, { depends_on: added });
      return this.toAsk(this.row(row.id));
    }
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
    this.requireWorkingLane(lane.id, lane.state, lane.coordinator);
    const scopes = this.roles.scopes(lane.repo, lane.id, actor);
    const kinds = this.kindsFor(scopes, options.kind);
    const now = this.clock();
    const rows = this.statements.claimable.all({ lane_id: lane.id, kinds: JSON.stringify(kinds), actor, now, limit: options.limit ?? 20 });
    return rows.map((row) => {
      const ask = this.toAsk(row);
      const scope = this.kinds.require(row.kind).scope;
      const taken = row.state === 'claimed' ? `the lease of ${row.holder} (fence ${row.fence}) lapsed at ${isoTime(row.lease_until ?? 0)}` : 'open';
      const dependencies = ask.depends_on.length > 0 ? `its dependencies ${ask.depends_on.join(', ')} are answered` : 'it has no dependencies';
      return { ask, why: `${taken}; ${dependencies}; ${row.kind} needs ${scope} scope, which you hold` };
    });
  }

  claim(askId: string, actor: string, options: ClaimOptions = {}): Claim {
    const { lease_seconds } = claimOptions.parse(options);
    const outcome = this.tx.claim.immediate(askId, actor, lease_seconds);
    if (outcome instanceof ToolError) throw outcome;
    return this.toClaim(outcome.claimed, outcome.renewed, outcome.claimed.has_dependencies !== 0);
  }

  private claimLocked(askId: string, actor: string, leaseSeconds: number | undefined): { claimed: ClaimedRow; renewed: boolean } | ToolError {
    const before = this.rowInLane(askId);
    this.requireWorkingLane(before.lane_id, before.lane_state, before.coordinator);
    const scope = this.kinds.require(before.kind).scope;
    if (scope !== 'contributor') this.roles.requireScope(before.repo, before.lane_id, actor, scope, `claiming ${before.id} (${before.kind})`);
    const now = this.clock();
    const leaseUntil = now + this.leaseMs(leaseSeconds);
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
    this.requireWorkingLane(lane.id, lane.state, lane.coordinator);
    const wanted = kind === undefined ? undefined : this.kinds.require(kind);
    const kinds = wanted?.scope === 'contributor' ? [wanted.name] : this.kindsFor(this.roles.scopes(lane.repo, lane.id, actor), kind);
    const claimed = this.tx.claimNext.immediate(lane.id, JSON.stringify(kinds), actor, lease_seconds);
    if (!claimed) return undefined;
    return this.toClaim(claimed, false, claimed.has_dependencies !== 0);
  }

  /** Picks and claims in one guarded UPDATE: two processes can never both take the same ask. */
  private claimNextLocked(laneId: string, kinds: string, actor: string, leaseSeconds: number | undefined): ClaimedRow | undefined {
    const now = this.clock();
    const leaseUntil = now + this.leaseMs(leaseSeconds);
    const claimed = this.statements.claimNext.get({ lane_id: laneId, kinds, actor, now, lease_until: leaseUntil });
    if (!claimed) {
      // Nothing claimable, or the lane stopped working since it was read: say which.
      const lane = this.lanes.row(laneId);
      this.requireWorkingLane(lane.id, lane.state, lane.coordinator);
      return undefined;
    }
    // A first claim (fence 1) took an ask nobody held; otherwise the last fenced event says whether
    // the ask was open (released) or held under a lapsed lease, and by whom.
    const previous = claimed.fence > 1 ? this.statements.lastFencedEvent.get(claimed.id) : undefined;
    const held = previous !== undefined && (previous.type === 'claimed' || previous.type === 'renewed');
    const before = held ? { state: 'claimed' as const, holder: previous.actor, fence: previous.fence } : { state: 'open' as const, holder: null, fence: claimed.fence - 1 };
    this.recordClaim(before, claimed, actor, now);
    return claimed;
  }

  release(askId: string, fence: number, actor: string): Ask {
    return this.tx.release.immediate(askId, fence, actor);
  }

  private releaseLocked(askId: string, fence: number, actor: string): Ask {
    {
      const row = this.row(askId);
      this.requireHold(row, fence, actor, 'release');
      const now = this.clock();
      const released = this.statements.release.get(now, row.id, fence);
      if (!released) throw new ToolError(`${row.id} changed while releasing; read it again`, 'conflict');
      this.event(row.id, now, actor, 'released', fence, {});
      if (released.state === 'expired') this.event(row.id, now, actor, 'expired', fence, { reason: `${row.attempts} of ${row.max_attempts} attempts used` });
      return this.toAsk(this.row(row.id));
    }
  }

  answer(input: AnswerInput, actor: string): Ask {
    const answer = answerInput.parse(input);
    const answered = this.tx.answer.immediate(answer, actor);
    return this.toAsk(answered, answered.has_dependencies !== 0);
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
      this.requireHold(row, answer.fence, actor, 'answer');
      const kind = this.kinds.require(row.kind);
      if (!kind.answers.includes(answer.answer)) {
        throw new ToolError(`a ${kind.name} ask is answered with ${kind.answers.join(' or ')}, not ${answer.answer}`, 'invalid');
      }
      // Checked again at answer time: a role revoked while the ask was held no longer answers it.
      this.roles.requireScope(row.repo, row.lane_id, actor, kind.scope, `answering ${row.id} (${kind.name})`);
      answered = this.statements.answer.get({ id: row.id, fence: answer.fence, actor, answer: answer.answer, note, now, kinds: JSON.stringify([kind.name]) });
      if (!answered) throw new ToolError(`${row.id} changed while answering; read it again`, 'conflict');
    }
    this.event(answered.id, now, actor, 'answered', answer.fence, { answer: answer.answer, note });
    return answered;
  }

  cancel(askId: string, actor: string, reason = ''): Ask {
    return this.tx.cancel.immediate(askId, actor, reason);
  }

  private cancelLocked(askId: string, actor: string, reason: string): Ask {
    {
      const row = this.rowInLane(askId);
      if (row.posted_by !== actor) this.roles.requireScope(row.repo, row.lane_id, actor, 'coordinator', `cancelling ${row.id} (posted by ${row.posted_by})`);
      const now = this.clock();
      if (this.statements.cancel.run(now, row.id).changes !== 1) throw new ToolError(`${row.id} is ${row.state}; only open or claimed asks can be cancelled`, 'conflict');
      this.event(row.id, now, actor, 'cancelled', null, { reason, holder: row.state === 'claimed' ? row.holder : null });
      return this.toAsk(this.row(row.id));
    }
  }

  /** Writes the claim's event; true when it renewed the caller's live lease. */
  private recordClaim(before: Pick<AskRow, 'state' | 'holder' | 'fence'>, claimed: AskRow, actor: string, now: number): boolean {
    const renewed = claimed.fence === before.fence && before.state === 'claimed';
    const detail: Record<string, unknown> = { lease_until: isoTime(claimed.lease_until ?? now) };
    if (!renewed && before.state === 'claimed') Object.assign(detail, { superseded_fence: before.fence, previous_holder: before.holder });
    this.event(claimed.id, now, actor, renewed ? 'renewed' : 'claimed', claimed.fence, detail);
    return renewed;
  }

  /** The reply to a claim, built after COMMIT from the claim's RETURNING row. */
  private toClaim(claimed: AskRow, renewed: boolean, hasDependencies: boolean): Claim {
    return { ask: this.toAsk(claimed, hasDependencies), fence: claimed.fence, lease_until: isoTime(claimed.lease_until ?? claimed.updated_at), renewed };
  }

  /**
   * Why the claim statement matched nothing, in words the agent can act on. An ask whose lease
   * lapsed with no attempts left is expired here, inside the claim's transaction, and the refusal
   * is returned rather than thrown so that the expiry commits.
   */
  private refuseClaim(row: AskRow, actor: string, now: number): ToolError {
    if (row.state === 'answered') return new ToolError(`${row.id} was already answered ${row.answer} by ${row.answered_by}; nothing to claim`, 'conflict');
    if (row.state === 'cancelled' || row.state === 'expired') return new ToolError(`${row.id} is ${row.state}; nothing to claim`, 'conflict');
    if (row.assignee !== null && row.assignee !== actor) return new ToolError(`${row.id} is assigned to ${row.assignee}; only they may claim it`, 'forbidden');
    if (row.state === 'claimed' && (row.lease_until ?? 0) >= now) {
      return new ToolError(`${row.id} is claimed by ${row.holder} until ${isoTime(row.lease_until ?? 0)} (fence ${row.fence}); pick another ask from ask_query_claimable`, 'claimed');
    }
    const { waiting, blocked } = splitDependencies(this.statements.dependencies.all(row.id));
    if (blocked.length > 0) {
      return new ToolError(`${row.id} is blocked by ${blocked.map(describeDependency).join(', ')}; it will not become claimable by itself — cancel it or repost it without that dependency`, 'blocked');
    }
    if (waiting.length > 0) return new ToolError(`${row.id} is waiting on ${waiting.map(describeDependency).join(', ')}; claim it once those are answered complete or grant`, 'waiting');
    if (row.attempts >= row.max_attempts) {
      this.statements.expire.run(now, row.id);
      this.event(row.id, now, actor, 'expired', row.fence, { reason: `the lease of ${row.holder} lapsed and all ${row.max_attempts} attempts are used` });
      return new ToolError(`${row.id} expired: all ${row.max_attempts} attempts were used without an answer`, 'expired');
    }
    return new ToolError(`${row.id} could not be claimed; read it with ask_query_claimable and try again`, 'conflict');
  }

  /** Refuses a release or answer from anyone but the current holder with the current fence. */
  private requireHold(row: AskRow, fence: number, actor: string, doing: 'release' | 'answer'): void {
    const yours = `your claim (fence ${fence})`;
    switch (row.state) {
      case 'answered':
        throw new ToolError(`${row.id} was already answered ${row.answer} by ${row.answered_by}; nothing to ${doing}`, 'conflict');
      case 'cancelled':
      case 'expired':
        throw new ToolError(`${row.id} is ${row.state}; nothing to ${doing}`, 'conflict');
      case 'open':
        throw new ToolError(`${row.id} is open again: ${yours} ended (released or lapsed and taken back); claim it again before you ${doing}`, 'stale_fence');
      case 'claimed':
        if (fence < row.fence) {
          throw new ToolError(`${row.id} is claimed by ${row.holder} until ${isoTime(row.lease_until ?? 0)}; ${yours} was superseded by fence ${row.fence}`, 'stale_fence');
        }
        if (fence > row.fence) throw new ToolError(`${row.id} has no claim with fence ${fence}; its current fence is ${row.fence}`, 'stale_fence');
        // The holder may still answer after the lease lapsed, as long as nobody claimed it since:
        // the fence, not the clock, decides whose work counts.
        if (row.holder !== actor) throw new ToolError(`${row.id} is held by ${row.holder} (fence ${row.fence}), not ${actor}`, 'forbidden');
    }
  }

  private leaseMs(leaseSeconds: number | undefined): number {
    return leaseSeconds === undefined ? this.settings.leaseMs : leaseSeconds * 1000;
  }

  private requireWorkingLane(laneId: string, state: string, coordinator: string): void {
    if (!WORKING_LANE_STATES.has(state)) {
      const next = state === 'paused' ? `ask its coordinator ${coordinator} to resume it` : 'nothing more is handed out';
      throw new ToolError(`${laneId} is ${state}; ${next}`, 'conflict');
    }
  }

  private kindsFor(scopes: ReadonlySet<Scope>, kind: string | undefined): string[] {
    if (kind === undefined) return this.kinds.namesInScopes(scopes);
    const wanted = this.kinds.require(kind);
    if (!scopes.has(wanted.scope)) throw new ToolError(`${kind} asks need ${wanted.scope} scope, which you do not hold on this lane`, 'forbidden');
    return [wanted.name];
  }

  private requireDependency(dependency: string, repo: string): void {
    const found = this.statements.laneRepoOfAsk.get(dependency);
    if (!found) throw new ToolError(`no ask ${dependency}; depends_on must name asks already posted`, 'not_found');
    if (found.repo !== repo) throw new ToolError(`${dependency} is in ${found.repo}, not ${repo}; dependencies stay within one repo`, 'invalid');
  }

  /** A dependency path from `from` to `to` (excluding `from`), or undefined: breadth first, so the shortest. */
  private pathBetween(from: string, to: string): string[] | undefined {
    const cameFrom = new Map<string, string | null>([[from, null]]);
    const queue = [from];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      if (next === to) {
        const path: string[] = [];
        for (let step: string | null | undefined = next; step; step = cameFrom.get(step)) path.unshift(step);
        return path;
      }
      for (const dependency of this.statements.dependsOn.all(next)) {
        if (cameFrom.has(dependency)) continue;
        cameFrom.set(dependency, next);
        queue.push(dependency);
      }
    }
    return undefined;
  }

  private event(askId: string, at: number, actor: string, type: string, fence: number | null, detail: Record<string, unknown>): void {
    this.statements.insertEvent.run(askId, at, actor, type, fence, JSON.stringify(detail));
  }

  private row(askId: string): AskRow {
    const parsed = idSchemas.askId.safeParse(askId);
    const row = parsed.success ? this.statements.select.get(askId) : undefined;
    if (!row) throw new ToolError(`no ask ${askId}; ask_query_claimable lists a lane's asks`, 'not_found');
    return row;
  }

  private rowInLane(askId: string): AskInLaneRow {
    const parsed = idSchemas.askId.safeParse(askId);
    const row = parsed.success ? this.statements.selectInLane.get(askId) : undefined;
    if (!row) throw new ToolError(`no ask ${askId}; ask_query_claimable lists a lane's asks`, 'not_found');
    return row;
  }

  private toAsk(row: AskRow, hasDependencies = true): Ask {
    const dependencies = hasDependencies ? this.statements.dependencies.all(row.id) : [];
    const { waiting, blocked } = splitDependencies(dependencies);
    return {
      id: row.id,
      lane_id: row.lane_id,
      kind: row.kind,
      title: row.title,
      body: row.body,
      payload: JSON.parse(row.payload) as unknown,
      priority: row.priority,
      posted_by: row.posted_by,
      assignee: row.assignee,
      idempotency_key: row.idempotency_key,
      state: row.state,
      holder: row.state === 'claimed' ? row.holder : null,
      lease_until: isoTimeOrNull(row.lease_until),
      fence: row.fence,
      attempts: row.attempts,
      max_attempts: row.max_attempts,
      answer: row.answer,
      answer_note: row.answer_note,
      answered_by: row.answered_by,
      depends_on: dependencies.map((dependency) => dependency.id),
      waiting_on: waiting.map((dependency) => dependency.id),
      blocked_by: blocked.map((dependency) => dependency.id),
      created_at: isoTime(row.created_at),
      updated_at: isoTime(row.updated_at),
    };
  }
}

/** Unresolved dependencies (may still resolve) and failed ones (denied, cancelled, expired: never will). */
function splitDependencies(dependencies: DependencyRow[]): { waiting: DependencyRow[]; blocked: DependencyRow[] } {
  const waiting: DependencyRow[] = [];
  const blocked: DependencyRow[] = [];
  for (const dependency of dependencies) {
    if (dependency.state === 'answered' && dependency.answer !== null && RESOLVING_ANSWERS.includes(dependency.answer)) continue;
    if (dependency.state === 'open' || dependency.state === 'claimed') waiting.push(dependency);
    else blocked.push(dependency);
  }
  return { waiting, blocked };
}

function describeDependency(dependency: DependencyRow): string {
  if (dependency.state === 'answered') return `${dependency.id} (denied)`;
  return `${dependency.id} (${dependency.state})`;
}
