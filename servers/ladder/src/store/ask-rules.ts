import { ToolError } from '@bulkhead/core';
import type { Answer, AskKinds, Scope } from './ask-kinds.js';
import { RESOLVING_ANSWERS } from './ask-kinds.js';
import { isoTime, isoTimeOrNull } from './records.js';
import type { Ask, AskState, WorkQueueOptions } from './work-queue.js';
import { idSchemas } from './work-queue.js';

/**
 * What the SQLite and PostgreSQL ask stores share: row shapes, the claim conditions in SQL, every
 * refusal's wording and the pure decisions behind them. Each backend only runs statements.
 */

export interface AskRow {
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
export interface AskInLaneRow extends AskRow {
  repo: string;
  lane_state: string;
  coordinator: string;
}

export interface DependencyRow {
  id: string;
  state: AskState;
  answer: Answer | null;
}

/** A claim's or answer's RETURNING row: the ask after it, and whether it has dependencies to read (SQLite says 0/1, PostgreSQL true/false). */
export interface ClaimedRow extends AskRow {
  has_dependencies: number | boolean;
}

export interface AskSettings {
  leaseMs: number;
  maxAttempts: number;
}

const DEFAULT_LEASE_MS = 15 * 60_000;
const DEFAULT_MAX_ATTEMPTS = 5;

/** The store options' lease and attempts, with the defaults: 15 minutes, 5 attempts. */
export function askSettings(options: WorkQueueOptions): AskSettings {
  return { leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS, maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS };
}

/** How a backend spells the claim statements' parameters (`@now`, `$3`, …). */
export interface ClaimParams {
  now: string;
  actor: string;
}

/**
 * The conditions under which ask `a` can be taken by a new claim, shared by the claim statements
 * and the query so they can never disagree: open (or claimed with a lapsed lease) with attempts
 * left, assigned to nobody or to the caller, and every dependency answered complete or grant.
 */
export function newlyClaimableSql(p: ClaimParams): string {
  return `
  ((a.state = 'open' OR (a.state = 'claimed' AND a.lease_until < ${p.now})) AND a.attempts < a.max_attempts)
  AND (a.assignee IS NULL OR a.assignee = ${p.actor})
  AND NOT EXISTS (
    SELECT 1 FROM ask_dependencies d JOIN asks dep ON dep.id = d.depends_on
    WHERE d.ask_id = a.id AND NOT (dep.state = 'answered' AND dep.answer IN (${RESOLVING_ANSWERS.map((answer) => `'${answer}'`).join(', ')})))`;
}

/** The caller already holds a live lease: claiming again extends it. */
export function renewalSql(p: ClaimParams): string {
  return `(a.state = 'claimed' AND a.holder = ${p.actor} AND a.lease_until >= ${p.now})`;
}

/** Lanes whose asks can be claimed; a paused lane keeps its queue but hands nothing out. */
export const WORKING_LANE_STATES: readonly string[] = ['proposed', 'active'];

export function requireWorkingLane(laneId: string, state: string, coordinator: string): void {
  if (!WORKING_LANE_STATES.includes(state)) {
    const next = state === 'paused' ? `ask its coordinator ${coordinator} to resume it` : 'nothing more is handed out';
    throw new ToolError(`${laneId} is ${state}; ${next}`, 'conflict');
  }
}

/** Posting needs a lane that is not finished. */
export function requirePostableLane(laneId: string, state: string): void {
  if (state === 'done' || state === 'abandoned') throw new ToolError(`${laneId} is ${state}; post the ask in a working lane or propose a new one`, 'conflict');
}

export function askNotFound(askId: string): ToolError {
  return new ToolError(`no ask ${askId}; ask_query_claimable lists a lane's asks`, 'not_found');
}

/** True when `askId` is shaped like an ask id (anything else is not looked up). */
export function isAskId(askId: string): boolean {
  return idSchemas.askId.safeParse(askId).success;
}

export function changedWhile(askId: string, doing: 'releasing' | 'answering'): ToolError {
  return new ToolError(`${askId} changed while ${doing}; read it again`, 'conflict');
}

/** A dependency's lane repo (undefined: no such ask) checked against the dependent's repo. */
export function requireDependency(dependency: string, found: { repo: string } | undefined, repo: string): void {
  if (!found) throw new ToolError(`no ask ${dependency}; depends_on must name asks already posted`, 'not_found');
  if (found.repo !== repo) throw new ToolError(`${dependency} is in ${found.repo}, not ${repo}; dependencies stay within one repo`, 'invalid');
}

export function cycleRefusal(askId: string, dependency: string, cycle: readonly string[]): ToolError {
  return new ToolError(`${askId} cannot depend on ${dependency}: that would close a cycle (${[askId, ...cycle].join(' → ')})`, 'cycle');
}

export function requireOpenForDependencies(row: AskRow): void {
  if (row.state !== 'open') throw new ToolError(`${row.id} is ${row.state}; dependencies can only be added to an open ask`, 'conflict');
}

export function cancelRefusal(row: AskRow): ToolError {
  return new ToolError(`${row.id} is ${row.state}; only open or claimed asks can be cancelled`, 'conflict');
}

export function answerKindRefusal(kindName: string, allowed: readonly Answer[], answer: Answer): ToolError {
  return new ToolError(`a ${kindName} ask is answered with ${allowed.join(' or ')}, not ${answer}`, 'invalid');
}

/**
 * A dependency path from `from` to `to` (including both), or undefined: breadth first, so the
 * shortest. `dependsOn` gives an ask's direct dependencies (SQLite reads them one statement at a
 * time inside its write lock; PostgreSQL reads the repo's edges once).
 */
export function pathBetween(from: string, to: string, dependsOn: (askId: string) => readonly string[]): string[] | undefined {
  const cameFrom = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next === to) {
      const path: string[] = [];
      for (let step: string | null | undefined = next; step; step = cameFrom.get(step)) path.unshift(step);
      return path;
    }
    for (const dependency of dependsOn(next)) {
      if (cameFrom.has(dependency)) continue;
      cameFrom.set(dependency, next);
      queue.push(dependency);
    }
  }
  return undefined;
}

/** Unresolved dependencies (may still resolve) and failed ones (denied, cancelled, expired: never will). */
export function splitDependencies(dependencies: readonly DependencyRow[]): { waiting: DependencyRow[]; blocked: DependencyRow[] } {
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

/**
 * Why a claim statement matched nothing, decided before the dependencies are read: a refusal, or
 * undefined when the dependencies (and then the attempts) decide; see claimRefusalAfterDependencies.
 */
export function claimRefusal(row: AskRow, actor: string, now: number): ToolError | undefined {
  if (row.state === 'answered') return new ToolError(`${row.id} was already answered ${row.answer} by ${row.answered_by}; nothing to claim`, 'conflict');
  if (row.state === 'cancelled' || row.state === 'expired') return new ToolError(`${row.id} is ${row.state}; nothing to claim`, 'conflict');
  if (row.assignee !== null && row.assignee !== actor) return new ToolError(`${row.id} is assigned to ${row.assignee}; only they may claim it`, 'forbidden');
  if (row.state === 'claimed' && (row.lease_until ?? 0) >= now) {
    return new ToolError(`${row.id} is claimed by ${row.holder} until ${isoTime(row.lease_until ?? 0)} (fence ${row.fence}); pick another ask from ask_query_claimable`, 'claimed');
  }
  return undefined;
}

/**
 * The rest of claimRefusal, with the ask's dependencies. `expire` is the event to write when the
 * ask's lease lapsed with no attempts left: the backend expires it inside the claim's transaction
 * and returns the refusal rather than throwing it, so that the expiry commits.
 */
export function claimRefusalAfterDependencies(row: AskRow, dependencies: readonly DependencyRow[]): { refusal: ToolError; expire?: Record<string, unknown> } {
  const { waiting, blocked } = splitDependencies(dependencies);
  if (blocked.length > 0) {
    return {
      refusal: new ToolError(
        `${row.id} is blocked by ${blocked.map(describeDependency).join(', ')}; it will not become claimable by itself — cancel it or repost it without that dependency`,
        'blocked',
      ),
    };
  }
  if (waiting.length > 0) return { refusal: new ToolError(`${row.id} is waiting on ${waiting.map(describeDependency).join(', ')}; claim it once those are answered complete or grant`, 'waiting') };
  if (row.attempts >= row.max_attempts) {
    return {
      refusal: new ToolError(`${row.id} expired: all ${row.max_attempts} attempts were used without an answer`, 'expired'),
      expire: { reason: `the lease of ${row.holder} lapsed and all ${row.max_attempts} attempts are used` },
    };
  }
  return { refusal: new ToolError(`${row.id} could not be claimed; read it with ask_query_claimable and try again`, 'conflict') };
}

/** Refuses a release or answer from anyone but the current holder with the current fence. */
export function requireHold(row: AskRow, fence: number, actor: string, doing: 'release' | 'answer'): void {
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

/** The expiry event after a release that used the last attempt. */
export function releaseExpiry(row: AskRow): Record<string, unknown> {
  return { reason: `${row.attempts} of ${row.max_attempts} attempts used` };
}

/** The kinds a principal with `scopes` may claim, or only `kind` when they hold its scope. */
export function kindsFor(kinds: AskKinds, scopes: ReadonlySet<Scope>, kind: string | undefined): string[] {
  if (kind === undefined) return kinds.namesInScopes(scopes);
  const wanted = kinds.require(kind);
  if (!scopes.has(wanted.scope)) throw new ToolError(`${kind} asks need ${wanted.scope} scope, which you do not hold on this lane`, 'forbidden');
  return [wanted.name];
}

/** Kinds of contributor scope (everyone holds it) allowing each answer: answered without a roles query. */
export function openKindsByAnswer(kinds: AskKinds): Map<Answer, string[]> {
  const byAnswer = new Map<Answer, string[]>();
  for (const answer of ['complete', 'deny', 'grant'] as const) {
    byAnswer.set(
      answer,
      kinds.names().filter((name) => {
        const kind = kinds.require(name);
        return kind.scope === 'contributor' && kind.answers.includes(answer);
      }),
    );
  }
  return byAnswer;
}

/** What the ask was before a claim, as far as the claim's event needs it. */
export type BeforeClaim = Pick<AskRow, 'state' | 'holder' | 'fence'>;

/**
 * The state before a claimNext, from its RETURNING row and the ask's last fenced event: a first
 * claim (fence 1) took an ask nobody held; otherwise that event says whether the ask was open
 * (released) or held under a lapsed lease, and by whom.
 */
export function beforeClaimNext(claimed: AskRow, lastFenced: { type: string; actor: string; fence: number } | undefined): BeforeClaim {
  const held = lastFenced !== undefined && (lastFenced.type === 'claimed' || lastFenced.type === 'renewed');
  return held ? { state: 'claimed', holder: lastFenced.actor, fence: lastFenced.fence } : { state: 'open', holder: null, fence: claimed.fence - 1 };
}

/** The claim's event: `renewed` when it extended the caller's live lease. */
export function claimEvent(before: BeforeClaim, claimed: AskRow, now: number): { type: 'claimed' | 'renewed'; renewed: boolean; detail: Record<string, unknown> } {
  const renewed = claimed.fence === before.fence && before.state === 'claimed';
  const detail: Record<string, unknown> = { lease_until: isoTime(claimed.lease_until ?? now) };
  if (!renewed && before.state === 'claimed') Object.assign(detail, { superseded_fence: before.fence, previous_holder: before.holder });
  return { type: renewed ? 'renewed' : 'claimed', renewed, detail };
}

/** Why ask_query_claimable offers an ask, in words. */
export function claimableWhy(row: AskRow, ask: Ask, scope: Scope): string {
  const taken = row.state === 'claimed' ? `the lease of ${row.holder} (fence ${row.fence}) lapsed at ${isoTime(row.lease_until ?? 0)}` : 'open';
  const dependencies = ask.depends_on.length > 0 ? `its dependencies ${ask.depends_on.join(', ')} are answered` : 'it has no dependencies';
  return `${taken}; ${dependencies}; ${row.kind} needs ${scope} scope, which you hold`;
}

export function leaseMs(settings: AskSettings, leaseSeconds: number | undefined): number {
  return leaseSeconds === undefined ? settings.leaseMs : leaseSeconds * 1000;
}

export function toAsk(row: AskRow, dependencies: readonly DependencyRow[]): Ask {
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

/** The reply to a claim, from the claim's RETURNING row. */
export function toClaim(claimed: AskRow, renewed: boolean, dependencies: readonly DependencyRow[]): { ask: Ask; fence: number; lease_until: string; renewed: boolean } {
  return { ask: toAsk(claimed, dependencies), fence: claimed.fence, lease_until: isoTime(claimed.lease_until ?? claimed.updated_at), renewed };
}

/** The values of a new ask's row, shared by both backends' INSERT. */
export function newAskValues(
  ask: { lane_id: string; title: string; body: string; payload: unknown; priority: number; assignee?: string | undefined; idempotency_key?: string | undefined; max_attempts?: number | undefined },
  kindName: string,
  actor: string,
  settings: AskSettings,
): { kind: string; title: string; body: string; payload: string; priority: number; posted_by: string; assignee: string | null; idempotency_key: string | null; max_attempts: number } {
  return {
    kind: kindName,
    title: ask.title,
    body: ask.body,
    payload: JSON.stringify(ask.payload),
    priority: ask.priority,
    posted_by: actor,
    assignee: ask.assignee ?? null,
    idempotency_key: ask.idempotency_key ?? null,
    max_attempts: ask.max_attempts ?? settings.maxAttempts,
  };
}
