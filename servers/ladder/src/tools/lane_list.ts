import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool, repoField, repoOf } from '../context.js';
import { laneResult, renderLane } from '../results.js';
import { LANE_STATES } from '../store/work-queue.js';

const input = z.strictObject({
  repo: repoField,
  state: z.enum(LANE_STATES).optional().describe('Only lanes in this state'),
  with_history: z.boolean().default(false).describe('Include each lane\'s history'),
});

const output = z.object({ lanes: z.array(laneResult) });

export const laneList = defineLadderTool({
  name: 'lane_list',
  title: 'Lanes of a repository',
  description: 'The lanes of a repository, optionally only those in one state (proposed, active, paused, done, abandoned).',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async call(deps, _principal, args) {
    const lanes = await deps.store.listLanes(repoOf(deps, args.repo), { ...(args.state ? { state: args.state } : {}), withHistory: args.with_history });
    return { lanes };
  },
  render: ({ lanes }) => (lanes.length === 0 ? 'no lanes' : lanes.map(renderLane).join('\n\n')),
});
