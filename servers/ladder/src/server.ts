import { mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError, createToolServer, DEFAULT_OUTPUT_LIMITS, GitRepository, loadYamlFile, Roots, ToolError, type CommonOptions, type DirectCall, type ToolServer } from '@bulkhead/core';
import type { LadderCapabilities, LadderDeps, LadderTool } from './context.js';
import { toolEndpointRoute } from './http/tool-endpoint.js';
import { Ladder } from './ladder/ladder.js';
import { LADDER_POLICY_FILE, ladderPolicySchema, type LadderPolicy } from './policy.js';
import { openDatabase, systemClock, type Clock } from './store/database.js';
import { SqliteRungStore } from './store/rungs-sqlite.js';
import { SqliteWorkQueueStore } from './store/sqlite-work-queue.js';
import { askAnswer } from './tools/ask_answer.js';
import { askCancel } from './tools/ask_cancel.js';
import { askClaim } from './tools/ask_claim.js';
import { askClaimNext } from './tools/ask_claim_next.js';
import { askPost } from './tools/ask_post.js';
import { askQueryClaimable } from './tools/ask_query_claimable.js';
import { askRelease } from './tools/ask_release.js';
import { ladderRead } from './tools/ladder_read.js';
import { ladderReindex } from './tools/ladder_reindex.js';
import { ladderSearch } from './tools/ladder_search.js';
import { ladderTree } from './tools/ladder_tree.js';
import { ladderWriteRung } from './tools/ladder_write_rung.js';
import { laneAddRelated } from './tools/lane_add_related.js';
import { laneGet } from './tools/lane_get.js';
import { laneList } from './tools/lane_list.js';
import { laneSetState } from './tools/lane_set_state.js';
import { lanePropose } from './tools/lane_propose.js';
import { roleGrant } from './tools/role_grant.js';
import { roleList } from './tools/role_list.js';
import { roleRevoke } from './tools/role_revoke.js';

export const LADDER_VERSION = '0.1.0';

export const ladderTools: readonly LadderTool[] = [
  ladderRead,
  ladderTree,
  ladderSearch,
  ladderReindex,
  ladderWriteRung,
  lanePropose,
  laneGet,
  laneList,
  laneAddRelated,
  laneSetState,
  askPost,
  askQueryClaimable,
  askClaim,
  askClaimNext,
  askRelease,
  askAnswer,
  askCancel,
  roleGrant,
  roleRevoke,
  roleList,
];

/** One `ls-tree` of a large repository (ladder_tree) needs room; the timeout bounds a hostile one. */
const GIT_LIMITS = { timeoutMs: 30_000, maxOutputBytes: 256 * 1024 * 1024 };

export type LadderServerOptions = Pick<CommonOptions, 'roots' | 'controlDir' | 'gate' | 'audit'> & {
  /** Overrides ladder_policy.yaml (tests build policies in code). */
  readonly policy?: LadderPolicy;
  /** Time for leases and history (tests move it by hand). */
  readonly clock?: Clock;
};

export function loadLadderPolicy(controlDir: string): LadderPolicy {
  return loadYamlFile(controlDir, LADDER_POLICY_FILE, ladderPolicySchema).value;
}

/** The caller over stdio: the policy's actor, else the OS user running the server. */
export function stdioPrincipal(policy: LadderPolicy): string {
  if (policy.actor !== undefined) return policy.actor;
  try {
    return userInfo().username;
  } catch {
    throw new ConfigError(`the OS user has no name to act as; set actor in ${LADDER_POLICY_FILE}`, LADDER_POLICY_FILE);
  }
}

export function ladderDatabasePath(controlDir: string, policy: LadderPolicy): string {
  return resolve(controlDir, policy.database);
}

interface OpenedLadder {
  readonly deps: LadderDeps;
  readonly policy: LadderPolicy;
  /** Who calls act as when their transport names nobody: the policy's actor. */
  readonly operator: string;
  close(): void;
}

/**
 * The stores and the git repository of the ladder, for any transport: rungs of the git repository
 * under the first root (or `repo.root`), lanes and asks of any repository, on one SQLite file. The
 * first stdio actor to serve a default repository that has no owner becomes its owner, so a fresh
 * install can grant roles without a bootstrap step, while later servers on the same file (other
 * agents) do not.
 */
async function openLadder(options: LadderServerOptions): Promise<OpenedLadder> {
  const policy = options.policy ?? loadLadderPolicy(options.controlDir);
  const gitRoot = policy.repo.root !== undefined ? resolve(options.roots[0]!, policy.repo.root) : options.roots[0]!;
  const paths = new Roots([...options.roots, gitRoot], { controlDir: options.controlDir, denyRead: [] });
  const defaultRepo = policy.repo.name ?? `local/${basename(gitRoot)}`;
  const operator = stdioPrincipal(policy);
  const clock = options.clock ?? systemClock;

  const file = ladderDatabasePath(options.controlDir, policy);
  mkdirSync(dirname(file), { recursive: true });
  const db = openDatabase(file);
  const store = new SqliteWorkQueueStore(db, { leaseMs: policy.lease_ms, maxAttempts: policy.max_attempts, extraKinds: policy.extra_kinds }, clock);
  const owners = (await store.listRoles(defaultRepo)).filter((grant) => grant.role === 'owner');
  if (owners.length === 0) await store.seedOwner(defaultRepo, operator);

  const deps: LadderDeps = {
    store,
    ladder: new Ladder(new SqliteRungStore(db, clock)),
    defaultRepo,
    async openRepository(repo, signal) {
      if (repo !== defaultRepo) throw new ToolError(`this server keeps rungs only for ${defaultRepo}; ${repo} has no git repository here — leave repo out or use ${defaultRepo}`, 'not_found');
      return { name: repo, git: await GitRepository.open(paths, gitRoot, GIT_LIMITS), signal };
    },
  };
  return { deps, operator, policy, close: () => store.close() };
}

/**
 * The ladder server. Over stdio every call acts as the policy's actor. Over HTTP every `/mcp`
 * request needs a bearer token: a ladder token (`bulkhead-ladder token create`) acts as its actor,
 * the `--token-file` token as the policy's actor; zz's tool endpoint, beside `/mcp`, takes ladder
 * tokens only. Gated by a gateway, the server adds nothing to HTTP: the gateway reaches it over
 * MCP, and an endpoint beside it would answer calls no gate had seen.
 */
export async function createLadderServer(options: LadderServerOptions): Promise<ToolServer> {
  const { deps, operator, policy, close } = await openLadder(options);
  const ownHttp = options.gate.kind === 'self';
  return createToolServer<LadderCapabilities>({
    namespace: 'ladder',
    version: LADDER_VERSION,
    instructions: `The Ladder (summaries of ${deps.defaultRepo}'s paths anchored to commits, with freshness) and Lanes and Asks (a claimable work queue). You act as the actor your bearer token was issued to, or ${operator} without one. repo defaults to ${deps.defaultRepo}.`,
    tools: ladderTools,
    policy,
    capabilities: { ...deps, operator },
    controlDir: options.controlDir,
    gate: options.gate,
    audit: options.audit,
    limits: DEFAULT_OUTPUT_LIMITS,
    ...(ownHttp ? { http: (call: DirectCall) => ({ routes: [toolEndpointRoute(call, policy.public_read)], verifyToken: (token: string) => deps.store.verifyToken(token) }) } : {}),
    onClose: async () => close(),
  });
}
