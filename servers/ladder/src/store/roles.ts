import type { Scope } from './ask-kinds.js';
import type { Clock, Db } from './database.js';
import { immediate } from './database.js';
import { filterRoles, isOwnerIn, requireNotLastOwner, requireOwnerIn, requireScopeIn, scopesFromRoles, toRoleGrant, type RoleRow } from './role-rules.js';
import type { RoleGrant, RoleGrantInput } from './work-queue.js';
import { roleGrantInput } from './work-queue.js';

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
    return scopesFromRoles(this.rolesOf.all(repo, principal, laneId));
  }

  isOwner(repo: string, principal: string): boolean {
    return isOwnerIn(this.rolesOf.all(repo, principal, ''));
  }

  /** Throws `needs <scope> scope` unless `principal` holds it on the lane. */
  requireScope(repo: string, laneId: string, principal: string, scope: Scope, doing: string): void {
    requireScopeIn(this.scopes(repo, laneId, principal), laneId, principal, scope, doing);
  }

  /** Called inside the lane's creation transaction. */
  addCoordinator(repo: string, laneId: string, principal: string, grantedBy: string): void {
    this.insert.run({ repo, principal, role: 'coordinator', lane_id: laneId, granted_by: grantedBy, granted_at: this.clock() });
  }

  grant(input: RoleGrantInput, actor: string, laneExists: (laneId: string, repo: string) => void): RoleGrant {
    const grant = roleGrantInput.parse(input);
    return immediate(this.db, () => {
      requireOwnerIn(this.isOwner(grant.repo, actor), grant.repo, actor, `granting ${grant.role}`);
      if (grant.lane_id !== undefined) laneExists(grant.lane_id, grant.repo);
      const row: RoleRow = { repo: grant.repo, principal: grant.principal, role: grant.role, lane_id: grant.lane_id ?? '', granted_by: actor, granted_at: this.clock() };
      this.insert.run(row);
      return toRoleGrant(row);
    });
  }

  revoke(input: RoleGrantInput, actor: string): boolean {
    const grant = roleGrantInput.parse(input);
    return immediate(this.db, () => {
      requireOwnerIn(this.isOwner(grant.repo, actor), grant.repo, actor, `revoking ${grant.role}`);
      if (grant.role === 'owner') requireNotLastOwner(grant, this.ownerCount.get(grant.repo) ?? 0, this.isOwner(grant.repo, grant.principal));
      return this.remove.run(grant.repo, grant.principal, grant.role, grant.lane_id ?? '').changes > 0;
    });
  }

  list(repo: string, filter: { principal?: string; laneId?: string } = {}): RoleGrant[] {
    return filterRoles(this.all.all(repo), filter);
  }

  /** The repository's longest-standing owner, if it has one. */
  firstOwner(repo: string): string | undefined {
    return this.firstOwnerOf.get(repo);
  }

  seedOwner(repo: string, principal: string): void {
    this.insert.run({ repo, principal, role: 'owner', lane_id: '', granted_by: principal, granted_at: this.clock() });
  }
}
