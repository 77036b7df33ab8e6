import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, repoField, repoOf, WRITES_LOCAL } from '../context.js';
import { laneResult, renderLane } from '../results.js';
import { proposeLaneInput } from '../store/work-queue.js';

const input = proposeLaneInput.extend({ repo: repoField, actor: actorField });

const output = z.object({ lane: laneResult });

export const lanePropose = defineLadderTool({
  name: 'lane_propose',
  title: 'Propose a lane',
  description: 'Opens a lane: a stream of work in one repository (title, goal, optional path globs, priority 0 most urgent). You become its coordinator.',
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, { actor, repo, ...lane }) {
    checkSelf(principal, actor, 'actor');
    return { lane: await deps.store.proposeLane({ ...lane, repo: repoOf(deps, repo) }, principal) };
  },
  render: ({ lane }) => `proposed ${renderLane(lane)}`,
});
