import { ToolError, type BaseContext } from '@bulkhead/core';
import type { LadderDeps } from './context.js';
import { REPO_LANE } from './store/lanes.js';

/** Arguments that name a lane, whatever the tool. */
const LANE_ARGUMENTS = ['lane_id', 'related_lane_id'] as const;
/** Arguments that name an ask, whatever the tool. */
const ASK_ARGUMENTS = ['ask_id'] as const;

export interface CallShape {
  /** Who the call acts as: makes the `_repo` lane when a writing call is the first to name it. */
  readonly principal: string;
  /** Whether the tool has a `repo` argument. */
  readonly takesRepo: boolean;
  /** A reading call only looks the `_repo` lane up; it never makes it. */
  readonly reading: boolean;
}

/**
 * A call's arguments as its tool runs them, after validation and the permission gate. Over zz's
 * tool endpoint the URL names the repository: `repo` is the URL's (another one is refused), and a
 * lane or an ask named by id must belong to it (refused as not found there), so a token cannot
 * reach another repository's queue through this one's address. `_repo` becomes the id of the
 * standing lane of the call's repository.
 */
export async function scopedArguments(ctx: LadderDeps & Pick<BaseContext, 'routeParams'>, args: Record<string, unknown>, shape: CallShape): Promise<Record<string, unknown>> {
  const urlRepo = ctx.routeParams['repo'];
  let scoped = args;
  if (urlRepo !== undefined && shape.takesRepo) {
    if (args['repo'] !== undefined && args['repo'] !== urlRepo) throw new ToolError(`repo is ${String(args['repo'])} but the URL names ${urlRepo}; leave repo out`, 'invalid_arguments');
    scoped = { ...args, repo: urlRepo };
  }
  const repo = typeof scoped['repo'] === 'string' ? scoped['repo'] : (urlRepo ?? ctx.defaultRepo);
  const naming = LANE_ARGUMENTS.filter((name) => scoped[name] === REPO_LANE);
  if (naming.length > 0) {
    const id = await ctx.store.standingLaneId(repo, shape.reading ? undefined : shape.principal);
    scoped = { ...scoped, ...Object.fromEntries(naming.map((name) => [name, id])) };
  }
  if (urlRepo !== undefined) await requireInRepository(ctx.store, scoped, urlRepo);
  return scoped;
}

async function requireInRepository(store: LadderDeps['store'], args: Record<string, unknown>, repo: string): Promise<void> {
  for (const name of LANE_ARGUMENTS) {
    const laneId = args[name];
    if (typeof laneId === 'string' && (await store.getLane(laneId)).repo !== repo) throw new ToolError(`no lane ${laneId} in ${repo}`, 'not_found');
  }
  for (const name of ASK_ARGUMENTS) {
    const askId = args[name];
    if (typeof askId === 'string' && (await store.getLane((await store.getAsk(askId)).lane_id)).repo !== repo) throw new ToolError(`no ask ${askId} in ${repo}`, 'not_found');
  }
}
