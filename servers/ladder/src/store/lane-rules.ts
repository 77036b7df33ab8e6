import { createHash } from 'node:crypto';
import { ToolError } from '@bulkhead/core';
import { isoTime, newId } from './records.js';
import type { Lane, LaneState, ProposeLaneInput } from './work-queue.js';
import { LANE_STATES, idSchemas, proposeLaneInput } from './work-queue.js';

/** What the SQLite and PostgreSQL lane stores share: the row, the lifecycle and every refusal's wording. */

export interface LaneRow {
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

/** States a lane never leaves. */
const FINAL_STATES: readonly LaneState[] = ['done', 'abandoned'];

/** zz's name for a repository's standing lane, for work on the repository as a whole. */
export const REPO_LANE = '_repo';

/**
 * The standing lane's id: the same in every process and on either backend, so two that make it
 * at once make one. Shaped like any lane id; one of 2^40 to meet a random id.
 */
export function repoLaneId(repo: string): string {
  return `lane-${createHash('sha256').update(`${REPO_LANE}\0${repo}`).digest('hex').slice(0, 10)}`;
}

export function laneNotFound(laneId: string): ToolError {
  return new ToolError(`no lane ${laneId}; lane_list shows the lanes of a repo`, 'not_found');
}

export function isLaneId(laneId: string): boolean {
  return idSchemas.laneId.safeParse(laneId).success;
}

/** A new lane's row and its `proposed` event detail. */
export function proposedLane(input: ProposeLaneInput, actor: string, now: number): { row: LaneRow; detail: Record<string, unknown> } {
  const lane = proposeLaneInput.parse(input);
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
  return { row, detail: { title: lane.title, goal: lane.goal, paths: lane.paths, priority: lane.priority } };
}

/** An existing row at the standing lane's id must be that repository's (a 2^-40 collision otherwise). */
export function requireStandingLaneOf(existing: Pick<LaneRow, 'repo'> | undefined, repo: string): boolean {
  if (existing !== undefined && existing.repo !== repo) throw new ToolError(`the id of ${repo}'s ${REPO_LANE} lane is taken by a lane of another repository`, 'conflict');
  return existing !== undefined;
}

export function standingLaneMissing(repo: string): ToolError {
  return new ToolError(`${repo} has no ${REPO_LANE} lane yet; the first ask posted to ${REPO_LANE} makes it`, 'not_found');
}

/**
 * The standing lane's row and event: active, coordinated by the repository's longest-standing
 * owner; refused for a repository with no owner.
 */
export function standingLane(repo: string, owner: string | undefined, now: number): { row: LaneRow; detail: Record<string, unknown> } {
  if (owner === undefined) throw new ToolError(`${repo} has no owner, so it has no ${REPO_LANE} lane; propose a lane with lane_propose instead`, 'not_found');
  const lane = proposeLaneInput.parse({ repo, title: repo, goal: 'Work on the repository as a whole' });
  const row: LaneRow = {
    id: repoLaneId(repo),
    repo,
    title: lane.title,
    goal: lane.goal,
    paths: '[]',
    priority: lane.priority,
    state: 'active',
    coordinator: owner,
    related_lanes: '[]',
    created_at: now,
    updated_at: now,
  };
  return { row, detail: { title: lane.title, goal: lane.goal, paths: [], priority: lane.priority, standing: REPO_LANE, coordinator: owner } };
}

export function requireKnownLaneState(state: LaneState): void {
  if (!LANE_STATES.includes(state)) throw new ToolError(`unknown lane state ${state}; one of ${LANE_STATES.join(', ')}`, 'invalid');
}

/** Whether `row` may move to `state` (false: it is already there); refuses a move the lifecycle forbids. */
export function laneMove(row: LaneRow, state: LaneState): boolean {
  if (row.state === state) return false;
  if (row.id === repoLaneId(row.repo) && FINAL_STATES.includes(state)) {
    throw new ToolError(`${row.id} is ${row.repo}'s ${REPO_LANE} lane, which stays open for the repository's work; pause it instead`, 'conflict');
  }
  if (!NEXT_STATES[row.state].includes(state)) {
    const next = NEXT_STATES[row.state];
    throw new ToolError(`${row.id} is ${row.state}; it can move to ${next.length > 0 ? next.join(', ') : 'no other state'}`, 'conflict');
  }
  return true;
}

/**
 * The lane's new related_lanes JSON, or undefined when the link is already recorded; refuses
 * lanes of two repos, a lane related to itself, and a caller coordinating neither lane.
 */
export function relatedLanes(row: LaneRow, related: LaneRow, coordinatesEither: boolean): string | undefined {
  if (related.repo !== row.repo) throw new ToolError(`${related.id} is in ${related.repo}, not ${row.repo}; related lanes share a repo`, 'invalid');
  if (related.id === row.id) throw new ToolError(`a lane cannot be related to itself`, 'invalid');
  if (!coordinatesEither) throw new ToolError(`recording a related lane needs coordinator scope on ${row.id} or ${related.id}; ask ${row.coordinator} to record it`, 'forbidden');
  const list = JSON.parse(row.related_lanes) as string[];
  if (list.includes(related.id)) return undefined;
  return JSON.stringify([...list, related.id]);
}

export function toLane(row: LaneRow): Lane {
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
