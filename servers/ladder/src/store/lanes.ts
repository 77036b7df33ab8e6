import type { Clock, Db } from './database.js';
import { immediate } from './database.js';
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
} from './lane-rules.js';
import { toHistoryEvent, type EventRow } from './records.js';
import type { SqliteRoles } from './roles.js';
import type { Lane, LaneState, LaneWithHistory, ProposeLaneInput } from './work-queue.js';

export { REPO_LANE } from './lane-rules.js';

/** Lanes and their event history: every change writes an event with its actor and time. */
export class SqliteLanes {
  private readonly insertLane;
  private readonly selectLane;
  private readonly selectByRepo;
  private readonly insertEvent;
  private readonly selectEvents;
  private readonly updateState;
  private readonly updateRelated;

  constructor(private readonly db: Db, private readonly clock: Clock, private readonly roles: SqliteRoles) {
    this.insertLane = db.prepare(
      `INSERT INTO lanes (id, repo, title, goal, paths, priority, state, coordinator, related_lanes, created_at, updated_at)
       VALUES (@id, @repo, @title, @goal, @paths, @priority, @state, @coordinator, @related_lanes, @created_at, @updated_at)`,
    );
    this.selectLane = db.prepare<[string], LaneRow>('SELECT * FROM lanes WHERE id = ?');
    this.selectByRepo = db.prepare<[string], LaneRow>('SELECT * FROM lanes WHERE repo = ? ORDER BY priority, created_at, rowid');
    this.insertEvent = db.prepare('INSERT INTO lane_events (lane_id, at, actor, type, detail) VALUES (?, ?, ?, ?, ?)');
    this.selectEvents = db.prepare<[string], EventRow>('SELECT seq, at, actor, type, detail FROM lane_events WHERE lane_id = ? ORDER BY seq');
    this.updateState = db.prepare('UPDATE lanes SET state = ?, updated_at = ? WHERE id = ?');
    this.updateRelated = db.prepare('UPDATE lanes SET related_lanes = ?, updated_at = ? WHERE id = ?');
  }

  propose(input: ProposeLaneInput, actor: string): LaneWithHistory {
    const now = this.clock();
    const { row, detail } = proposedLane(input, actor, now);
    immediate(this.db, () => {
      this.insertLane.run(row);
      this.roles.addCoordinator(row.repo, row.id, actor, actor);
      this.insertEvent.run(row.id, now, actor, 'proposed', JSON.stringify(detail));
    });
    return this.get(row.id);
  }

  /**
   * The id of the repository's standing lane (`_repo`). `createdBy` makes it when missing (a
   * writing call names it): active, coordinated by the repository's longest-standing owner, its
   * creation credited to `createdBy`. A reading call only looks it up. A repository with no owner
   * has none. The write lock is taken only to make it.
   */
  standingLaneId(repo: string, createdBy?: string): string {
    const id = repoLaneId(repo);
    const found = (): boolean => requireStandingLaneOf(this.selectLane.get(id), repo);
    if (found()) return id;
    if (createdBy === undefined) throw standingLaneMissing(repo);
    immediate(this.db, () => {
      if (found()) return;
      const now = this.clock();
      const { row, detail } = standingLane(repo, this.roles.firstOwner(repo), now);
      this.insertLane.run(row);
      this.roles.addCoordinator(repo, id, row.coordinator, row.coordinator);
      this.insertEvent.run(id, now, createdBy, 'proposed', JSON.stringify(detail));
    });
    return id;
  }

  get(laneId: string): LaneWithHistory {
    const row = this.row(laneId);
    return { ...toLane(row), history: this.selectEvents.all(row.id).map(toHistoryEvent) };
  }

  list(repo: string, options: { state?: LaneState; withHistory?: boolean } = {}): (Lane | LaneWithHistory)[] {
    return this.selectByRepo
      .all(repo)
      .filter((row) => options.state === undefined || row.state === options.state)
      .map((row) => (options.withHistory ? { ...toLane(row), history: this.selectEvents.all(row.id).map(toHistoryEvent) } : toLane(row)));
  }

  setState(laneId: string, state: LaneState, actor: string, reason = ''): LaneWithHistory {
    requireKnownLaneState(state);
    immediate(this.db, () => {
      const row = this.row(laneId);
      this.roles.requireScope(row.repo, row.id, actor, 'coordinator', `moving ${row.id} to ${state}`);
      if (!laneMove(row, state)) return;
      const now = this.clock();
      this.updateState.run(state, now, row.id);
      this.insertEvent.run(row.id, now, actor, 'state_changed', JSON.stringify({ from: row.state, to: state, reason }));
    });
    return this.get(laneId);
  }

  addRelated(laneId: string, relatedLaneId: string, actor: string): LaneWithHistory {
    immediate(this.db, () => {
      const row = this.row(laneId);
      const related = this.row(relatedLaneId);
      // Either lane's coordinator may record the link: the one who split the work off, or the new lane's proposer.
      const coordinatesEither = related.repo === row.repo && [row.id, related.id].some((id) => this.roles.scopes(row.repo, id, actor).has('coordinator'));
      const list = relatedLanes(row, related, coordinatesEither);
      if (list === undefined) return;
      const now = this.clock();
      this.updateRelated.run(list, now, row.id);
      this.insertEvent.run(row.id, now, actor, 'related_added', JSON.stringify({ lane_id: related.id }));
    });
    return this.get(laneId);
  }

  /** The lane row, or a refusal naming the unknown id. */
  row(laneId: string): LaneRow {
    const row = isLaneId(laneId) ? this.selectLane.get(laneId) : undefined;
    if (!row) throw laneNotFound(laneId);
    return row;
  }
}
