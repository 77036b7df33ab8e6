import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, laneRef, WRITES_LOCAL } from '../context.js';
import { laneResult, renderLane } from '../results.js';

const input = z.strictObject({
  lane_id: laneRef,
  related_lane_id: laneRef.describe('A lane created from this one'),
  actor: actorField,
});

const output = z.object({ lane: laneResult });

export const laneAddRelated = defineLadderTool({
  name: 'lane_add_related',
  title: 'Relate a lane',
  description: "Records a lane created from this one in its related_lanes, and in its history.",
  input,
  output,
  // Relating the same lane twice records it once.
  annotations: { ...WRITES_LOCAL, idempotentHint: true },
  risk: 'medium',
  async call(deps, principal, args) {
    checkSelf(principal, args.actor, 'actor');
    return { lane: await deps.store.addRelated(args.lane_id, args.related_lane_id, principal) };
  },
  render: ({ lane }) => renderLane(lane),
});
