import { ToolError } from '@bulkhead/core';
import type { Scope } from './ask-kinds.js';
import type { Clock, Db } from './database.js';
import { immediate } from './database.js';
import { isoTime } from './records.js';
import type { Role, RoleGrant, RoleGrantInput } from './work-queue.js';
import { roleGrantInput } from './work-queue.js';

interface RoleRow {
  repo: string;
  principal: string;
  role: Role;
  lane_id: string;
  granted_by: string;
  granted_at: number;
}

/**
 * Roles per repository. Every principal is a contributor without a grant (authentication is the
 * transport's job); an owner grants roles and holds every scope; a lane's proposer becomes its
 * coordinator; maintainers hold a lane or a whole repo.
 */
export class SqliteRoles {
  private readonly rolesOf;
  private readonly insert;
  private readonly remove;
  private readonly ownerCount;
  private readonly all;
  private readonly firstOwnerOf;

  constructor(private readonly db: Db, private readonly clock: Clock) {
    this.rolesOf = db.prepare<[string, string, string], Pick<RoleRow, 'role' | 'lane_id'>>(
      `SELECT role, lane_id FROM roles WHERE repo = ? AND principal = ? AND (lane_id = '' OR lane_id = ?)`,
    );
    this.insert = db.prepare(
      `INSERT INTO roles (repo, principal, role, lane_id, granted_by, granted_at) VALUES (@repo, @principal, @role, @lane_id, @granted_by, @granted_at)
       ON CONFLICT DO NOTHING`,
    );
    this.remove = db.prepare(`DELETE FROM roles WHERE repo = ? AND principal = ? AND role = ? AND lane_id = ?`);
    this.ownerCount = db.prepare<[string], number>(`SELECT count(*) FROM roles WHERE repo = ? AND role = 'owner'`).pluck();
    this.all = db.prepare<[string], RoleRow>(`SELECT * FROM roles WHERE repo = ? ORDER BY principal, role, lane_id`);
    this.firstOwnerOf = db.prepare<[string], string>(`SELECT principal FROM roles WHERE repo = ? AND role = 'owner' ORDER BY granted_at, principal LIMIT 1`).pluck();
  }

  /** The scopes `principal` holds on a lane of `repo`; contributor always, every scope for an owner. */
  scopes(repo: string, laneId: string, principal: string): Set<Scope> {
    const scopes = new Set<Scope>(['contributor']);
    for (const { role } of this.rolesOf.all(repo, principal, laneId)) {
      if (role === 'owner') return new Set<Scope>(['contributor', 'maintainer', 'coordinator']);
      if (role === 'maintainer' || role === 'coordinator') scopes.add(role);
    }
    return scopes;
  }

  isOwner(repo: string, principal: string): boolean {
    return this.rolesOf.all(repo, principal, '').some((row) => row.role === 'owner');
  }

  /** Throws `needs <scope> scope` unless `principal` holds it on the lane. */
  requireScope(repo: string, laneId: string, principal: string, scope: Scope, doing: string): void {
    if (this.scopes(repo, laneId, principal).has(scope)) return;
    const who = scope === 'coordinator' ? "the lane's coordinators" : scope === 'maintainer' ? "the lane's or the repo's maintainers" : 'contributors';
    throw new ToolError(`${doing} needs ${scope} scope on ${laneId}: only ${who} (or a repo owner) may; ${principal} holds ${[...this.scopes(repo, laneId, principal)].join(', ')}`, 'forbidden');
  }

  /** Called inside the lane's creation transaction. */
  addCoordinator(repo: string, laneId: string, principal: string, grantedBy: string): void {
    this.insert.run({ repo, principal, role: 'coordinator', lane_id: laneId, granted_by: grantedBy, granted_at: this.clock() });
  }

  grant(input: RoleGrantInput, actor: string, laneExists: (laneId: string, repo: string) => void): RoleGrant {
    const grant = roleGrantInput.parse(input);
    return immediate(this.db, () => {
      this.requireOwner(grant.repo, actor, `granting ${grant.role}`);
      if (grant.lane_id !== undefined) laneExists(grant.lane_id, grant.repo);
      const row: RoleRow = { repo: grant.repo, principal: grant.principal, role: grant.role, lane_id: grant.lane_id ?? '', granted_by: actor, granted_at: this.clock() };
      this.insert.run(row);
      return toRoleGrant(row);
    });
  }

  revoke(input: RoleGrantInput, actor: string): boolean {
    const grant = roleGrantInput.parse(input);
    return immediate(this.db, () => {
      this.requireOwner(grant.repo, actor, `revoking ${grant.role}`);
      if (grant.role === 'owner' && this.ownerCount.get(grant.repo) === 1 && this.isOwner(grant.repo, grant.principal)) {
        throw new ToolError(`${grant.principal} is the last owner of ${grant.repo}; grant another owner first`, 'conflict');
      }
      return this.remove.run(grant.repo, grant.principal, grant.role, grant.lane_id ?? '').changes > 0;
    });
  }

  list(repo: string, filter: { principal?: string; laneId?: string } = {}): RoleGrant[] {
    return this.all
      .all(repo)
      .filter((row) => (filter.principal === undefined || row.principal === filter.principal) && (filter.laneId === undefined || row.lane_id === filter.laneId || row.lane_id === ''))
      .map(toRoleGrant);
  }

  /** The repository's longest-standing owner, if it has one. */
  firstOwner(repo: string): string | undefined {
    return this.firstOwnerOf.get(repo);
  }

  seedOwner(repo: string, principal: string): void {
    this.insert.run({ repo, principal, role: 'owner', lane_id: '', granted_by: principal, granted_at: this.clock() });
  }

  private requireOwner(repo: string, actor: string, doing: string): void {
    if (!this.isOwner(repo, actor)) throw new ToolError(`${doing} needs owner scope on ${repo}; ${actor} is not an owner — ask an owner to grant it`, 'forbidden');
  }
}

function toRoleGrant(row: RoleRow): RoleGrant {
  return { repo: row.repo, principal: row.principal, role: row.role, lane_id: row.lane_id === '' ? null : row.lane_id, granted_by: row.granted_by, granted_at: isoTime(row.granted_at) };
}
