import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, laneRef, WRITES_LOCAL } from '../context.js';
import { laneResult, renderLane } from '../results.js';
import { LANE_STATES } from '../store/work-queue.js';

const input = z.strictObject({
  lane_id: laneRef,
  state: z.enum(LANE_STATES).describe('proposed → active or abandoned; active ⇄ paused; active or paused → done or abandoned; done and abandoned are final'),
  reason: z.string().max(2000).optional().describe('Why, kept in the lane\'s history'),
  actor: actorField,
});

const output = z.object({ lane: laneResult });

export const laneSetState = defineLadderTool({
  name: 'lane_set_state',
  title: 'Move a lane to another state',
  description: "Activates, pauses, resumes, finishes or abandons a lane (its coordinators decide). A paused lane hands out no asks; the change is kept in the lane's history.",
  input,
  output,
  annotations: { ...WRITES_LOCAL, idempotentHint: true },
  risk: 'medium',
  async call(deps, principal, args) {
    checkSelf(principal, args.actor, 'actor');
    return { lane: await deps.store.setLaneState(args.lane_id, args.state, principal, args.reason) };
  },
  render: ({ lane }) => renderLane(lane),
});
