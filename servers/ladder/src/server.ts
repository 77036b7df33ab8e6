import { userInfo } from 'node:os';
import { basename, resolve } from 'node:path';
import { ConfigError, createToolServer, DEFAULT_OUTPUT_LIMITS, errorMessage, GitRepository, loadYamlFile, Roots, ToolError, type CommonOptions, type DirectCall, type ToolServer } from '@bulkhead/core';
import type { LadderCapabilities, LadderDeps, LadderTool } from './context.js';
import { toolEndpointRoute } from './http/tool-endpoint.js';
import { Ladder } from './ladder/ladder.js';
import { LADDER_POLICY_FILE, ladderPolicySchema, type LadderPolicy } from './policy.js';
import type { Clock } from './store/database.js';
import { ladderDatabase, openLadderStores } from './store/open-stores.js';
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

/** The database file a SQLite policy names (for a PostgreSQL policy, see ladderDatabase). */
export function ladderDatabasePath(controlDir: string, policy: LadderPolicy): string {
  return resolve(controlDir, policy.database);
}

interface OpenedLadder {
  readonly deps: LadderDeps;
  readonly policy: LadderPolicy;
  /** Who calls act as when their transport names nobody: the policy's actor. */
  readonly operator: string;
  close(): Promise<void>;
}

/**
 * The stores and the git repository of the ladder, for any transport: rungs of the git repository
 * under the first root (or `repo.root`), lanes and asks of any repository, in the database the
 * policy names (see openLadderStores: a SQLite file opened by the first call that needs it, so
 * starting or listing the tools makes no file; a PostgreSQL database connected and migrated now,
 * so a server that cannot reach it does not start). The first stdio actor to serve a call on a
 * default repository that has no owner becomes its owner, so a fresh install can grant roles
 * without a bootstrap step, while later servers on the same database (other agents) do not.
 */
async function openLadder(options: LadderServerOptions): Promise<OpenedLadder> {
  const policy = options.policy ?? loadLadderPolicy(options.controlDir);
  const gitRoot = policy.repo.root !== undefined ? resolve(options.roots[0]!, policy.repo.root) : options.roots[0]!;
  const paths = new Roots([...options.roots, gitRoot], { controlDir: options.controlDir, denyRead: [] });
  const defaultRepo = policy.repo.name ?? `local/${basename(gitRoot)}`;
  const operator = stdioPrincipal(policy);

  const stores = await openLadderStores(ladderDatabase(options.controlDir, policy), {
    workQueue: { leaseMs: policy.lease_ms, maxAttempts: policy.max_attempts, extraKinds: policy.extra_kinds },
    clock: options.clock,
    prepare: async ({ work }) => {
      const owners = (await work.listRoles(defaultRepo)).filter((grant) => grant.role === 'owner');
      if (owners.length === 0) await work.seedOwner(defaultRepo, operator);
    },
  });

  const deps: LadderDeps = {
    store: stores.work,
    ladder: new Ladder(stores.rungs),
    defaultRepo,
    async openRepository(repo, signal) {
      if (repo !== defaultRepo) throw new ToolError(`this server keeps rungs only for ${defaultRepo}; ${repo} has no git repository here — leave repo out or use ${defaultRepo}`, 'not_found');
      return { name: repo, git: await GitRepository.open(paths, gitRoot, GIT_LIMITS), signal };
    },
  };
  return { deps, operator, policy, close: () => stores.close() };
}

/**
 * A bearer token's actor. The database is opened by the first request that needs it, which may be
 * this check, so a file that cannot be opened fails here: its details go to the server log, never
 * into the HTTP answer.
 */
async function verifyQuietly(store: LadderDeps['store'], token: string): Promise<string | undefined> {
  try {
    return await store.verifyToken(token);
  } catch (error) {
    process.stderr.write(`bulkhead-ladder: a bearer token could not be checked: ${errorMessage(error)}\n`);
    throw new Error('the ladder database cannot be read; the server log has the details');
  }
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
  try {
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
      ...(ownHttp ? { http: (call: DirectCall) => ({ routes: [toolEndpointRoute(call, policy.public_read)], verifyToken: (token: string) => verifyQuietly(deps.store, token) }) } : {}),
      onClose: close,
    });
  } catch (error) {
    // A server that never started still ends its pool, or the process would wait on it.
    await close();
    throw error;
  }
}
