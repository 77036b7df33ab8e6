import type { Scope } from './ask-kinds.js';
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
  WorkQueueStore,
} from './work-queue.js';

/** A value, or a promise of it: the SQLite parts answer synchronously, the PostgreSQL parts after a round trip. */
type Awaitable<T> = T | Promise<T>;

/** What each backend's lanes, asks, roles and tokens modules offer, under the same names. */
export interface WorkQueueParts {
  readonly lanes: {
    propose(input: ProposeLaneInput, actor: string): Awaitable<LaneWithHistory>;
    standingLaneId(repo: string, createdBy?: string): Awaitable<string>;
    get(laneId: string): Awaitable<LaneWithHistory>;
    list(repo: string, options?: { state?: LaneState; withHistory?: boolean }): Awaitable<(Lane | LaneWithHistory)[]>;
    setState(laneId: string, state: LaneState, actor: string, reason?: string): Awaitable<LaneWithHistory>;
    addRelated(laneId: string, relatedLaneId: string, actor: string): Awaitable<LaneWithHistory>;
  };
  readonly asks: {
    post(input: PostAskInput, actor: string): Awaitable<PostedAsk>;
    addDependencies(askId: string, dependsOn: string[], actor: string): Awaitable<Ask>;
    get(askId: string): Awaitable<AskWithHistory>;
    list(laneId: string, options?: { state?: AskState; limit?: number }): Awaitable<Ask[]>;
    queryClaimable(laneId: string, actor: string, options?: { kind?: string; limit?: number }): Awaitable<ClaimableAsk[]>;
    claim(askId: string, actor: string, options?: ClaimOptions): Awaitable<Claim>;
    claimNext(laneId: string, actor: string, options?: ClaimOptions & { kind?: string }): Awaitable<Claim | undefined>;
    release(askId: string, fence: number, actor: string): Awaitable<Ask>;
    answer(input: AnswerInput, actor: string): Awaitable<Ask>;
    cancel(askId: string, actor: string, reason?: string): Awaitable<Ask>;
  };
  readonly roles: {
    revoke(input: RoleGrantInput, actor: string): Awaitable<boolean>;
    list(repo: string, filter?: { principal?: string; laneId?: string }): Awaitable<RoleGrant[]>;
  };
  readonly tokens: {
    create(actor: string): Awaitable<CreatedToken>;
    verify(secret: string): Awaitable<string | undefined>;
    revokeById(id: string): Awaitable<boolean>;
    list(actor?: string): Awaitable<TokenInfo[]>;
  };
}

/**
 * The WorkQueueStore interface over a backend's parts: one place wires every method, so the
 * SQLite and PostgreSQL stores differ only where their backends do (granting a lane role, seeding
 * an owner, scopes, closing).
 */
export abstract class ComposedWorkQueueStore implements WorkQueueStore {
  protected abstract readonly parts: WorkQueueParts;

  abstract grantRole(input: RoleGrantInput, actor: string): Promise<RoleGrant>;
  abstract seedOwner(repo: string, principal: string): Promise<void>;
  abstract scopesOn(laneId: string, principal: string): Promise<Scope[]>;
  abstract close(): void;

  async proposeLane(input: ProposeLaneInput, actor: string): Promise<LaneWithHistory> {
    return this.parts.lanes.propose(input, actor);
  }
  async standingLaneId(repo: string, createdBy?: string): Promise<string> {
    return this.parts.lanes.standingLaneId(repo, createdBy);
  }
  async getLane(laneId: string): Promise<LaneWithHistory> {
    return this.parts.lanes.get(laneId);
  }
  async listLanes(repo: string, options?: { state?: LaneState; withHistory?: boolean }): Promise<(Lane | LaneWithHistory)[]> {
    return this.parts.lanes.list(repo, options);
  }
  async setLaneState(laneId: string, state: LaneState, actor: string, reason?: string): Promise<LaneWithHistory> {
    return this.parts.lanes.setState(laneId, state, actor, reason);
  }
  async addRelated(laneId: string, relatedLaneId: string, actor: string): Promise<LaneWithHistory> {
    return this.parts.lanes.addRelated(laneId, relatedLaneId, actor);
  }

  async postAsk(input: PostAskInput, actor: string): Promise<PostedAsk> {
    return this.parts.asks.post(input, actor);
  }
  async addDependencies(askId: string, dependsOn: string[], actor: string): Promise<Ask> {
    return this.parts.asks.addDependencies(askId, dependsOn, actor);
  }
  async getAsk(askId: string): Promise<AskWithHistory> {
    return this.parts.asks.get(askId);
  }
  async listAsks(laneId: string, options?: { state?: AskState; limit?: number }): Promise<Ask[]> {
    return this.parts.asks.list(laneId, options);
  }
  async queryClaimable(laneId: string, actor: string, options?: { kind?: string; limit?: number }): Promise<ClaimableAsk[]> {
    return this.parts.asks.queryClaimable(laneId, actor, options);
  }
  async claim(askId: string, actor: string, options?: ClaimOptions): Promise<Claim> {
    return this.parts.asks.claim(askId, actor, options);
  }
  async claimNext(laneId: string, actor: string, options?: ClaimOptions & { kind?: string }): Promise<Claim | undefined> {
    return this.parts.asks.claimNext(laneId, actor, options);
  }
  async release(askId: string, fence: number, actor: string): Promise<Ask> {
    return this.parts.asks.release(askId, fence, actor);
  }
  async answer(input: AnswerInput, actor: string): Promise<Ask> {
    return this.parts.asks.answer(input, actor);
  }
  async cancel(askId: string, actor: string, reason?: string): Promise<Ask> {
    return this.parts.asks.cancel(askId, actor, reason);
  }

  async revokeRole(input: RoleGrantInput, actor: string): Promise<boolean> {
    return this.parts.roles.revoke(input, actor);
  }
  async listRoles(repo: string, options?: { principal?: string; laneId?: string }): Promise<RoleGrant[]> {
    return this.parts.roles.list(repo, options);
  }

  async createToken(actor: string): Promise<CreatedToken> {
    return this.parts.tokens.create(actor);
  }
  async verifyToken(secret: string): Promise<string | undefined> {
    return this.parts.tokens.verify(secret);
  }
  async revokeToken(id: string): Promise<boolean> {
    return this.parts.tokens.revokeById(id);
  }
  async listTokens(actor?: string): Promise<TokenInfo[]> {
    return this.parts.tokens.list(actor);
  }
}
