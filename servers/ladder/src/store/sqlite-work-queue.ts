import { AskKinds } from './ask-kinds.js';
import type { Scope } from './ask-kinds.js';
import { askSettings } from './ask-rules.js';
import { SqliteAsks } from './asks.js';
import { ComposedWorkQueueStore } from './composed-work-queue.js';
import type { Clock, Db } from './database.js';
import { systemClock } from './database.js';
import { SqliteLanes } from './lanes.js';
import { migrateLanes } from './lanes-schema.js';
import { requireLaneInRepo } from './role-rules.js';
import { SqliteRoles } from './roles.js';
import { SqliteTokens } from './tokens.js';
import type { RoleGrant, RoleGrantInput, WorkQueueOptions } from './work-queue.js';

/**
 * The work queue on one SQLite file (shared with the rungs store). Each module owns its prepared
 * statements; this class only wires them together (ComposedWorkQueueStore adapts their
 * synchronous calls to the async interface). Several processes may open the same file: every
 * write is a BEGIN IMMEDIATE transaction.
 */
export class SqliteWorkQueueStore extends ComposedWorkQueueStore {
  protected readonly parts: { lanes: SqliteLanes; asks: SqliteAsks; roles: SqliteRoles; tokens: SqliteTokens };

  constructor(private readonly db: Db, options: WorkQueueOptions = {}, clock: Clock = systemClock) {
    super();
    migrateLanes(db, clock());
    const roles = new SqliteRoles(db, clock);
    const lanes = new SqliteLanes(db, clock, roles);
    const asks = new SqliteAsks(db, clock, lanes, roles, new AskKinds(options.extraKinds), askSettings(options));
    this.parts = { lanes, asks, roles, tokens: new SqliteTokens(db, clock) };
  }

  async grantRole(input: RoleGrantInput, actor: string): Promise<RoleGrant> {
    return this.parts.roles.grant(input, actor, (laneId, repo) => requireLaneInRepo(laneId, this.parts.lanes.row(laneId).repo, repo));
  }
  async seedOwner(repo: string, principal: string): Promise<void> {
    this.parts.roles.seedOwner(repo, principal);
  }
  async scopesOn(laneId: string, principal: string): Promise<Scope[]> {
    const lane = this.parts.lanes.row(laneId);
    return [...this.parts.roles.scopes(lane.repo, lane.id, principal)];
  }

  close(): void {
    this.db.close();
  }
}
