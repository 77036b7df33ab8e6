import { createHash } from 'node:crypto';
import { ToolError } from '@bulkhead/core';
import type { Clock, Db } from './database.js';
import { immediate } from './database.js';
import { isoTime, newId, toHistoryEvent, type EventRow } from './records.js';
import type { SqliteRoles } from './roles.js';
import type { Lane, LaneState, LaneWithHistory, ProposeLaneInput } from './work-queue.js';
import { LANE_STATES, idSchemas, proposeLaneInput } from './work-queue.js';

interface LaneRow {
  id: string;
  repo: string;
  title: string;
  goal: string;
  paths: string;
  priority: number;
  state: LaneState;
  coordinator: string;
  related_lanes: string;
  created_at: number;
  updated_at: number;
}

/** Which states a lane may move to; done and abandoned are final. */
const NEXT_STATES: Record<LaneState, readonly LaneState[]> = {
  proposed: ['active', 'paused', 'abandoned'],
  active: ['paused', 'done', 'abandoned'],
  paused: ['active', 'done', 'abandoned'],
  done: [],
  abandoned: [],
};

/** zz's name for a repository's standing lane, for work on the repository as a whole. */
export const REPO_LANE = '_repo';

/**
 * The standing lane's id: the same in every process on the file, so two that make it at once
 * make one. Shaped like any lane id; one of 2^40 to meet a random id.
 */
function repoLaneId(repo: string): string {
  return `lane-${createHash('sha256').update(`${REPO_LANE}\0${repo}`).digest('hex').slice(0, 10)}`;
}

/** States a lane never leaves. */
const FINAL_STATES: readonly LaneState[] = ['done', 'abandoned'];

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
    const lane = proposeLaneInput.parse(input);
    const now = this.clock();
    const row: LaneRow = {
      id: newId('lane'),
      repo: lane.repo,
      title: lane.title,
      goal: lane.goal,
      paths: JSON.stringify(lane.paths),
      priority: lane.priority,
      state: 'proposed',
      coordinator: actor,
      related_lanes: '[]',
      created_at: now,
      updated_at: now,
    };
    immediate(this.db, () => {
      this.insertLane.run(row);
      this.roles.addCoordinator(lane.repo, row.id, actor, actor);
      this.insertEvent.run(row.id, now, actor, 'proposed', JSON.stringify({ title: lane.title, goal: lane.goal, paths: lane.paths, priority: lane.priority }));
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
    const found = (): boolean => {
      const existing = this.selectLane.get(id);
      if (existing !== undefined && existing.repo !== repo) throw new ToolError(`the id of ${repo}'s ${REPO_LANE} lane is taken by a lane of another repository`, 'conflict');
      return existing !== undefined;
    };
    if (found()) return id;
    if (createdBy === undefined) throw new ToolError(`${repo} has no ${REPO_LANE} lane yet; the first ask posted to ${REPO_LANE} makes it`, 'not_found');
    immediate(this.db, () => {
      if (found()) return;
      const owner = this.roles.firstOwner(repo);
      if (owner === undefined) throw new ToolError(`${repo} has no owner, so it has no ${REPO_LANE} lane; propose a lane with lane_propose instead`, 'not_found');
      const now = this.clock();
      const lane = proposeLaneInput.parse({ repo, title: repo, goal: 'Work on the repository as a whole' });
      this.insertLane.run({ id, repo, title: lane.title, goal: lane.goal, paths: '[]', priority: lane.priority, state: 'active', coordinator: owner, related_lanes: '[]', created_at: now, updated_at: now });
      this.roles.addCoordinator(repo, id, owner, owner);
      this.insertEvent.run(id, now, createdBy, 'proposed', JSON.stringify({ title: lane.title, goal: lane.goal, paths: [], priority: lane.priority, standing: REPO_LANE, coordinator: owner }));
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
    if (!LANE_STATES.includes(state)) throw new ToolError(`unknown lane state ${state}; one of ${LANE_STATES.join(', ')}`, 'invalid');
    immediate(this.db, () => {
      const row = this.row(laneId);
      this.roles.requireScope(row.repo, row.id, actor, 'coordinator', `moving ${row.id} to ${state}`);
      if (row.state === state) return;
      if (row.id === repoLaneId(row.repo) && FINAL_STATES.includes(state)) {
        throw new ToolError(`${row.id} is ${row.repo}'s ${REPO_LANE} lane, which stays open for the repository's work; pause it instead`, 'conflict');
      }
      if (!NEXT_STATES[row.state].includes(state)) {
        const next = NEXT_STATES[row.state];
        throw new ToolError(`${row.id} is ${row.state}; it can move to ${next.length > 0 ? next.join(', ') : 'no other state'}`, 'conflict');
      }
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
      if (related.repo !== row.repo) throw new ToolError(`${relatedLaneId} is in ${related.repo}, not ${row.repo}; related lanes share a repo`, 'invalid');
      if (related.id === row.id) throw new ToolError(`a lane cannot be related to itself`, 'invalid');
      // Either lane's coordinator may record the link: the one who split the work off, or the new lane's proposer.
      const scopes = [this.roles.scopes(row.repo, row.id, actor), this.roles.scopes(row.repo, related.id, actor)];
      if (!scopes.some((held) => held.has('coordinator'))) {
        throw new ToolError(`recording a related lane needs coordinator scope on ${row.id} or ${related.id}; ask ${row.coordinator} to record it`, 'forbidden');
      }
      const list = JSON.parse(row.related_lanes) as string[];
      if (list.includes(related.id)) return;
      const now = this.clock();
      this.updateRelated.run(JSON.stringify([...list, related.id]), now, row.id);
      this.insertEvent.run(row.id, now, actor, 'related_added', JSON.stringify({ lane_id: related.id }));
    });
    return this.get(laneId);
  }

  /** The lane row, or a refusal naming the unknown id. */
  row(laneId: string): LaneRow {
    const parsed = idSchemas.laneId.safeParse(laneId);
    const row = parsed.success ? this.selectLane.get(laneId) : undefined;
    if (!row) throw new ToolError(`no lane ${laneId}; lane_list shows the lanes of a repo`, 'not_found');
    return row;
  }
}

function toLane(row: LaneRow): Lane {
  return {
    id: row.id,
    repo: row.repo,
    title: row.title,
    goal: row.goal,
    paths: JSON.parse(row.paths) as string[],
    priority: row.priority,
    state: row.state,
    coordinator: row.coordinator,
    related_lanes: JSON.parse(row.related_lanes) as string[],
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
}
