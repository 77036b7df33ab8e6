import { z } from 'zod';
import type { Answer, AskKindInput, Scope } from './ask-kinds.js';
import { ANSWERS } from './ask-kinds.js';

/**
 * The Lanes, Asks, roles and tokens store behind the ladder tools. Every method is async although
 * the SQLite backend is synchronous underneath: a PostgreSQL backend for teams that outgrow one
 * machine must await the network, and an async interface lets it drop in without changing callers.
 * The price on SQLite is one resolved promise per call, which is noise next to a write transaction.
 *
 * `actor` is always the caller's authenticated identity (from the stdio config or the bearer
 * token); the transport checks that any `actor`/`from` argument equals it before calling.
 * Refusals are `ToolError`s whose message says what to do next.
 */
export interface WorkQueueStore extends LaneStore, AskStore, RoleStore, TokenStore {
  close(): void;
}

export const LANE_STATES = ['proposed', 'active', 'paused', 'done', 'abandoned'] as const;
export type LaneState = (typeof LANE_STATES)[number];

export const ASK_STATES = ['open', 'claimed', 'answered', 'cancelled', 'expired'] as const;
export type AskState = (typeof ASK_STATES)[number];

export const ROLES = ['owner', 'coordinator', 'maintainer', 'contributor'] as const;
export type Role = (typeof ROLES)[number];

/** 0 is the most urgent. */
const priority = z.number().int().min(0).max(9);
const laneId = z.string().max(15).regex(/^lane-[0-9a-f]{10}$/, 'a lane id looks like lane-0123456789');
const askId = z.string().max(14).regex(/^ask-[0-9a-f]{10}$/, 'an ask id looks like ask-0123456789');
const repo = z.string().min(1).max(200);
const principal = z.string().min(1).max(200);

export const proposeLaneInput = z
  .object({
    repo,
    title: z.string().min(1).max(200),
    goal: z.string().max(10_000).default(''),
    paths: z.array(z.string().min(1).max(500)).max(100).default([]),
    priority: priority.default(5),
  })
  .strict();

export const postAskInput = z
  .object({
    lane_id: laneId,
    kind: z.string().min(1).max(64),
    title: z.string().min(1).max(200),
    body: z.string().max(100_000).default(''),
    payload: z.json().default(null),
    priority: priority.default(5),
    depends_on: z.array(askId).max(100).default([]),
    assignee: principal.optional(),
    idempotency_key: z.string().min(1).max(200).optional(),
    max_attempts: z.number().int().min(1).max(100).optional(),
  })
  .strict();

export const claimOptions = z
  .object({
    /** Lease length; the store's default (15 minutes) when absent. */
    lease_seconds: z.number().int().min(1).max(86_400).optional(),
  })
  .strict();

export const answerInput = z
  .object({
    ask_id: askId,
    fence: z.number().int().min(1),
    answer: z.enum(ANSWERS),
    note: z.string().max(100_000).optional(),
  })
  .strict();

export const roleGrantInput = z
  .object({
    repo,
    principal,
    role: z.enum(ROLES),
    /** Coordinator grants need a lane; maintainer grants are repo-wide without one. */
    lane_id: laneId.optional(),
  })
  .strict()
  .refine((grant) => grant.role !== 'coordinator' || grant.lane_id !== undefined, {
    message: 'a coordinator role belongs to one lane: give lane_id',
  })
  .refine((grant) => (grant.role !== 'owner' && grant.role !== 'contributor') || grant.lane_id === undefined, {
    message: 'owner and contributor roles are repo-wide: leave lane_id out',
  });

export const idSchemas = { laneId, askId, repo, principal };

export type ProposeLaneInput = z.input<typeof proposeLaneInput>;
export type PostAskInput = z.input<typeof postAskInput>;
export type ClaimOptions = z.input<typeof claimOptions>;
export type AnswerInput = z.input<typeof answerInput>;
export type RoleGrantInput = z.input<typeof roleGrantInput>;

export interface HistoryEvent {
  seq: number;
  at: string;
  actor: string;
  type: string;
  detail: Record<string, unknown>;
}

export interface Lane {
  id: string;
  repo: string;
  title: string;
  goal: string;
  paths: string[];
  priority: number;
  state: LaneState;
  coordinator: string;
  related_lanes: string[];
  created_at: string;
  updated_at: string;
}

export interface LaneWithHistory extends Lane {
  history: HistoryEvent[];
}

export interface Ask {
  id: string;
  lane_id: string;
  kind: string;
  title: string;
  body: string;
  payload: unknown;
  priority: number;
  posted_by: string;
  assignee: string | null;
  idempotency_key: string | null;
  state: AskState;
  /** The current claim, while `state` is `claimed` (the lease may have lapsed: see `lease_until`). */
  holder: string | null;
  lease_until: string | null;
  /** Grows on every new claim; answers and releases must carry the current one. */
  fence: number;
  attempts: number;
  max_attempts: number;
  answer: Answer | null;
  answer_note: string | null;
  answered_by: string | null;
  depends_on: string[];
  /** Dependencies not yet answered. */
  waiting_on: string[];
  /** Dependencies denied, cancelled or expired: this ask cannot become claimable by itself. */
  blocked_by: string[];
  created_at: string;
  updated_at: string;
}

export interface AskWithHistory extends Ask {
  history: (HistoryEvent & { fence: number | null })[];
}

export interface PostedAsk {
  ask: Ask;
  /** True when an earlier post by the same actor with the same idempotency key was returned. */
  replayed: boolean;
}

export interface ClaimableAsk {
  ask: Ask;
  /** Why the caller may claim it, in words. */
  why: string;
}

export interface Claim {
  ask: Ask;
  fence: number;
  lease_until: string;
  /** True when the caller already held the lease and only extended it (the fence is unchanged). */
  renewed: boolean;
}

export interface RoleGrant {
  repo: string;
  principal: string;
  role: Role;
  lane_id: string | null;
  granted_by: string;
  granted_at: string;
}

export interface TokenInfo {
  id: string;
  actor: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedToken extends TokenInfo {
  /** Shown once; only its SHA-256 is stored. */
  secret: string;
}

export interface LaneStore {
  proposeLane(input: ProposeLaneInput, actor: string): Promise<LaneWithHistory>;
  /**
   * The id of the repository's standing lane, zz's `_repo`: made when missing if `createdBy` is
   * given (a writing call), else only looked up; refused for a repository with no owner.
   */
  standingLaneId(repo: string, createdBy?: string): Promise<string>;
  getLane(laneId: string): Promise<LaneWithHistory>;
  listLanes(repo: string, options?: { state?: LaneState; withHistory?: boolean }): Promise<(Lane | LaneWithHistory)[]>;
  setLaneState(laneId: string, state: LaneState, actor: string, reason?: string): Promise<LaneWithHistory>;
  /** Records `relatedLaneId` (a lane created from this one) in the lane's `related_lanes`. */
  addRelated(laneId: string, relatedLaneId: string, actor: string): Promise<LaneWithHistory>;
}

export interface AskStore {
  postAsk(input: PostAskInput, actor: string): Promise<PostedAsk>;
  /** Adds dependencies to an open ask; refused when that would close a cycle. */
  addDependencies(askId: string, dependsOn: string[], actor: string): Promise<Ask>;
  getAsk(askId: string): Promise<AskWithHistory>;
  listAsks(laneId: string, options?: { state?: AskState; limit?: number }): Promise<Ask[]>;
  queryClaimable(laneId: string, actor: string, options?: { kind?: string; limit?: number }): Promise<ClaimableAsk[]>;
  claim(askId: string, actor: string, options?: ClaimOptions): Promise<Claim>;
  /** Claims the most urgent claimable ask in one statement; undefined when none is claimable. */
  claimNext(laneId: string, actor: string, options?: ClaimOptions & { kind?: string }): Promise<Claim | undefined>;
  release(askId: string, fence: number, actor: string): Promise<Ask>;
  answer(input: AnswerInput, actor: string): Promise<Ask>;
  cancel(askId: string, actor: string, reason?: string): Promise<Ask>;
}

export interface RoleStore {
  grantRole(input: RoleGrantInput, actor: string): Promise<RoleGrant>;
  revokeRole(input: RoleGrantInput, actor: string): Promise<boolean>;
  listRoles(repo: string, options?: { principal?: string; laneId?: string }): Promise<RoleGrant[]>;
  /** Makes `principal` an owner of `repo` without a granting owner: for the config and the CLI, never a tool. */
  seedOwner(repo: string, principal: string): Promise<void>;
  /** The scopes `principal` holds on a lane (contributor always). */
  scopesOn(laneId: string, principal: string): Promise<Scope[]>;
}

export interface TokenStore {
  createToken(actor: string): Promise<CreatedToken>;
  /** The token's actor, or undefined for an unknown or revoked secret. */
  verifyToken(secret: string): Promise<string | undefined>;
  revokeToken(id: string): Promise<boolean>;
  listTokens(actor?: string): Promise<TokenInfo[]>;
}

export interface WorkQueueOptions {
  /** Default lease of a claim; 15 minutes. */
  leaseMs?: number;
  /** Default failed attempts before an ask expires; 5. */
  maxAttempts?: number;
  /** Kinds declared beyond the built-in ones (from ladder_policy.yaml). */
  extraKinds?: readonly AskKindInput[];
}
