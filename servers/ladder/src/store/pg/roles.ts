import type { Scope } from '../ask-kinds.js';
import { filterRoles, isOwnerIn, requireNotLastOwner, requireOwnerIn, requireScopeIn, scopesFromRoles, toRoleGrant, type RoleRow } from '../role-rules.js';
import type { RoleGrant, RoleGrantInput } from '../work-queue.js';
import { roleGrantInput } from '../work-queue.js';
import { DB_NOW_MS, type PgDatabase, type PgQueries } from './database.js';

/**
 * Advisory lock spaces (the two-number form, apart from the migrations' one-number lock), each
 * keyed by hashtext(repo): writes that read and then decide take turns per repository.
 */
export const LOCK_SPACE = { roles: 0x6c61_0001, dependencies: 0x6c61_0002 } as const;

/** Takes the transaction-scoped advisory lock of `space` for `repo`. */
export async function lockRepo(tx: PgQueries, space: number, repo: string): Promise<void> {
  await tx.run('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [space, repo]);
}

/**
 * Roles per repository on PostgreSQL; the decisions are role-rules.ts's. Grants and revocations
 * take the repository's roles lock, so an owner check and the write after it see the same owners
 * (two owners revoking each other cannot leave the repository with none).
 */
export class PgRoles {
  constructor(private readonly db: PgDatabase) {}

  async scopes(q: PgQueries, repo: string, laneId: string, principal: string): Promise<Set<Scope>> {
    // In role order, as SQLite reads them through the primary key: scopes list in the same order on both backends.
    const rows = await q.rows<Pick<RoleRow, 'role'>>(`SELECT role FROM roles WHERE repo = $1 AND principal = $2 AND (lane_id = '' OR lane_id = $3) ORDER BY role COLLATE "C"`, [
      repo,
      principal,
      laneId,
    ]);
    return scopesFromRoles(rows);
  }

  async requireScope(q: PgQueries, repo: string, laneId: string, principal: string, scope: Scope, doing: string): Promise<void> {
    requireScopeIn(await this.scopes(q, repo, laneId, principal), laneId, principal, scope, doing);
  }

  private async isOwner(q: PgQueries, repo: string, principal: string): Promise<boolean> {
    return isOwnerIn(await q.rows<Pick<RoleRow, 'role'>>(`SELECT role FROM roles WHERE repo = $1 AND principal = $2 AND lane_id = ''`, [repo, principal]));
  }

  /** Inside the lane's creation transaction. */
  async addCoordinator(q: PgQueries, repo: string, laneId: string, principal: string, grantedBy: string, now: number): Promise<void> {
    await q.run(`INSERT INTO roles (repo, principal, role, lane_id, granted_by, granted_at) VALUES ($1, $2, 'coordinator', $3, $4, $5) ON CONFLICT DO NOTHING`, [
      repo,
      principal,
      laneId,
      grantedBy,
      now,
    ]);
  }

  async grant(input: RoleGrantInput, actor: string, laneRepo: (q: PgQueries, laneId: string, repo: string) => Promise<void>): Promise<RoleGrant> {
    const grant = roleGrantInput.parse(input);
    return this.db.transaction(async (tx) => {
      await lockRepo(tx, LOCK_SPACE.roles, grant.repo);
      requireOwnerIn(await this.isOwner(tx, grant.repo, actor), grant.repo, actor, `granting ${grant.role}`);
      if (grant.lane_id !== undefined) await laneRepo(tx, grant.lane_id, grant.repo);
      const row: RoleRow = { repo: grant.repo, principal: grant.principal, role: grant.role, lane_id: grant.lane_id ?? '', granted_by: actor, granted_at: tx.now };
      await tx.run(`INSERT INTO roles (repo, principal, role, lane_id, granted_by, granted_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, [
        row.repo,
        row.principal,
        row.role,
        row.lane_id,
        row.granted_by,
        row.granted_at,
      ]);
      return toRoleGrant(row);
    });
  }

  async revoke(input: RoleGrantInput, actor: string): Promise<boolean> {
    const grant = roleGrantInput.parse(input);
    return this.db.transaction(async (tx) => {
      await lockRepo(tx, LOCK_SPACE.roles, grant.repo);
      requireOwnerIn(await this.isOwner(tx, grant.repo, actor), grant.repo, actor, `revoking ${grant.role}`);
      if (grant.role === 'owner') {
        const owners = await tx.one<{ n: number }>(`SELECT count(*) AS n FROM roles WHERE repo = $1 AND role = 'owner'`, [grant.repo]);
        requireNotLastOwner(grant, owners?.n ?? 0, await this.isOwner(tx, grant.repo, grant.principal));
      }
      return (await tx.run(`DELETE FROM roles WHERE repo = $1 AND principal = $2 AND role = $3 AND lane_id = $4`, [grant.repo, grant.principal, grant.role, grant.lane_id ?? ''])) > 0;
    });
  }

  async list(repo: string, filter: { principal?: string; laneId?: string } = {}): Promise<RoleGrant[]> {
    // COLLATE "C": the byte order SQLite sorts TEXT in, whatever the database's collation. The columns
    // by name: a prepared statement whose result type a later migration changes would fail (0A000).
    const rows = await this.db.rows<RoleRow>(`SELECT repo, principal, role, lane_id, granted_by, granted_at FROM roles WHERE repo = $1 ORDER BY principal COLLATE "C", role COLLATE "C", lane_id COLLATE "C"`, [repo]);
    return filterRoles(rows, filter);
  }

  /** The repository's longest-standing owner, if it has one. */
  async firstOwner(q: PgQueries, repo: string): Promise<string | undefined> {
    const row = await q.one<{ principal: string }>(`SELECT principal FROM roles WHERE repo = $1 AND role = 'owner' ORDER BY granted_at, principal COLLATE "C" LIMIT 1`, [repo]);
    return row?.principal;
  }

  async seedOwner(repo: string, principal: string): Promise<void> {
    await this.db.run(
      `INSERT INTO roles (repo, principal, role, lane_id, granted_by, granted_at) VALUES ($1, $2, 'owner', '', $2, coalesce($3::bigint, ${DB_NOW_MS})) ON CONFLICT DO NOTHING`,
      [repo, principal, this.db.clockParam()],
    );
  }
}
