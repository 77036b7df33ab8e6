import { ToolError } from '@bulkhead/core';
import type { Scope } from './ask-kinds.js';
import { isoTime } from './records.js';
import type { Role, RoleGrant } from './work-queue.js';

/** What the SQLite and PostgreSQL role stores share: the row, the scope decision and the refusals' wording. */

export interface RoleRow {
  repo: string;
  principal: string;
  role: Role;
  /** '' for a repo-wide role. */
  lane_id: string;
  granted_by: string;
  granted_at: number;
}

/** The scopes a principal holding `roles` (on the lane or repo-wide) has; contributor always, every scope for an owner. */
export function scopesFromRoles(roles: readonly Pick<RoleRow, 'role'>[]): Set<Scope> {
  const scopes = new Set<Scope>(['contributor']);
  for (const { role } of roles) {
    if (role === 'owner') return new Set<Scope>(['contributor', 'maintainer', 'coordinator']);
    if (role === 'maintainer' || role === 'coordinator') scopes.add(role);
  }
  return scopes;
}

export function isOwnerIn(repoWideRoles: readonly Pick<RoleRow, 'role'>[]): boolean {
  return repoWideRoles.some((row) => row.role === 'owner');
}

/** Throws `needs <scope> scope` unless `held` has it. */
export function requireScopeIn(held: ReadonlySet<Scope>, laneId: string, principal: string, scope: Scope, doing: string): void {
  if (held.has(scope)) return;
  const who = scope === 'coordinator' ? "the lane's coordinators" : scope === 'maintainer' ? "the lane's or the repo's maintainers" : 'contributors';
  throw new ToolError(`${doing} needs ${scope} scope on ${laneId}: only ${who} (or a repo owner) may; ${principal} holds ${[...held].join(', ')}`, 'forbidden');
}

export function requireOwnerIn(isOwner: boolean, repo: string, actor: string, doing: string): void {
  if (!isOwner) throw new ToolError(`${doing} needs owner scope on ${repo}; ${actor} is not an owner — ask an owner to grant it`, 'forbidden');
}

/** Refuses revoking the repository's last owner. */
export function requireNotLastOwner(grant: { repo: string; principal: string; role: Role }, ownerCount: number, principalIsOwner: boolean): void {
  if (grant.role === 'owner' && ownerCount === 1 && principalIsOwner) {
    throw new ToolError(`${grant.principal} is the last owner of ${grant.repo}; grant another owner first`, 'conflict');
  }
}

/** A lane grant must name a lane of the grant's repo. */
export function requireLaneInRepo(laneId: string, laneRepo: string, repo: string): void {
  if (laneRepo !== repo) throw new ToolError(`${laneId} is in ${laneRepo}, not ${repo}; grant the role in the lane's own repo`, 'invalid');
}

export function filterRoles(rows: readonly RoleRow[], filter: { principal?: string; laneId?: string }): RoleGrant[] {
  return rows
    .filter((row) => (filter.principal === undefined || row.principal === filter.principal) && (filter.laneId === undefined || row.lane_id === filter.laneId || row.lane_id === ''))
    .map(toRoleGrant);
}

export function toRoleGrant(row: RoleRow): RoleGrant {
  return { repo: row.repo, principal: row.principal, role: row.role, lane_id: row.lane_id === '' ? null : row.lane_id, granted_by: row.granted_by, granted_at: isoTime(row.granted_at) };
}
