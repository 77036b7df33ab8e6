import { AskKinds, type Scope } from '../ask-kinds.js';
import { askSettings } from '../ask-rules.js';
import { ComposedWorkQueueStore } from '../composed-work-queue.js';
import { requireLaneInRepo } from '../role-rules.js';
import type { RoleGrant, RoleGrantInput, WorkQueueOptions } from '../work-queue.js';
import { PgAsks } from './asks.js';
import type { PgDatabase } from './database.js';
import { PgLanes } from './lanes.js';
import { migratePgLanes } from './lanes-schema.js';
import { PgRoles } from './roles.js';
import { PgTokens } from './tokens.js';

/**
 * The work queue on PostgreSQL, for servers on several machines sharing one queue. The semantics
 * and every refusal are the SQLite store's (the contract tests run both); time is the database's
 * clock (or the PgDatabase's test clock), so every server agrees on when a lease lapsed.
 */
export class PgWorkQueueStore extends ComposedWorkQueueStore {
  protected readonly parts: { lanes: PgLanes; asks: PgAsks; roles: PgRoles; tokens: PgTokens };

  private constructor(private readonly db: PgDatabase, options: WorkQueueOptions) {
    super();
    const roles = new PgRoles(db);
    const lanes = new PgLanes(db, roles);
    const asks = new PgAsks(db, lanes, roles, new AskKinds(options.extraKinds), askSettings(options));
    this.parts = { lanes, asks, roles, tokens: new PgTokens(db) };
  }

  /** Migrates (migratePgLanes) and returns the store; the PgDatabase stays its caller's to close. */
  static async open(db: PgDatabase, options: WorkQueueOptions = {}): Promise<PgWorkQueueStore> {
    await migratePgLanes(db);
    return new PgWorkQueueStore(db, options);
  }

  async grantRole(input: RoleGrantInput, actor: string): Promise<RoleGrant> {
    return this.parts.roles.grant(input, actor, async (q, laneId, repo) => requireLaneInRepo(laneId, (await this.parts.lanes.row(q, laneId)).repo, repo));
  }
  async seedOwner(repo: string, principal: string): Promise<void> {
    await this.parts.roles.seedOwner(repo, principal);
  }
  async scopesOn(laneId: string, principal: string): Promise<Scope[]> {
    return [...(await this.parts.lanes.rowWithScopes(this.db, laneId, principal)).scopes];
  }

  /** Does nothing: the PgDatabase's owner closes the pool. */
  close(): void {}
}
