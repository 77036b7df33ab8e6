import { AskKinds } from './ask-kinds.js';
import type { Scope } from './ask-kinds.js';
import { askSettings } from './ask-rules.js';
import { SqliteAsks } from './asks.js';
import type { Clock, Db } from './database.js';
import { systemClock } from './database.js';
import { SqliteLanes } from './lanes.js';
import { requireLaneInRepo } from './role-rules.js';
import { migrateLanes } from './lanes-schema.js';
import { SqliteRoles } from './roles.js';
import { SqliteTokens } from './tokens.js';
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
} from './work-queue.js';


/**
 * The work queue on one SQLite file (shared with the rungs store). Each module owns its prepared
 * statements; this class only wires them together and adapts their synchronous calls to the async
 * interface. Several processes may open the same file: every write is a BEGIN IMMEDIATE transaction.
 */
export class SqliteWorkQueueStore implements WorkQueueStore {
  private readonly lanes: SqliteLanes;
  private readonly asks: SqliteAsks;
  private readonly roles: SqliteRoles;
  private readonly tokens: SqliteTokens;

  constructor(private readonly db: Db, options: WorkQueueOptions = {}, clock: Clock = systemClock) {
    migrateLanes(db, clock());
    this.roles = new SqliteRoles(db, clock);
    this.lanes = new SqliteLanes(db, clock, this.roles);
    this.asks = new SqliteAsks(db, clock, this.lanes, this.roles, new AskKinds(options.extraKinds), askSettings(options));
    this.tokens = new SqliteTokens(db, clock);
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
    return this.roles.grant(input, actor, (laneId, repo) => {
      requireLaneInRepo(laneId, this.lanes.row(laneId).repo, repo);
    });
  }
  async revokeRole(input: RoleGrantInput, actor: string): Promise<boolean> {
    return this.roles.revoke(input, actor);
  }
  async listRoles(repo: string, options?: { principal?: string; laneId?: string }): Promise<RoleGrant[]> {
    return this.roles.list(repo, options);
  }
  async seedOwner(repo: string, principal: string): Promise<void> {
    this.roles.seedOwner(repo, principal);
  }
  async scopesOn(laneId: string, principal: string): Promise<Scope[]> {
    const lane = this.lanes.row(laneId);
    return [...this.roles.scopes(lane.repo, lane.id, principal)];
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

  close(): void {
    this.db.close();
  }
}
