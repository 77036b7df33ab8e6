import { AskKinds, type Scope } from '../ask-kinds.js';
import { askSettings } from '../ask-rules.js';
import { requireLaneInRepo } from '../role-rules.js';
import type {
  AnswerInput,
  Ask,
  AskState,
  AskWithHistory,
  Claim,
  ClaimableAsk,
  ClaimOptions,
  CreatedToken,
  Lane,
  LaneState,
  LaneWithHistory,
  PostAskInput,
  PostedAsk,
  ProposeLaneInput,
  RoleGrant,
  RoleGrantInput,
  TokenInfo,
  WorkQueueOptions,
  WorkQueueStore,
} from '../work-queue.js';
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
export class PgWorkQueueStore implements WorkQueueStore {
  private readonly lanes: PgLanes;
  private readonly asks: PgAsks;
  private readonly roles: PgRoles;
  private readonly tokens: PgTokens;

  private constructor(private readonly db: PgDatabase, options: WorkQueueOptions) {
    this.roles = new PgRoles(db);
    this.lanes = new PgLanes(db, this.roles);
    this.asks = new PgAsks(db, this.lanes, this.roles, new AskKinds(options.extraKinds), askSettings(options));
    this.tokens = new PgTokens(db);
  }

  /** Migrates (migratePgLanes) and returns the store; the PgDatabase stays its caller's to close. */
  static async open(db: PgDatabase, options: WorkQueueOptions = {}): Promise<PgWorkQueueStore> {
    await migratePgLanes(db);
    return new PgWorkQueueStore(db, options);
  }

  async proposeLane(input: ProposeLaneInput, actor: string): Promise<LaneWithHistory> {
    return this.lanes.propose(input, actor);
  }
  async standingLaneId(repo: string, createdBy?: string): Promise<string> {
    return this.lanes.standingLaneId(repo, createdBy);
  }
  async getLane(laneId: string): Promise<LaneWithHistory> {
    return this.lanes.get(laneId);
  }
  async listLanes(repo: string, options?: { state?: LaneState; withHistory?: boolean }): Promise<(Lane | LaneWithHistory)[]> {
    return this.lanes.list(repo, options);
  }
  async setLaneState(laneId: string, state: LaneState, actor: string, reason?: string): Promise<LaneWithHistory> {
    return this.lanes.setState(laneId, state, actor, reason);
  }
  async addRelated(laneId: string, relatedLaneId: string, actor: string): Promise<LaneWithHistory> {
    return this.lanes.addRelated(laneId, relatedLaneId, actor);
  }

  async postAsk(input: PostAskInput, actor: string): Promise<PostedAsk> {
    return this.asks.post(input, actor);
  }
  async addDependencies(askId: string, dependsOn: string[], actor: string): Promise<Ask> {
    return this.asks.addDependencies(askId, dependsOn, actor);
  }
  async getAsk(askId: string): Promise<AskWithHistory> {
    return this.asks.get(askId);
  }
  async listAsks(laneId: string, options?: { state?: AskState; limit?: number }): Promise<Ask[]> {
    return this.asks.list(laneId, options);
  }
  async queryClaimable(laneId: string, actor: string, options?: { kind?: string; limit?: number }): Promise<ClaimableAsk[]> {
    return this.asks.queryClaimable(laneId, actor, options);
  }
  async claim(askId: string, actor: string, options?: ClaimOptions): Promise<Claim> {
    return this.asks.claim(askId, actor, options);
  }
  async claimNext(laneId: string, actor: string, options?: ClaimOptions & { kind?: string }): Promise<Claim | undefined> {
    return this.asks.claimNext(laneId, actor, options);
  }
  async release(askId: string, fence: number, actor: string): Promise<Ask> {
    return this.asks.release(askId, fence, actor);
  }
  async answer(input: AnswerInput, actor: string): Promise<Ask> {
    return this.asks.answer(input, actor);
  }
  async cancel(askId: string, actor: string, reason?: string): Promise<Ask> {
    return this.asks.cancel(askId, actor, reason);
  }

  async grantRole(input: RoleGrantInput, actor: string): Promise<RoleGrant> {
    return this.roles.grant(input, actor, async (q, laneId, repo) => requireLaneInRepo(laneId, (await this.lanes.row(q, laneId)).repo, repo));
  }
  async revokeRole(input: RoleGrantInput, actor: string): Promise<boolean> {
    return this.roles.revoke(input, actor);
  }
  async listRoles(repo: string, options?: { principal?: string; laneId?: string }): Promise<RoleGrant[]> {
    return this.roles.list(repo, options);
  }
  async seedOwner(repo: string, principal: string): Promise<void> {
    await this.roles.seedOwner(repo, principal);
  }
  async scopesOn(laneId: string, principal: string): Promise<Scope[]> {
    return [...(await this.lanes.rowWithScopes(this.db, laneId, principal)).scopes];
  }

  async createToken(actor: string): Promise<CreatedToken> {
    return this.tokens.create(actor);
  }
  async verifyToken(secret: string): Promise<string | undefined> {
    return this.tokens.verify(secret);
  }
  async revokeToken(id: string): Promise<boolean> {
    return this.tokens.revokeById(id);
  }
  async listTokens(actor?: string): Promise<TokenInfo[]> {
    return this.tokens.list(actor);
  }

  /** Does nothing: the PgDatabase's owner closes the pool. */
  close(): void {}
}
