import {
  isLaneId,
  laneMove,
  laneNotFound,
  proposedLane,
  relatedLanes,
  repoLaneId,
  requireKnownLaneState,
  requireStandingLaneOf,
  standingLane,
  standingLaneMissing,
  toLane,
  type LaneRow,
} from '../lane-rules.js';
import type { Scope } from '../ask-kinds.js';
import { toHistoryEvent, type EventRow } from '../records.js';
import { scopesFromRoles } from '../role-rules.js';
import type { Lane, LaneState, LaneWithHistory, ProposeLaneInput, Role } from '../work-queue.js';
import type { PgDatabase, PgQueries } from './database.js';
import type { PgRoles } from './roles.js';

const LANE_COLUMNS = 'id, repo, title, goal, paths, priority, state, coordinator, related_lanes, created_at, updated_at';

/** Lanes and their event history on PostgreSQL; the lifecycle and refusals are lane-rules.ts's. */
export class PgLanes {
  constructor(private readonly db: PgDatabase, private readonly roles: PgRoles) {}

  async propose(input: ProposeLaneInput, actor: string): Promise<LaneWithHistory> {
    const id = await this.db.transaction(async (tx) => {
      const { row, detail } = proposedLane(input, actor, tx.now);
      await this.insert(tx, row);
      await this.roles.addCoordinator(tx, row.repo, row.id, actor, actor, tx.now);
      await this.event(tx, row.id, tx.now, actor, 'proposed', detail);
      return row.id;
    });
    return this.get(id);
  }

  /**
   * The standing lane's id, made when missing if `createdBy` is given. Two servers making it at
   * once both insert the same id: ON CONFLICT lets one row in, and only the server whose insert
   * landed writes the coordinator and the event.
   */
  async standingLaneId(repo: string, createdBy?: string): Promise<string> {
    const id = repoLaneId(repo);
    if (requireStandingLaneOf(await this.find(this.db, id), repo)) return id;
    if (createdBy === undefined) throw standingLaneMissing(repo);
    await this.db.transaction(async (tx) => {
      const { row, detail } = standingLane(repo, await this.roles.firstOwner(tx, repo), tx.now);
      if (!(await this.insert(tx, row, true))) {
        requireStandingLaneOf(await this.find(tx, id), repo);
        return;
      }
      await this.roles.addCoordinator(tx, repo, id, row.coordinator, row.coordinator, tx.now);
      await this.event(tx, id, tx.now, createdBy, 'proposed', detail);
    });
    return id;
  }

  async get(laneId: string): Promise<LaneWithHistory> {
    const row = await this.row(this.db, laneId);
    return { ...toLane(row), history: await this.history(row.id) };
  }

  async list(repo: string, options: { state?: LaneState; withHistory?: boolean } = {}): Promise<(Lane | LaneWithHistory)[]> {
    const rows = await this.db.rows<LaneRow>(`SELECT ${LANE_COLUMNS} FROM lanes WHERE repo = $1 AND ($2::text IS NULL OR state = $2) ORDER BY priority, created_at, seq`, [
      repo,
      options.state ?? null,
    ]);
    if (!options.withHistory) return rows.map(toLane);
    const events = await this.db.rows<EventRow & { lane_id: string }>(
      'SELECT e.lane_id, e.seq, e.at, e.actor, e.type, e.detail FROM lane_events e WHERE e.lane_id = ANY($1::text[]) ORDER BY e.seq',
      [rows.map((row) => row.id)],
    );
    return rows.map((row) => ({ ...toLane(row), history: events.filter((event) => event.lane_id === row.id).map(toHistoryEvent) }));
  }

  async setState(laneId: string, state: LaneState, actor: string, reason = ''): Promise<LaneWithHistory> {
    requireKnownLaneState(state);
    await this.db.transaction(async (tx) => {
      const row = await this.row(tx, laneId, 'FOR NO KEY UPDATE');
      await this.roles.requireScope(tx, row.repo, row.id, actor, 'coordinator', `moving ${row.id} to ${state}`);
      if (!laneMove(row, state)) return;
      await tx.run('UPDATE lanes SET state = $1, updated_at = $2 WHERE id = $3', [state, tx.now, row.id]);
      await this.event(tx, row.id, tx.now, actor, 'state_changed', { from: row.state, to: state, reason });
    });
    return this.get(laneId);
  }

  async addRelated(laneId: string, relatedLaneId: string, actor: string): Promise<LaneWithHistory> {
    await this.db.transaction(async (tx) => {
      const row = await this.row(tx, laneId, 'FOR NO KEY UPDATE');
      const related = await this.row(tx, relatedLaneId);
      const coordinates = async (id: string) => (await this.roles.scopes(tx, row.repo, id, actor)).has('coordinator');
      const coordinatesEither = related.repo === row.repo && ((await coordinates(row.id)) || (await coordinates(related.id)));
      const list = relatedLanes(row, related, coordinatesEither);
      if (list === undefined) return;
      await tx.run('UPDATE lanes SET related_lanes = $1, updated_at = $2 WHERE id = $3', [list, tx.now, row.id]);
      await this.event(tx, row.id, tx.now, actor, 'related_added', { lane_id: related.id });
    });
    return this.get(laneId);
  }

  /** The lane row, or a refusal naming the unknown id; `lock` takes its row lock inside a transaction. */
  async row(q: PgQueries, laneId: string, lock: '' | 'FOR NO KEY UPDATE' = ''): Promise<LaneRow> {
    const row = isLaneId(laneId) ? await this.find(q, laneId, lock) : undefined;
    if (!row) throw laneNotFound(laneId);
    return row;
  }

  /**
   * The lane row and the scopes `principal` holds on it, in one round trip (the claim path reads
   * both before every claimNext).
   */
  async rowWithScopes(q: PgQueries, laneId: string, principal: string): Promise<{ lane: LaneRow; scopes: Set<Scope> }> {
    const row = isLaneId(laneId)
      ? await q.one<LaneRow & { roles: Role[] }>(
          `SELECT ${LANE_COLUMNS}, ARRAY(SELECT r.role FROM roles r WHERE r.repo = l.repo AND r.principal = $2 AND (r.lane_id = '' OR r.lane_id = l.id) ORDER BY r.role COLLATE "C") AS roles
           FROM lanes l WHERE l.id = $1`,
          [laneId, principal],
        )
      : undefined;
    if (!row) throw laneNotFound(laneId);
    const { roles, ...lane } = row;
    return { lane, scopes: scopesFromRoles(roles.map((role) => ({ role }))) };
  }

  private async find(q: PgQueries, laneId: string, lock = ''): Promise<LaneRow | undefined> {
    return q.one<LaneRow>(`SELECT ${LANE_COLUMNS} FROM lanes WHERE id = $1 ${lock}`, [laneId]);
  }

  private async history(laneId: string) {
    return (await this.db.rows<EventRow>('SELECT seq, at, actor, type, detail FROM lane_events WHERE lane_id = $1 ORDER BY seq', [laneId])).map(toHistoryEvent);
  }

  /** Inserts the lane; with `ifAbsent`, false when a lane with its id exists already. */
  private async insert(q: PgQueries, row: LaneRow, ifAbsent = false): Promise<boolean> {
    const changed = await q.run(
      `INSERT INTO lanes (${LANE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)${ifAbsent ? ' ON CONFLICT (id) DO NOTHING' : ''}`,
      [row.id, row.repo, row.title, row.goal, row.paths, row.priority, row.state, row.coordinator, row.related_lanes, row.created_at, row.updated_at],
    );
    return changed === 1;
  }

  private async event(q: PgQueries, laneId: string, at: number, actor: string, type: string, detail: Record<string, unknown>): Promise<void> {
    await q.run('INSERT INTO lane_events (lane_id, at, actor, type, detail) VALUES ($1, $2, $3, $4, $5)', [laneId, at, actor, type, JSON.stringify(detail)]);
  }
}
