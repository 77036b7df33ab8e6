import { z } from 'zod';
import type { Ask, Claim, ClaimableAsk, HistoryEvent, Lane, LaneWithHistory, RoleGrant } from './store/work-queue.js';

/*
 * Output schemas name each result's top level; the records inside are the store's types, described
 * in words, because the store owns their shape and a copy here would drift from it.
 */
export const laneResult = z
  .custom<Lane | LaneWithHistory>()
  .describe('A lane: id, repo, title, goal, paths, priority, state, coordinator, related_lanes, created_at, updated_at, and history when asked for');
export const askResult = z
  .custom<Ask>()
  .describe('An ask: id, lane_id, kind, title, body, payload, priority, state, holder, lease_until, fence, attempts, answer, depends_on, waiting_on, blocked_by, timestamps');
export const claimableResult = z.custom<ClaimableAsk>().describe('{ask, why}: an ask the caller may claim now, and why');
export const claimResult = z.custom<Claim>().describe('{ask, fence, lease_until, renewed}');
export const roleGrantResult = z.custom<RoleGrant>().describe('A role: repo, principal, role, lane_id, granted_by, granted_at');

function event(event: HistoryEvent): string {
  return `  ${event.at} ${event.actor} ${event.type}${Object.keys(event.detail).length > 0 ? ` ${JSON.stringify(event.detail)}` : ''}`;
}

export function renderLane(lane: Lane | LaneWithHistory): string {
  const lines = [
    `${lane.id} [${lane.state}] ${lane.title} (repo ${lane.repo}, priority ${lane.priority}, coordinator ${lane.coordinator})`,
    ...(lane.goal ? [`goal: ${lane.goal}`] : []),
    ...(lane.paths.length > 0 ? [`paths: ${lane.paths.join(', ')}`] : []),
    ...(lane.related_lanes.length > 0 ? [`related lanes: ${lane.related_lanes.join(', ')}`] : []),
  ];
  if ('history' in lane) lines.push('history:', ...lane.history.map(event));
  return lines.join('\n');
}

export function renderAsk(ask: Ask): string {
  const state =
    ask.state === 'claimed' ? `claimed by ${ask.holder} until ${ask.lease_until}, fence ${ask.fence}` : ask.state === 'answered' ? `answered ${ask.answer} by ${ask.answered_by}` : ask.state;
  const lines = [`${ask.id} [${state}] ${ask.kind}: ${ask.title} (lane ${ask.lane_id}, priority ${ask.priority})`];
  if (ask.waiting_on.length > 0) lines.push(`waiting on ${ask.waiting_on.join(', ')}`);
  if (ask.blocked_by.length > 0) lines.push(`blocked by ${ask.blocked_by.join(', ')} (denied, cancelled or expired): it will not become claimable by itself`);
  if (ask.body) lines.push(ask.body);
  return lines.join('\n');
}

export function renderRole(grant: RoleGrant): string {
  return `${grant.principal}: ${grant.role} on ${grant.repo}${grant.lane_id ? ` lane ${grant.lane_id}` : ''} (granted by ${grant.granted_by} at ${grant.granted_at})`;
}
