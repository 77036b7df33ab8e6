import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool, laneRef } from '../context.js';
import { laneResult, renderLane } from '../results.js';

const input = z.strictObject({ lane_id: laneRef });

const output = z.object({ lane: laneResult });

export const laneGet = defineLadderTool({
  name: 'lane_get',
  title: 'A lane with its history',
  description: 'A lane (title, goal, paths, priority, state, coordinator, related lanes) with every event of its history.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  call: async (deps, _principal, args) => ({ lane: await deps.store.getLane(args.lane_id) }),
  render: ({ lane }) => renderLane(lane),
});
